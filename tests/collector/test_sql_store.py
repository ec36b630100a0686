"""SqlStore passes the store contract, on a SQLite file in WAL mode."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from store_contract import StoreContract, ticket_span, tool_span

from passhat.collector.store import Store, StoreError, open_store
from passhat.collector.store._sql import SqlStore
from passhat.collector.store._sql_schema import MIGRATIONS


class TestSqlStore(StoreContract):
    @pytest.fixture
    def store(self, sql_store: Store) -> Iterator[Store]:
        yield sql_store


def test_sqlite_runs_in_wal_mode_with_full_sync(sql_store: Store, sqlite_url: str) -> None:
    assert isinstance(sql_store, SqlStore)
    with sql_store._engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL


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
    from passhat.collector.store._sql_schema import schema_versions

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
        trial = TrialRow("r", "T-1", "refund", 0, True, "customer_stop", now, 0.5, details={"final_response": "ok"})
        store.add_trials("shop", [trial])
        assert store.list_trials("shop", "r")[0].details == {"final_response": "ok"}
    finally:
        store.close()
