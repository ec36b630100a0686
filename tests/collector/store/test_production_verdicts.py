"""Production verdicts in both stores: stored, replaced on regrading, read back, and filtering tickets."""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from passhat.collector.store import ProductionVerdict, ReplayRun, Store, TrialRow, open_store
from passhat.collector.store.sql._schema import MIGRATIONS
from passhat.collector.store.sql._store import SqlStore
from tests.collector.store.store_contract import NS, now_ns, ticket_span, tool_span


@pytest.fixture(params=["sqlite", "chdb"])
def store(request: pytest.FixtureRequest, sql_store: Store) -> Iterator[Store]:
    if request.param == "sqlite":
        yield sql_store
        return
    database = f"verdicts_{uuid.uuid4().hex[:10]}"
    opened = open_store(f"chdb://{request.getfixturevalue('chdb_dir')}?database={database}")
    yield opened
    opened.close()


def _verdict(ticket_id: str, start: int, *, passed: bool, signature: str | None = None) -> ProductionVerdict:
    return ProductionVerdict(
        ticket_id=ticket_id,
        trace_id="a" * 32,
        task_type="refund",
        start_time_ns=start,
        passed=passed,
        graded_at=dt.datetime(2026, 11, 30, 9, 0, tzinfo=dt.UTC),
        domain="retail",
        signature=signature,
        evidence=None if passed else "refunded order O-2, not O-1",
        verdict={"passed": passed, "check": "refund", "diagnostics": [], "children": []},
        graded_by="run-1",
    )


def test_verdicts_round_trip_and_a_regrade_replaces_the_earlier_one(store: Store) -> None:
    store.ensure_project("shop")
    start = now_ns() - 3600 * NS
    first = _verdict("T-1", start, passed=False, signature="wrong_entity")
    store.put_production_verdicts("shop", [first, _verdict("T-2", start + NS, passed=True)])
    assert store.production_verdicts("shop", ["T-1", "T-3"]) == {"T-1": first}
    later = first.graded_at + dt.timedelta(hours=1)
    regraded = dataclasses.replace(first, passed=True, signature=None, evidence=None, graded_at=later)
    store.put_production_verdicts("shop", [regraded])
    assert store.production_verdicts("shop", ["T-1"]) == {"T-1": regraded}
    listed = store.list_production_verdicts("shop", since_ns=start, until_ns=start + 10 * NS)
    assert [v.ticket_id for v in listed] == ["T-2", "T-1"]
    assert [v.ticket_id for v in store.list_production_verdicts("shop", since_ns=start + NS)] == ["T-2"]
    assert store.production_verdicts("bank", ["T-1"]) == {}


def test_tickets_are_found_by_their_verdict_and_signature(store: Store) -> None:
    store.ensure_project("shop")
    base = now_ns() - 3600 * NS
    spans = [ticket_span(f"T-{i}", start_ns=base + i * NS) for i in range(4)]
    spans.append(ticket_span("T-0#0", source="sandbox", run_id="run-1", attempt=0, start_ns=base + 9 * NS))
    store.write_batch("shop", spans)
    store.put_production_verdicts(
        "shop",
        [
            _verdict("T-0", base, passed=False, signature="wrong_entity"),
            _verdict("T-1", base + NS, passed=False, signature="unresolved"),
            _verdict("T-2", base + 2 * NS, passed=True),
        ],
    )
    ids = lambda rows: [t.ticket_id for t in rows]  # noqa: E731
    assert ids(store.search_tickets_by_verdict("shop", "failed")) == ["T-1", "T-0"]
    assert ids(store.search_tickets_by_verdict("shop", "passed")) == ["T-2"]
    assert ids(store.search_tickets_by_verdict("shop", "ungraded")) == ["T-3"]  # sandbox trials are never listed
    assert ids(store.search_tickets_by_verdict("shop", None, signature="wrong_entity")) == ["T-0"]
    assert ids(store.search_tickets_by_verdict("shop", "failed", since_ns=base + NS)) == ["T-1"]
    assert ids(store.search_tickets_by_verdict("shop", "failed", limit=1, offset=1)) == ["T-0"]
    assert ids(store.search_tickets_by_verdict("shop", "failed", outcome="resolved", status="ok")) == ["T-1", "T-0"]
    assert store.search_tickets_by_verdict("shop", "failed", outcome="escalated") == []
    assert store.search_tickets_by_verdict("shop", "failed", status="error") == []
    assert store.search_tickets_by_verdict("bank", "failed") == []


def test_a_version_4_database_gains_the_verdicts_table(sqlite_url: str) -> None:
    engine = sa.create_engine(sqlite_url)
    with engine.begin() as conn:
        MIGRATIONS[0](conn)
        conn.execute(sa.text("DROP TABLE production_verdicts"))
        conn.execute(
            sa.text("CREATE TABLE passhat_schema_versions (version INTEGER PRIMARY KEY, applied_at_us BIGINT)")
        )
        conn.execute(sa.text("INSERT INTO passhat_schema_versions VALUES (1, 0), (2, 0), (3, 0), (4, 0)"))
    engine.dispose()
    store = SqlStore(sqlite_url)
    try:
        assert store.schema_version() == 4
        assert store.migrate() == len(MIGRATIONS)
        store.ensure_project("shop")
        store.put_production_verdicts("shop", [_verdict("T-1", 1, passed=True)])
        assert store.production_verdicts("shop", ["T-1"])["T-1"].passed
    finally:
        store.close()


def _trial(ticket_id: str, attempt: int, *, passed: bool, infra_error: str | None = None) -> TrialRow:
    return TrialRow(
        run_id="run-1", ticket_id=ticket_id, task_type="refund", attempt=attempt, passed=passed,
        termination_reason="agent_stop", started_at=dt.datetime(2026, 11, 30, tzinfo=dt.UTC), duration_s=1.0,
        domain="retail", infra_error=infra_error,
    )  # fmt: skip


def test_replay_tallies_count_usable_attempts_and_filter_tickets(store: Store) -> None:
    store.ensure_project("shop")
    base = now_ns() - 3600 * NS
    store.write_batch("shop", [ticket_span(f"T-{i}", start_ns=base + i * NS) for i in range(3)])
    store.create_replay_run("shop", ReplayRun("run-1", dt.datetime(2026, 11, 30, tzinfo=dt.UTC), k=2))
    store.add_trials(
        "shop",
        [
            _trial("T-0", 0, passed=True),
            _trial("T-0", 1, passed=False, infra_error="worker died"),  # not the agent's: not counted
            _trial("T-0", 2, passed=True),
            _trial("T-1", 0, passed=True),
            _trial("T-1", 1, passed=False),
        ],
    )
    assert store.trial_tallies("shop", ["T-0", "T-1", "T-2"]) == {"T-0": (2, 2), "T-1": (1, 2)}
    ids = lambda rows: [t.ticket_id for t in rows]  # noqa: E731
    assert ids(store.search_tickets_by_verdict("shop", None, replays="all_passed")) == ["T-0"]
    assert ids(store.search_tickets_by_verdict("shop", None, replays="some_failed")) == ["T-1"]
    assert ids(store.search_tickets_by_verdict("shop", None, replays="not_replayed")) == ["T-2"]
    assert store.trial_tallies("bank", ["T-0"]) == {}


def test_several_tickets_read_at_once_equal_each_read_alone(store: Store) -> None:
    store.ensure_project("shop")
    base = now_ns() - 3600 * NS
    first = ticket_span("T-1", start_ns=base)
    store.write_batch(
        "shop",
        [
            first,
            tool_span(first),
            ticket_span("T-1", source="sandbox", run_id="run-1", attempt=0, start_ns=base + NS),
            ticket_span("T-2", start_ns=base + 2 * NS),
        ],
    )
    together = store.get_tickets("shop", ["T-2", "T-1", "T-9"], source="production")
    assert list(together) == ["T-2", "T-1"]
    for ticket_id, detail in together.items():
        assert detail == store.get_ticket("shop", ticket_id, source="production")
    assert len(store.get_tickets("shop", ["T-1"])["T-1"].attempts) == 2
    assert store.get_tickets("bank", ["T-1"]) == {}
