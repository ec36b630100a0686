"""A version-2 SQL database (span tables keyed by project, trace id and span id), for the migration tests.

The DDL is what version 2 created, frozen here; the rows are built by today's row builders with the span ids
dropped, which is exactly what version 2 wrote (the columns are unchanged otherwise).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import sqlalchemy as sa

from passhat.collector.store import NormalizedSpan, SpanBatch, Store, WriteResult
from passhat.collector.store.sql._rows import (
    SPAN_COLUMNS,
    span_values,
    state_write_values,
    ticket_values,
    tool_call_values,
)
from passhat.collector.store.sql._schema import MIGRATIONS, schema_versions
from passhat.collector.store.sql._store import SqlStore
from tests.collector.store.store_contract import ticket_span, tool_span

V2_TABLES = (
    "CREATE TABLE spans (project VARCHAR(200) NOT NULL, trace_id VARCHAR(32) NOT NULL, span_id VARCHAR(16) NOT NULL,"
    " parent_span_id VARCHAR(16), name TEXT NOT NULL, operation VARCHAR(32) NOT NULL, kind INTEGER NOT NULL,"
    " status VARCHAR(8) NOT NULL, status_message TEXT, service_name TEXT, scope_name TEXT, start_ns BIGINT NOT NULL,"
    " end_ns BIGINT NOT NULL, attributes TEXT NOT NULL, resource_attributes TEXT NOT NULL, events TEXT NOT NULL,"
    " PRIMARY KEY (project, trace_id, span_id))",
    "CREATE TABLE tickets (project VARCHAR(200) NOT NULL, trace_id VARCHAR(32) NOT NULL,"
    " ticket_id VARCHAR(400) NOT NULL, span_id VARCHAR(16) NOT NULL, task_type VARCHAR(200) NOT NULL,"
    " source VARCHAR(16) NOT NULL, start_ns BIGINT NOT NULL, end_ns BIGINT NOT NULL, day VARCHAR(10) NOT NULL,"
    " ticket_hash BIGINT NOT NULL, status VARCHAR(8) NOT NULL, agent_name TEXT, conversation_id TEXT, intent TEXT,"
    " domain TEXT, outcome TEXT, replay_run_id TEXT, trial_attempt INTEGER, service_name TEXT,"
    " PRIMARY KEY (project, trace_id, ticket_id))",
    "CREATE INDEX ix_tickets_project_type_start ON tickets (project, task_type, start_ns)",
    "CREATE INDEX ix_tickets_project_start ON tickets (project, start_ns)",
    "CREATE INDEX ix_tickets_project_ticket ON tickets (project, ticket_id)",
    "CREATE TABLE tool_calls (project VARCHAR(200) NOT NULL, trace_id VARCHAR(32) NOT NULL,"
    " span_id VARCHAR(16) NOT NULL, parent_span_id VARCHAR(16), tool_name TEXT NOT NULL, outcome VARCHAR(8) NOT NULL,"
    " start_ns BIGINT NOT NULL, end_ns BIGINT NOT NULL, call_id TEXT, tool_type TEXT, error_type TEXT,"
    " error_message TEXT, arguments TEXT, result TEXT, PRIMARY KEY (project, trace_id, span_id))",
    "CREATE TABLE state_writes (project VARCHAR(200) NOT NULL, trace_id VARCHAR(32) NOT NULL,"
    " span_id VARCHAR(16) NOT NULL, seq INTEGER NOT NULL, time_ns BIGINT NOT NULL, table_name TEXT NOT NULL,"
    " key TEXT NOT NULL, op VARCHAR(16) NOT NULL, before TEXT, after TEXT, changed TEXT NOT NULL, rowcount INTEGER,"
    " PRIMARY KEY (project, trace_id, span_id, seq))",
)
_SPAN = ", ".join(SPAN_COLUMNS[1:])  # version 2's span columns: today's without the span id
_TOOL = "project, trace_id, span_id, parent_span_id, tool_name, outcome, start_ns, end_ns, call_id, tool_type"
_TOOL += ", error_type, error_message, arguments, result"
_WRITE = "project, trace_id, span_id, seq, time_ns, table_name, key, op, before, after, changed, rowcount"


def _insert(conn: sa.Connection, table: str, columns: str, rows: list[tuple[object, ...]]) -> None:
    names = [name.strip() for name in columns.split(",")]
    marks = ", ".join(f":{name}" for name in names)
    statement = sa.text(f"INSERT INTO {table} ({columns}) VALUES ({marks})")
    for row in rows:
        conn.execute(statement, dict(zip(names, row, strict=True)))


def create_v2_database(url: str, project: str, spans: Sequence[NormalizedSpan]) -> None:
    """A database as version 2 left it, holding `spans` (one trace's spans; its ticket is its ticket span)."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            MIGRATIONS[0](conn)  # today's tables; the span tables are then replaced by version 2's
            for table in ("spans", "tickets", "tool_calls", "state_writes"):
                conn.execute(sa.text(f"DROP TABLE {table}"))
            for ddl in V2_TABLES:
                conn.execute(sa.text(ddl))
            schema_versions.create(conn, checkfirst=True)
            conn.execute(
                schema_versions.insert(), [{"version": 1, "applied_at_us": 0}, {"version": 2, "applied_at_us": 0}]
            )
            conn.execute(sa.text("INSERT INTO projects (name, created_at_us) VALUES (:name, 0)"), {"name": project})
            _insert(conn, "spans", _SPAN, [span_values(project, span)[1:] for span in spans])
            tools = [tool_call_values(project, span.tool_call)[1:] for span in spans if span.tool_call is not None]
            _insert(conn, "tool_calls", _TOOL, tools)
            _insert(
                conn,
                "state_writes",
                _WRITE,
                [state_write_values(project, w)[1:] for s in spans for w in s.state_writes],
            )
            traffic: Counter[tuple[str, str, str]] = Counter()
            for span in spans:
                if span.ticket is not None:
                    row = ticket_values(project, span.ticket)
                    del row["span_ref"]
                    _insert(conn, "tickets", ", ".join(row), [tuple(row.values())])
                    traffic[(row["day"], row["task_type"], row["source"])] += 1
            _insert(
                conn,
                "traffic_daily",
                "project, day, task_type, source, tickets",
                [(project, *key, count) for key, count in traffic.items()],
            )
    finally:
        engine.dispose()


def three_traces() -> list[NormalizedSpan]:
    """Three tickets, each a ticket span with a reading tool and a writing tool."""
    spans: list[NormalizedSpan] = []
    for number, task_type in enumerate(("refund", "refund", "exchange")):
        root = ticket_span(f"T-{number}", task_type=task_type)
        spans += [root, tool_span(root, "get_order", reads=1), tool_span(root, "refund", writes=2, offset_ns=200_000)]
    return spans


def check_migration_from_v2(v2_url: str, reference: Store) -> None:
    """A version-2 database migrated to today's schema answers exactly as `reference` (today's schema, given
    the same spans), then takes new spans, re-delivered spans and a replaced ticket as a new database does."""
    spans = three_traces()
    create_v2_database(v2_url, "shop", spans)
    reference.ensure_project("shop")
    reference.write_batches([SpanBatch("shop", spans)])
    migrated = SqlStore(v2_url)
    try:
        assert migrated.schema_version() == 2
        assert migrated.migrate() == len(MIGRATIONS)
        assert migrated.count_spans("shop") == len(spans)
        for ticket_id in ("T-0", "T-1", "T-2"):
            detail = migrated.get_ticket("shop", ticket_id)
            assert detail is not None and detail.tool_calls and detail.state_writes and detail.state_reads
            assert detail == reference.get_ticket("shop", ticket_id)
        assert migrated.list_tickets("shop") == reference.list_tickets("shop")
        assert migrated.traffic("shop", days=2) == reference.traffic("shop", days=2)

        assert migrated.write_batches([SpanBatch("shop", spans)]) == [WriteResult(0, len(spans))]
        late = tool_span(spans[0], "send_email", writes=1, offset_ns=300_000)
        outer = ticket_span("T-0", task_type="outer", trace_id=spans[0].trace_id, start_ns=spans[0].start_time_ns - 1)
        for store in (migrated, reference):
            assert store.write_batches([SpanBatch("shop", [late, outer])]) == [WriteResult(2, 0)]
        assert migrated.get_trace("shop", spans[0].trace_id) == reference.get_trace("shop", spans[0].trace_id)
        detail = migrated.get_ticket("shop", "T-0")
        assert detail is not None and [a.span_id for a in detail.attempts] == [outer.span_id]
        assert migrated.traffic("shop", days=2) == reference.traffic("shop", days=2)
    finally:
        migrated.close()
