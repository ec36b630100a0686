"""SqlStore passes the store contract, on a SQLite file in WAL mode."""

from __future__ import annotations

import pathlib
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from passhat.collector.store import NormalizedSpan, ReplayRun, SpanBatch, Store, StoreError, WriteResult, open_store
from passhat.collector.store.sql import _schema
from passhat.collector.store.sql._schema import MIGRATIONS
from passhat.collector.store.sql._store import SqlStore
from tests.collector.store.sql_v2 import check_migration_from_v2, three_traces
from tests.collector.store.store_contract import StoreContract, _trial, ticket_span, tool_span, utcnow
from tests.sandbox.trial.old_details import OLD_DETAILS, OLD_DETAILS_READ


class TestSqlStore(StoreContract):
    @pytest.fixture
    def store(self, sql_store: Store) -> Iterator[Store]:
        yield sql_store


def test_sqlite_runs_in_wal_mode_with_full_sync(sql_store: Store, sqlite_url: str) -> None:
    assert isinstance(sql_store, SqlStore)
    with sql_store._engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
        assert conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar() == 10_000


def test_writers_of_one_file_queue_on_its_lock_file(sqlite_url: str) -> None:
    """A second store (another collector process) writing the same file waits on the flock, then commits."""
    with open_store(sqlite_url) as first, open_store(sqlite_url) as second:
        assert isinstance(first, SqlStore) and isinstance(second, SqlStore)
        first.ensure_project("shop")
        finished = threading.Event()
        outcome: list[int] = []

        def write() -> None:
            outcome.append(second.write_batch("shop", [ticket_span("T-2")]).accepted)
            finished.set()

        with first._file_lock():
            writer = threading.Thread(target=write)
            writer.start()
            assert not finished.wait(0.5), "the second writer did not wait for the lock"
            assert second.count_spans("shop") == 0
        writer.join(30)
        assert outcome == [1]
        assert pathlib.Path(str(first._lock_path)).exists()
        assert first.count_spans("shop") == 1


def test_a_lock_file_that_cannot_be_opened_only_costs_the_queueing(sqlite_url: str, tmp_path: pathlib.Path) -> None:
    """flock is a performance aid: without it, SQLite's own busy handler still serialises the writers."""
    with open_store(sqlite_url) as store:
        assert isinstance(store, SqlStore)
        store._lock_path = str(tmp_path / "no-such-dir" / "writers.lock")
        store.ensure_project("shop")
        assert store.write_batch("shop", [ticket_span("T-1")]).accepted == 1
        assert store.count_spans("shop") == 1


def test_a_large_group_with_redelivered_spans_stores_each_span_once(sql_store: Store) -> None:
    """Multi-row INSERTs of 128, 64, ... rows: every row lands once, whatever the group's size."""
    sql_store.ensure_project("shop")
    spans = []
    for n in range(37):
        root = ticket_span(f"T-{n}")
        spans += [root, *(tool_span(root, writes=n % 4, reads=n % 2) for _ in range(n % 9))]
    first = sql_store.write_batches([SpanBatch("shop", spans[:150])])
    again = sql_store.write_batches([SpanBatch("shop", spans[100:]), SpanBatch("shop", spans[::7])])
    assert first == [WriteResult(150, 0)]
    assert again[0] == WriteResult(len(spans) - 150, 50)
    assert again[1] == WriteResult(0, len(spans[::7]))
    assert sql_store.count_spans("shop") == len(spans)
    stored = {(s.span_id, len(s.state_writes)) for n in range(37) for s in _trace_of(sql_store, spans, n)}
    assert stored == {(s.span_id, len(s.state_writes)) for s in spans}


def _trace_of(store: Store, spans: list[NormalizedSpan], n: int) -> list[NormalizedSpan]:
    trace_id = next(s.trace_id for s in spans if s.ticket is not None and s.ticket.ticket_id == f"T-{n}")
    return store.get_trace("shop", trace_id)


def test_a_failing_write_stores_nothing(sql_store: Store, sqlite_url: str) -> None:
    sql_store.ensure_project("shop")
    root = ticket_span("T-1")
    # A tool span whose state writes repeat a primary key makes the INSERT fail mid-transaction.
    tool = tool_span(root, writes=1)
    broken = tool_span(root, writes=2)
    broken.state_writes[1] = broken.state_writes[0]
    with pytest.raises(StoreError, match="nothing was stored"):
        sql_store.write_batch("shop", [root, tool, broken])
    assert sql_store.count_spans("shop") == 0
    assert sql_store.list_tickets("shop") == []
    assert sql_store.traffic("shop", days=1) == []
    assert sql_store.write_batch("shop", [root, tool]).accepted == 2


def test_a_newer_schema_is_refused_with_advice(sql_store: Store, sqlite_url: str) -> None:
    engine = sa.create_engine(sqlite_url)
    with engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO passhat_schema_versions VALUES (99, 0)")
    engine.dispose()
    with pytest.raises(StoreError, match="upgrade passhat"):
        open_store(sqlite_url)


def test_data_survives_reopening(sqlite_url: str) -> None:
    with open_store(sqlite_url) as store:
        store.ensure_project("shop")
        store.write_batch("shop", [ticket_span("T-1")])
    with open_store(sqlite_url) as store:
        assert store.count_spans("shop") == 1
        assert store.schema_version() == len(MIGRATIONS)


class TestInMemorySqlStore(StoreContract):
    """An in-memory SQLite store (``sqlite://``) keeps the same contract."""

    @pytest.fixture
    def store(self) -> Iterator[Store]:
        with open_store("sqlite://") as store:
            yield store


def test_an_in_memory_store_is_one_database_for_every_thread() -> None:
    """An in-memory database lives in its connection: the store's threads share one, taking turns. Before, each
    thread got an empty database of its own, so spans a span processor's export thread wrote were lost ("no such
    table") and the web app's request threads found nothing. Here four threads write at once and read between
    their writes while this thread reads: every write is found by every thread, and none fails."""
    with open_store("sqlite://") as store:
        store.ensure_project("shop")
        start = threading.Barrier(5)
        failures: list[BaseException] = []

        def write(worker: int) -> None:
            try:
                start.wait()
                for n in range(20):
                    store.write_batch("shop", [ticket_span(f"T-{worker}-{n}")])
                    assert store.count_spans("shop") >= n + 1
            except BaseException as exc:  # handed to the test's thread
                failures.append(exc)

        threads = [threading.Thread(target=write, args=(worker,)) for worker in range(4)]
        for thread in threads:
            thread.start()
        start.wait()
        seen = [store.count_spans("shop") for _ in range(50)]
        for thread in threads:
            thread.join(timeout=60)
        assert not failures, failures
        assert seen == sorted(seen)  # committed writes only, in order
        assert store.count_spans("shop") == 80
        found: list[int] = []
        reader = threading.Thread(target=lambda: found.append(store.count_spans("shop")))
        reader.start()
        reader.join(timeout=60)
        assert found == [80]


def test_missing_directories_are_created(tmp_path: pathlib.Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'a' / 'b' / 'x.db'}") as store:
        assert store.schema_version() == len(MIGRATIONS)


@pytest.mark.parametrize("url", ["not a url", "nosuchdriver://x/y"])
def test_a_bad_url_is_one_clear_error(url: str) -> None:
    with pytest.raises(StoreError):
        open_store(url)


def test_query_bounds_beyond_bigint_are_clamped(sql_store: Store) -> None:
    sql_store.ensure_project("shop")
    sql_store.write_batch("shop", [ticket_span("T-1")])
    assert sql_store.list_tickets("shop", since_ns=2**70) == []
    assert len(sql_store.list_tickets("shop", until_ns=2**70)) == 1
    assert len(sql_store.list_tickets("shop", max_hash=2**64)) == 1
    assert len(sql_store.list_tickets("shop", max_hash=2**80)) == 1
    assert sql_store.list_tickets("shop", max_hash=-5) == []


def test_a_version_1_database_gains_trial_details(tmp_path: pathlib.Path) -> None:
    import datetime as dt

    import sqlalchemy as sa

    from passhat.collector.store import ReplayRun, TrialRow
    from passhat.collector.store.sql._schema import schema_versions
    from passhat.sandbox import TrialDetails

    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    engine = sa.create_engine(url)
    with engine.begin() as conn:  # a database as version 1 left it: trials without the details column
        conn.execute(
            sa.text(
                "CREATE TABLE trials (project VARCHAR(200), run_id VARCHAR(200), ticket_id VARCHAR(400), "
                "attempt INTEGER, task_type VARCHAR(200) NOT NULL, passed BOOLEAN NOT NULL, "
                "termination_reason VARCHAR(32) NOT NULL, started_at_us BIGINT NOT NULL, duration_s FLOAT NOT NULL,"
                " domain TEXT, trace_id VARCHAR(32), failure_label TEXT, failure_evidence TEXT, verdict TEXT, "
                "simulator_error TEXT, infra_error TEXT, PRIMARY KEY (project, run_id, ticket_id, attempt))"
            )
        )
        MIGRATIONS[0](conn)
        schema_versions.create(conn, checkfirst=True)
        conn.execute(schema_versions.insert().values(version=1, applied_at_us=0))
    engine.dispose()
    store = SqlStore(url)
    try:
        assert store.migrate() == len(MIGRATIONS)
        store.ensure_project("shop")
        now = dt.datetime.now(dt.UTC)
        store.create_replay_run("shop", ReplayRun(run_id="r", created_at=now, k=1))
        details = TrialDetails(final_response="ok")
        trial = TrialRow("r", "T-1", "refund", 0, True, "customer_stop", now, 0.5, details=details)
        store.add_trials("shop", [trial])
        assert store.list_trials("shop", "r")[0].details == details
    finally:
        store.close()


def test_a_version_2_database_moves_to_span_ids(tmp_path: pathlib.Path, sql_store: Store) -> None:
    check_migration_from_v2(f"sqlite:///{tmp_path / 'v2.sqlite'}", sql_store)


def test_span_ids_make_the_span_tables_append(sql_store: Store, sqlite_url: str) -> None:
    """Spans get row ids in commit order (SQLite's rowid: no second copy of the key), and tool calls, state
    writes and tickets carry their span's id; only the identity indexes are keyed by random ids."""
    first, second = three_traces(), three_traces()
    sql_store.ensure_project("shop")
    sql_store.write_batches([SpanBatch("shop", first)])
    sql_store.write_batches([SpanBatch("shop", second)])
    engine = sa.create_engine(sqlite_url)
    with engine.connect() as conn:
        ids = dict(conn.execute(sa.text("SELECT span_id, id FROM spans")).all())
        assert [ids[s.span_id] for s in first + second] == list(range(1, len(first) + len(second) + 1))
        assert conn.execute(sa.text("SELECT count(*) FROM spans WHERE id <> rowid")).scalar() == 0
        refs = conn.execute(sa.text("SELECT span_id, span_ref FROM tool_calls")).all()
        refs += conn.execute(sa.text("SELECT span_id, span_ref FROM state_writes")).all()
        refs += conn.execute(sa.text("SELECT span_id, span_ref FROM tickets")).all()
        assert len(refs) == 2 * (6 + 3 * 3 + 3) and all(ids[span_id] == ref for span_id, ref in refs)
        indexes = conn.execute(sa.text("SELECT tbl_name, name FROM sqlite_master WHERE type = 'index'")).all()
    engine.dispose()
    span_indexes = sorted(
        name for table, name in indexes if table in ("spans", "tool_calls", "state_writes", "tickets")
    )
    assert span_indexes == [
        "ix_tickets_project_domain_start",
        "ix_tickets_project_outcome_start",
        "ix_tickets_project_start",
        "ix_tickets_project_status_start",
        "ix_tickets_project_type_start",
        "ix_tickets_span_ref",
        "sqlite_autoindex_spans_1",  # (project, trace id, span id)
        "sqlite_autoindex_state_writes_1",  # (span_ref, seq)
        "sqlite_autoindex_tickets_1",  # (project, ticket id, trace id)
    ]


def test_rows_bound_by_sqlalchemy_get_the_same_span_ids(tmp_path: pathlib.Path) -> None:
    """A driver whose parameter style the multi-row statements do not speak (here SQLite in `named` style) has
    its rows bound by SQLAlchemy instead, span ids and all."""
    from passhat.collector.store.sql import _schema as schema
    from passhat.collector.store.sql._ingest import Prepared, RowInserter
    from passhat.collector.store.sql._rows import SPAN_COLUMNS, TOOL_CALL_COLUMNS

    engine = sa.create_engine(f"sqlite:///{tmp_path / 'named.db'}", paramstyle="named")
    spans = three_traces()
    prepared = Prepared.of([SpanBatch("shop", spans)])
    with engine.begin() as conn:
        assert conn.dialect.paramstyle == "named"
        schema.spans.create(conn)
        schema.tool_calls.create(conn)
        inserter = RowInserter()
        inserter.insert(conn, schema.spans, SPAN_COLUMNS, prepared.chunks[0], 100)
        inserter.insert(conn, schema.tool_calls, TOOL_CALL_COLUMNS, prepared.chunks[1], 100)
        ids = dict(conn.execute(sa.text("SELECT span_id, id FROM spans")).all())
        refs = conn.execute(sa.text("SELECT span_id, span_ref FROM tool_calls")).all()
    engine.dispose()
    assert [ids[s.span_id] for s in spans] == list(range(100, 100 + len(spans)))
    assert len(refs) == 6 and all(ids[span_id] == ref for span_id, ref in refs)


def test_row_builders_give_each_field_under_its_column() -> None:
    """The SQL row builders name each field by hand (the ingest path's speed); each value lands in the column
    derived from its field, so a builder and its column list cannot drift apart."""
    from dataclasses import fields

    from passhat.collector.store.sql._rows import (
        RENAMED,
        SPAN_COLUMNS,
        STATE_WRITE_COLUMNS,
        TICKET_COLUMNS,
        TOOL_CALL_COLUMNS,
        span_values,
        state_write_values,
        ticket_values,
        tool_call_values,
    )

    encoded = {"attributes", "resource_attributes", "events", "intent", "ticket_hash", "key", "before", "after"}
    encoded |= {"changed", "ticket", "tool_call", "state_writes", "duplicate_of"}  # duplicate_of: set when read

    def check(row: dict[str, Any], value: Any) -> None:
        for f in fields(value):
            if f.name not in encoded:
                assert row[RENAMED.get(f.name, f.name)] == getattr(value, f.name), f.name

    for span in three_traces():
        check(dict(zip(SPAN_COLUMNS, span_values("p", span), strict=True)), span)
        if span.tool_call is not None:
            check(dict(zip(TOOL_CALL_COLUMNS, tool_call_values("p", span.tool_call), strict=True)), span.tool_call)
        for write in span.state_writes:
            check(dict(zip(STATE_WRITE_COLUMNS, state_write_values("p", write), strict=True)), write)
        if span.ticket is not None:
            row = ticket_values("p", span.ticket)
            assert list(row) == list(TICKET_COLUMNS)
            check(row, span.ticket)


def test_a_trial_stored_with_details_as_a_plain_document_still_loads(sqlite_url: str) -> None:
    import datetime as dt
    import json

    from passhat.collector.store import ReplayRun, TrialRow

    store = SqlStore(sqlite_url)
    try:
        store.migrate()
        store.ensure_project("shop")
        now = dt.datetime.now(dt.UTC)
        store.create_replay_run("shop", ReplayRun(run_id="r", created_at=now, k=1))
        store.add_trials("shop", [TrialRow("r", "T-1", "refund", 0, True, "customer_stop", now, 0.5)])
        with sa.create_engine(sqlite_url).begin() as conn:  # the column as an older version wrote it
            conn.execute(sa.text("UPDATE trials SET details = :d"), {"d": json.dumps(OLD_DETAILS)})
        assert store.list_trials("shop", "r")[0].details == OLD_DETAILS_READ
    finally:
        store.close()


@pytest.mark.parametrize(
    ("filters", "index"),
    [
        ({"status": "ERROR"}, "ix_tickets_project_status_start"),
        ({"outcome": "failed"}, "ix_tickets_project_outcome_start"),
    ],
)
def test_the_ui_ticket_filters_read_an_index_newest_first(
    sql_store: Store, sqlite_url: str, filters: dict[str, Any], index: str
) -> None:
    """Failed tickets, newest first, without a scan of the project's tickets (the web UI's ticket filters)."""
    from passhat.collector.store.sql._ui_queries import search_tickets_query

    sql_store.ensure_project("shop")
    query = search_tickets_query(
        "shop",
        **{"ticket_id_prefix": None, "task_type": None, "source": None, "status": None, "outcome": None, **filters},
        since_ns=None,
        until_ns=None,
        limit=50,
        offset=0,
    )
    engine = sa.create_engine(sqlite_url)
    with engine.connect() as conn:
        conn.execute(sa.text("ANALYZE"))
        compiled = query.compile(engine, compile_kwargs={"literal_binds": True})
        plan = " | ".join(str(row[-1]) for row in conn.execute(sa.text(f"EXPLAIN QUERY PLAN {compiled}")))
    engine.dispose()
    assert f"USING INDEX {index}" in plan, plan


def test_a_version_3_database_gains_the_ticket_filter_indexes(sqlite_url: str) -> None:
    engine = sa.create_engine(sqlite_url)
    with engine.begin() as conn:
        MIGRATIONS[0](conn)
        for name in ("ix_tickets_project_status_start", "ix_tickets_project_outcome_start"):
            conn.execute(sa.text(f"DROP INDEX {name}"))
        conn.execute(
            sa.text("CREATE TABLE passhat_schema_versions (version INTEGER PRIMARY KEY, applied_at_us BIGINT)")
        )
        conn.execute(sa.text("INSERT INTO passhat_schema_versions VALUES (1, 0), (2, 0), (3, 0)"))
    engine.dispose()
    store = SqlStore(sqlite_url)
    try:
        assert store.schema_version() == 3
        assert store.migrate() == len(MIGRATIONS)
    finally:
        store.close()
    engine = sa.create_engine(sqlite_url)
    with engine.connect() as conn:
        names = {row[0] for row in conn.execute(sa.text("SELECT name FROM sqlite_master WHERE type = 'index'"))}
    engine.dispose()
    assert {"ix_tickets_project_status_start", "ix_tickets_project_outcome_start"} <= names


def test_a_finished_runs_tallies_are_kept_and_read_back(tmp_path: pathlib.Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/kept.db")
    store.ensure_project("shop")
    store.create_replay_run("shop", ReplayRun("run-1", utcnow(), k=2))
    trials = [_trial("run-1", "T-1", a, passed=a == 0) for a in range(2)] + [_trial("run-1", "T-2", 70)]
    store.add_trials("shop", trials)
    live = store.ticket_tallies("shop", "run-1")
    assert isinstance(store, SqlStore)

    def kept_rows() -> int:
        with store._engine.connect() as conn:
            return int(conn.scalar(sa.select(sa.func.count()).select_from(_schema.ticket_tallies)) or 0)

    assert kept_rows() == 0  # a running run is counted afresh
    store.finish_replay_run("shop", "run-1")
    assert kept_rows() == 2  # kept when it finished
    assert store.ticket_tallies("shop", "run-1") == live  # read from the kept rows (attempt 70 from its trial)
    store.add_trials("shop", [_trial("run-1", "T-3", 0)])
    assert kept_rows() == 0  # dropped: the run has new trials
    assert len(store.ticket_tallies("shop", "run-1")) == 3
    assert kept_rows() == 3  # a finished run's tallies are kept again on the next read
    store.close()


def test_version_8_gives_a_version_7_database_the_verdict_indexes(sqlite_url: str) -> None:
    """A database at version 7 gets the verdicts' indexes by outcome and by signature, and the ticket list's
    verdict filter reads the graded ids from them (no verdict row read)."""
    store = SqlStore(sqlite_url)
    store.migrate()
    engine = sa.create_engine(sqlite_url)
    names = ("ix_production_verdicts_project_passed", "ix_production_verdicts_project_signature")
    with engine.begin() as conn:
        for name in names:
            conn.execute(sa.text(f"DROP INDEX {name}"))
        conn.execute(sa.text("DELETE FROM passhat_schema_versions WHERE version >= 8"))
    assert store.schema_version() == 7
    assert store.migrate() == len(MIGRATIONS) and store.schema_version() == len(MIGRATIONS) >= 8
    with engine.connect() as conn:
        found = {row[0] for row in conn.execute(sa.text("SELECT name FROM sqlite_master WHERE type = 'index'"))}
        plan = " ".join(
            row[3]
            for row in conn.execute(
                sa.text(
                    "EXPLAIN QUERY PLAN SELECT ticket_id FROM production_verdicts WHERE project = 'p' AND passed = 0"
                )
            )
        )
    engine.dispose()
    store.close()
    assert set(names) <= found
    assert "COVERING INDEX ix_production_verdicts_project_passed" in plan


def test_the_trials_the_harness_broke_are_read_from_their_partial_index(sql_store: Store) -> None:
    """A run page lists the trials the harness broke: SQLite reads them from the covering partial index
    (version 10), never the run's trials one by one; the index's condition names exactly the signatures that are
    never the agent's."""
    import dataclasses
    import re

    from passhat.checks import NOT_AGENT_FAULT

    [listed] = re.findall(r"IN \(([^)]*)\)", _schema.HARNESS_BROKE)
    assert {label.strip().strip("'") for label in listed.split(",")} == set(NOT_AGENT_FAULT)
    assert isinstance(sql_store, SqlStore)
    sql_store.ensure_project("shop")
    sql_store.create_replay_run("shop", ReplayRun("run-1", utcnow(), k=2))
    broken = dataclasses.replace(_trial("run-1", "T-1", 1, passed=False), infra_error="TimeoutError: no answer")
    sql_store.add_trials("shop", [_trial("run-1", "T-1", 0), broken])
    seen: list[tuple[str, Any]] = []
    sa.event.listen(
        sql_store._engine, "before_cursor_execute", lambda c, cur, sql, params, *_: seen.append((sql, params))
    )
    assert [(t.ticket_id, t.attempt) for t in sql_store.harness_trials("shop", "run-1")] == [("T-1", 1)]
    [(statement, params)] = [(sql, p) for sql, p in seen if "FROM trials" in sql]
    with sql_store._engine.connect() as conn:
        plan = " ".join(str(row[-1]) for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", params))
    assert "COVERING INDEX ix_trials_harness" in plan, plan
