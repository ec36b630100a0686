"""The change log: row changes captured by triggers while a trial runs give the same diff as two snapshots."""

from __future__ import annotations

import pathlib
import sqlite3
import subprocess
import sys
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, create_engine, inspect
from sqlalchemy.orm import Session

from passhat.checks import ChangeLogError, SnapshotError, diff_snapshots, record_changes, take_snapshot


def test_change_log_matches_the_snapshot_diff(engine: Engine, models: type) -> None:
    before = take_snapshot(engine)
    with record_changes(engine) as log:
        with Session(engine) as session:
            order = session.get(models.Order, "O-1")
            assert order is not None
            order.status = "refunded"
            order.refunded = Decimal("45.50")
            session.add(models.Refund(order_id="O-1", amount=Decimal("45.50"), reason="damaged"))
            session.delete(session.get(models.OrderLine, ("O-1", 1)))
            session.commit()
        live = log.diff()
    assert live == log.diff() == diff_snapshots(before, take_snapshot(engine))
    assert [(c.table, c.op) for c in live] == [
        ("order_lines", "delete"),
        ("orders", "update"),
        ("refunds", "insert"),
    ]


def test_triggers_and_log_tables_are_removed_on_exit(engine: Engine) -> None:
    tables_before = set(inspect(engine).get_table_names())
    with record_changes(engine) as log:
        assert any(name.startswith("_passhat_log_") for name in inspect(engine).get_table_names())
        assert sorted(log.tables) == ["customers", "order_lines", "orders", "refunds"]
    assert set(inspect(engine).get_table_names()) == tables_before
    with engine.connect() as connection:
        triggers = connection.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'trigger'").all()
    assert triggers == []


def test_a_row_inserted_then_deleted_is_no_change(engine: Engine) -> None:
    with record_changes(engine) as log, engine.begin() as connection:
        connection.exec_driver_sql("INSERT INTO customers VALUES ('C-9', 'Temp', 't@example.com')")
        connection.exec_driver_sql("DELETE FROM customers WHERE id = 'C-9'")
    assert log.diff().is_empty


def test_an_update_set_back_to_its_starting_value_is_no_change(engine: Engine) -> None:
    with record_changes(engine) as log:
        with engine.begin() as connection:
            connection.exec_driver_sql("UPDATE orders SET status = 'lost' WHERE id = 'O-2'")
            connection.exec_driver_sql("UPDATE orders SET status = 'delivered', total = 12 WHERE id = 'O-2'")
        assert log.diff().is_empty


def test_replace_is_an_update_not_an_insert(engine: Engine) -> None:
    before = take_snapshot(engine)
    with record_changes(engine) as log, engine.begin() as connection:
        connection.exec_driver_sql("INSERT OR REPLACE INTO customers VALUES ('C-2', 'Alan Turing', 'a@x.org')")
    diff = log.diff()
    assert diff == diff_snapshots(before, take_snapshot(engine))
    assert [(c.op, c.changed_fields) for c in diff] == [("update", {"email": ("alan@example.com", "a@x.org")})]


def test_moving_a_row_to_a_new_primary_key_is_a_delete_and_an_insert(engine: Engine) -> None:
    before = take_snapshot(engine)
    with record_changes(engine) as log, engine.begin() as connection:
        connection.exec_driver_sql("UPDATE order_lines SET line = 7 WHERE order_id = 'O-1' AND line = 2")
    diff = log.diff()
    assert diff == diff_snapshots(before, take_snapshot(engine))
    assert [(c.op, c.key) for c in diff] == [
        ("delete", {"order_id": "O-1", "line": 2}),
        ("insert", {"order_id": "O-1", "line": 7}),
    ]


def test_writes_from_another_process_are_captured(engine: Engine, tmp_path: pathlib.Path) -> None:
    code = (
        "import sqlite3, sys\n"
        "db = sqlite3.connect(sys.argv[1])\n"
        "db.execute(\"UPDATE orders SET status = 'cancelled' WHERE id = 'O-3'\")\n"
        "db.commit()\n"
    )
    with record_changes(engine) as log:
        subprocess.run([sys.executable, "-c", code, str(tmp_path / "retail.db")], check=True)
    assert [c.describe() for c in log.diff()] == ["orders id='O-3' updated: status 'delivered' -> 'cancelled'"]


def test_blobs_and_full_precision_floats_survive_the_log(tmp_path: pathlib.Path) -> None:
    database = create_engine(f"sqlite:///{tmp_path / 'raw.db'}")
    with database.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE files (id INTEGER PRIMARY KEY, body BLOB, ratio REAL)")
        connection.exec_driver_sql("INSERT INTO files VALUES (1, x'00ff10', 0.30000000000000004)")
    before = take_snapshot(database)
    with record_changes(database) as log, database.begin() as connection:
        connection.exec_driver_sql("UPDATE files SET body = x'00ff11', ratio = 0.3 WHERE id = 1")
    diff = log.diff()
    assert diff == diff_snapshots(before, take_snapshot(database))
    assert diff[0].changed_fields == {
        "body": (b"\x00\xff\x10", b"\x00\xff\x11"),
        "ratio": (0.30000000000000004, 0.3),
    }


def test_diff_before_the_log_starts_is_one_clear_error(engine: Engine) -> None:
    log = record_changes(engine)
    with pytest.raises(ChangeLogError, match="has not started"):
        log.diff()


def test_a_change_log_is_used_once(engine: Engine) -> None:
    log = record_changes(engine)
    with log:
        pass
    with pytest.raises(ChangeLogError, match="records one trial"), log:
        pass


def test_other_databases_are_pointed_to_snapshots() -> None:
    # clickhouse-connect's SQLAlchemy dialect is installed with the clickhouse extra; building an engine
    # does not connect, and the change log refuses it before touching the database.
    other = create_engine("clickhousedb://default@127.0.0.1:1/default")
    with pytest.raises(ChangeLogError, match=r"does not support 'clickhousedb'.*diff_snapshots"):
        record_changes(other)


def test_not_an_engine_is_one_clear_error() -> None:
    with pytest.raises(ChangeLogError, match="needs a SQLAlchemy Engine"):
        record_changes("sqlite:///x.db")  # type: ignore[arg-type]


_ROW_IDS = st.sampled_from(["C-1", "C-2", "C-3", "C-4"])
_OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("insert"), _ROW_IDS, st.sampled_from(["a@x", "b@x"])),
        st.tuples(st.just("update"), _ROW_IDS, st.sampled_from(["a@x", "b@x", "ada@example.com"])),
        st.tuples(st.just("delete"), _ROW_IDS, st.just("")),
        st.tuples(st.just("replace"), _ROW_IDS, st.sampled_from(["a@x", "alan@example.com"])),
    ),
    max_size=12,
)


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=_OPERATIONS)
def test_any_sequence_of_writes_gives_the_same_diff_both_ways(
    tmp_path: pathlib.Path, operations: list[tuple[str, str, str]]
) -> None:
    path = tmp_path / "property.db"
    path.unlink(missing_ok=True)
    setup = sqlite3.connect(path)
    setup.execute("CREATE TABLE customers (id TEXT PRIMARY KEY, name TEXT, email TEXT)")
    setup.executemany(
        "INSERT INTO customers VALUES (?, ?, ?)",
        [("C-1", "Ada", "ada@example.com"), ("C-2", "Alan", "alan@example.com")],
    )
    setup.commit()
    setup.close()
    database = create_engine(f"sqlite:///{path}")
    before = take_snapshot(database)
    with record_changes(database) as log, database.begin() as connection:
        for op, row_id, email in operations:
            if op == "insert":
                connection.exec_driver_sql("INSERT OR IGNORE INTO customers VALUES (?, 'New', ?)", (row_id, email))
            elif op == "update":
                connection.exec_driver_sql("UPDATE customers SET email = ? WHERE id = ?", (email, row_id))
            elif op == "delete":
                connection.exec_driver_sql("DELETE FROM customers WHERE id = ?", (row_id,))
            else:
                connection.exec_driver_sql("INSERT OR REPLACE INTO customers VALUES (?, 'Re', ?)", (row_id, email))
    assert log.diff() == diff_snapshots(before, take_snapshot(database))
    database.dispose()


def test_full_text_index_tables_are_left_out_of_the_log_and_the_snapshot(tmp_path: pathlib.Path) -> None:
    # SQLite allows no triggers on a virtual table, and triggers on its shadow tables can crash SQLite.
    database = create_engine(f"sqlite:///{tmp_path / 'fts.db'}")
    with database.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        connection.exec_driver_sql("CREATE VIRTUAL TABLE note_index USING fts5(body)")
    assert sorted(take_snapshot(database).tables) == ["notes"]
    with record_changes(database) as log, database.begin() as connection:
        connection.exec_driver_sql("INSERT INTO notes VALUES (1, 'hello')")
        connection.exec_driver_sql("INSERT INTO note_index VALUES ('hello')")
    assert [(c.table, c.op) for c in log.diff()] == [("notes", "insert")]
    with pytest.raises(SnapshotError, match="virtual or shadow tables"):
        take_snapshot(database, tables=["note_index_data"])


def test_an_in_memory_database_works_too() -> None:
    database = create_engine("sqlite://")
    with database.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        connection.exec_driver_sql("INSERT INTO notes VALUES (1, 'a')")
    before = take_snapshot(database)
    with record_changes(database) as log, database.begin() as connection:
        connection.exec_driver_sql("UPDATE notes SET body = 'b'")
    assert log.diff() == diff_snapshots(before, take_snapshot(database))
    assert [c.describe() for c in log.diff()] == ["notes id=1 updated: body 'a' -> 'b'"]
