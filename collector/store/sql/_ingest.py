"""The SQL store's ingest path: a group commit's rows built before the write lock, then inserted with
multi-row statements; de-duplication, tickets and daily traffic inside the transaction."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import sqlalchemy as sa

from passhat.collector.store._rows import NormalizedSpan, SpanBatch, TicketRow, WriteResult, ticket_rank
from passhat.collector.store.sql import _schema as schema
from passhat.collector.store.sql._rows import (
    SPAN_COLUMNS,
    STATE_WRITE_COLUMNS,
    TOOL_CALL_COLUMNS,
    span_values,
    state_write_values,
    ticket_values,
    tool_call_values,
)

# The ticket statements, built once: SQLAlchemy caches their compiled form per dialect (a select() or
# update() built per group commit cost milliseconds each).
_STORED_TICKETS = sa.text(
    "SELECT s.trace_id, t.ticket_id, t.start_ns, t.day, t.task_type, t.source "
    "FROM spans s JOIN tickets t ON t.span_ref = s.id WHERE s.project = :project AND s.trace_id IN :trace_ids"
).bindparams(sa.bindparam("trace_ids", expanding=True))
_LAST_SPAN_ID = sa.text("SELECT max(id) FROM spans")
# PostgreSQL writers of one database take turns on this transaction lock while they give out span ids
# (SQLite's BEGIN IMMEDIATE already makes a writer the only one).
_PG_SPAN_ID_LOCK = sa.text("SELECT pg_advisory_xact_lock(7305019283424751)")
_DELETE_TICKETS = sa.text("DELETE FROM tickets WHERE project = :project AND trace_id = :trace_id")
_ADD_TRAFFIC = sa.text(
    "UPDATE traffic_daily SET tickets = tickets + :delta "
    "WHERE project = :project AND day = :day AND task_type = :task_type AND source = :source"
)
_NEW_TRAFFIC = sa.text(
    "INSERT INTO traffic_daily (project, day, task_type, source, tickets) "
    "VALUES (:project, :day, :task_type, :source, :delta)"
)
_ROWS_PER_STATEMENT = 128  # rows per multi-row INSERT: 16 columns x 128 = 2,048 bound values
_ID_CHUNK = 400  # ids per IN (...) list: well under every driver's bound-parameter limit

Rows = list[tuple[Any, ...]]
# A multi-row statement's parameters: its row count, its values, and the span ids to put in its first column
# (as offsets into the group; the span ids themselves are given out once the write lock is held).
Chunks = list[tuple[int, list[Any], list[int]]]
Slot = tuple[str, str]  # (project, trace id): one ticket per trace


def without_nul(values: list[Any]) -> list[Any]:
    """PostgreSQL's text cannot hold U+0000, which OTLP strings may: it becomes U+FFFD there (JSON text escapes
    it, so attribute values keep it). A list with no NUL is returned as it is."""
    if not any(type(v) is str and "\x00" in v for v in values):
        return values
    return [v.replace("\x00", "\ufffd") if type(v) is str else v for v in values]


def id_chunks(items: Sequence[str]) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), _ID_CHUNK):
        yield items[start : start + _ID_CHUNK]


def chunked(rows: Rows, offsets: Sequence[int] = ()) -> Chunks:
    """Rows as multi-row statement parameters: chunks of 128 rows, then 64, 32, ... 1 (so at most a handful
    of statement texts per table, each prepared once and cached by the driver). With `offsets` (one per row),
    each row's first value is a placeholder for its span's id."""
    chunks: Chunks = []
    start, size = 0, _ROWS_PER_STATEMENT
    while start < len(rows):
        while size > len(rows) - start:
            size //= 2
        values = list(chain.from_iterable(rows[start : start + size]))
        chunks.append((size, values, list(offsets[start : start + size])))
        start += size
    return chunks


@dataclass(slots=True)
class Prepared:
    """A group commit's rows (and their statement parameters, and ticket rows) for the spans taken as new."""

    trace_ids: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # per project
    distinct: bool = True  # no (project, trace id, span id) twice in the group
    span_rows: Rows = field(default_factory=list)  # each row starts with a placeholder for the span's id
    tool_rows: Rows = field(default_factory=list)  # ... for its span's id
    write_rows: Rows = field(default_factory=list)  # ... for its span's id
    tool_offsets: list[int] = field(default_factory=list)  # each tool row's span, as an offset in span_rows
    write_offsets: list[int] = field(default_factory=list)
    candidates: dict[Slot, TicketRow] = field(default_factory=dict)  # each trace's lowest-ranked ticket span
    ticket_offsets: dict[Slot, int] = field(default_factory=dict)
    ticket_rows: dict[Slot, dict[str, Any]] = field(default_factory=dict)
    chunks: tuple[Chunks, Chunks, Chunks] = ([], [], [])  # spans, tool calls, state writes

    @classmethod
    def of(cls, batches: Sequence[SpanBatch]) -> Prepared:
        """Every span taken as new: the usual case, built before the write lock is taken."""
        prepared = cls()
        idents: set[tuple[str, str, str]] = set()
        count = 0
        for batch in batches:
            prepared.trace_ids[batch.project].update([s.trace_id for s in batch.spans])
            idents.update([(batch.project, s.trace_id, s.span_id) for s in batch.spans])
            count += len(batch.spans)
        prepared.distinct = len(idents) == count
        return prepared._build([(batch.project, batch.spans) for batch in batches])

    @classmethod
    def fresh(
        cls, batches: Sequence[SpanBatch], stored: dict[str, set[tuple[str, str]]]
    ) -> tuple[Prepared, list[WriteResult]]:
        """Re-delivered spans: the first copy of each span that is not in `stored` (per project)."""
        taken: list[tuple[str, list[NormalizedSpan]]] = []
        results: list[WriteResult] = []
        known_by_project = {project: set(ids) for project, ids in stored.items()}  # `stored` stays as it was
        for batch in batches:
            known = known_by_project[batch.project]
            spans = []
            for span in batch.spans:
                ident = (span.trace_id, span.span_id)
                if ident not in known:
                    known.add(ident)
                    spans.append(span)
            taken.append((batch.project, spans))
            results.append(WriteResult(len(spans), len(batch.spans) - len(spans)))
        return cls()._build(taken), results

    def _build(self, spans_by_project: Sequence[tuple[str, Sequence[NormalizedSpan]]]) -> Prepared:
        resource_json: dict[int, str] = {}  # the spans of one request share their resource's dict
        offset = 0
        for project, spans in spans_by_project:
            for span in spans:
                self.span_rows.append(span_values(project, span, resource_json))
                if span.tool_call is not None:
                    self.tool_rows.append(tool_call_values(project, span.tool_call))
                    self.tool_offsets.append(offset)
                if span.state_writes:
                    self.write_rows.extend([state_write_values(project, w) for w in span.state_writes])
                    self.write_offsets.extend([offset] * len(span.state_writes))
                ticket = span.ticket
                if ticket is not None:
                    slot = (project, ticket.trace_id)
                    held = self.candidates.get(slot)
                    if held is None or ticket.rank < held.rank:
                        self.candidates[slot] = ticket
                        self.ticket_offsets[slot] = offset
                offset += 1
        self.chunks = (
            chunked(self.span_rows, range(len(self.span_rows))),
            chunked(self.tool_rows, self.tool_offsets),
            chunked(self.write_rows, self.write_offsets),
        )
        self.ticket_rows = {slot: ticket_values(slot[0], t) for slot, t in self.candidates.items()}
        return self


class RowInserter:
    """INSERTs rows (tuples in column order) with multi-row statements bound straight through the driver:
    building SQLAlchemy parameters per row costs more than the database's insert itself.

    One statement per row (executemany) was much slower in the collector: Python's sqlite3 releases the GIL
    around every row's step, and the writer then waited for other threads to hand it back, row after row.
    """

    def __init__(self) -> None:
        self._sql: dict[tuple[str, int], str] = {}

    def insert(
        self, conn: sa.Connection, table: sa.Table, columns: Sequence[str], chunks: Chunks, first_id: int = 0
    ) -> None:
        """Insert `chunks`; a chunk's rows with span offsets get `first_id + offset` as their first value."""
        if not chunks:
            return
        width = len(columns)
        postgres = conn.dialect.name == "postgresql"
        marks = {"qmark": "?", "format": "%s", "pyformat": "%s"}.get(conn.dialect.paramstyle)
        cursor = None if marks is None else conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
        try:
            for size, values, offsets in chunks:
                if offsets:
                    values[0::width] = [first_id + offset for offset in offsets]
                if postgres:
                    values = without_nul(values)
                if cursor is None:  # an unusual driver: SQLAlchemy binds
                    rows = [values[at : at + width] for at in range(0, size * width, width)]
                    conn.execute(sa.insert(table), [dict(zip(columns, row, strict=True)) for row in rows])
                else:
                    cursor.execute(self._statement(conn, table, columns, marks or "?", size), values)
        finally:
            if cursor is not None:
                cursor.close()

    def _statement(self, conn: sa.Connection, table: sa.Table, columns: Sequence[str], marks: str, rows: int) -> str:
        sql = self._sql.get((table.name, rows))
        if sql is None:
            quote = conn.dialect.identifier_preparer.quote
            one = f"({', '.join([marks] * len(columns))})"
            sql = (
                f"INSERT INTO {quote(table.name)} ({', '.join(quote(c) for c in columns)}) "
                f"VALUES {', '.join([one] * rows)}"
            )
            self._sql[(table.name, rows)] = sql
        return sql


def write_group(
    conn: sa.Connection, inserter: RowInserter, batches: Sequence[SpanBatch], prepared: Prepared
) -> list[WriteResult]:
    """One group commit's writes, in the caller's transaction: duplicates are found with one indexed query
    per project; rows go in with multi-row statements per table."""
    if conn.dialect.name == "postgresql":
        conn.execute(_PG_SPAN_ID_LOCK)
    stored = {
        project: stored_span_ids(conn, project, sorted(trace_ids)) for project, trace_ids in prepared.trace_ids.items()
    }
    if prepared.distinct and not any(stored.values()):
        results = [WriteResult(len(batch.spans), 0) for batch in batches]
    else:
        prepared, results = Prepared.fresh(batches, stored)
    # Span ids are given out in commit order (the write lock is held), so the span table and the indexes keyed
    # by span id are appended to.
    first_id = int(conn.execute(_LAST_SPAN_ID).scalar() or 0) + 1
    span_chunks, tool_chunks, write_chunks = prepared.chunks
    inserter.insert(conn, schema.spans, SPAN_COLUMNS, span_chunks, first_id)
    inserter.insert(conn, schema.tool_calls, TOOL_CALL_COLUMNS, tool_chunks, first_id)
    inserter.insert(conn, schema.state_writes, STATE_WRITE_COLUMNS, write_chunks, first_id)
    if prepared.candidates:
        # Tickets derive from stored spans: only traces with spans stored before this group can have one.
        stored_traces = {project: {trace_id for trace_id, _ in ids} for project, ids in stored.items()}
        _write_tickets(conn, inserter, prepared, stored_traces, first_id)
    return results


def stored_span_ids(conn: sa.Connection, project: str, trace_ids: Sequence[str]) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    table = schema.spans
    for chunk in id_chunks(trace_ids):
        rows = conn.execute(
            sa.select(table.c.trace_id, table.c.span_id).where(table.c.project == project, table.c.trace_id.in_(chunk))
        )
        found.update((r.trace_id, r.span_id) for r in rows)
    return found


def _write_tickets(
    conn: sa.Connection, inserter: RowInserter, prepared: Prepared, stored_traces: dict[str, set[str]], first_id: int
) -> None:
    """Insert each trace's ticket (unless a stored ticket of that trace ranks before it: `TicketRow.rank`) and
    count it in the daily traffic."""
    by_project: dict[str, set[str]] = defaultdict(set)
    for project, trace_id in prepared.candidates:
        if trace_id in stored_traces.get(project, ()):
            by_project[project].add(trace_id)
    stored: dict[Slot, list[Any]] = defaultdict(list)
    for project, trace_ids in by_project.items():
        for chunk in id_chunks(sorted(trace_ids)):
            rows = conn.execute(_STORED_TICKETS, {"project": project, "trace_ids": list(chunk)})
            for r in rows:
                stored[(project, r.trace_id)].append(r)
    traffic: dict[tuple[str, str, str, str], int] = defaultdict(int)
    inserts: list[dict[str, Any]] = []
    for slot, ticket in prepared.candidates.items():
        project, trace_id = slot
        held = stored.get(slot)
        if held:
            if min(ticket_rank(r.ticket_id, trace_id, r.start_ns) for r in held) <= ticket.rank:
                continue
            # An outer agent span (or the passhat ticket) arrived after an inner one: it is the ticket.
            conn.execute(_DELETE_TICKETS, {"project": project, "trace_id": trace_id})
            for old in held:
                traffic[(project, old.day, old.task_type, old.source)] -= 1
        row = prepared.ticket_rows[slot]
        row["span_ref"] = first_id + prepared.ticket_offsets[slot]
        inserts.append(row)
        traffic[(project, row["day"], ticket.task_type, ticket.source)] += 1
    if inserts:
        inserter.insert(conn, schema.tickets, list(inserts[0]), chunked([tuple(row.values()) for row in inserts]))
    for (project, day, task_type, source), delta in sorted(traffic.items()):
        if delta == 0:
            continue
        values = {"project": project, "day": day, "task_type": task_type, "source": source, "delta": delta}
        if conn.execute(_ADD_TRAFFIC, values).rowcount == 0:
            conn.execute(_NEW_TRAFFIC, values)
