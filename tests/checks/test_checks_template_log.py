"""The change log installed once on a template: every copy inherits it and diffs like two snapshots."""

from __future__ import annotations

import pathlib
import shutil
import sqlite3
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, StaticPool, create_engine
from sqlalchemy.orm import Session

from passhat.checks import ChangeLogError, diff_snapshots, install_change_log, record_changes, take_snapshot


def _copy(template: Engine, tmp_path: pathlib.Path, name: str = "copy.db") -> Engine:
    template.dispose()
    shutil.copyfile(tmp_path / "retail.db", tmp_path / name)
    return create_engine(f"sqlite:///{tmp_path / name}")


def test_a_copy_of_the_template_diffs_like_two_snapshots(engine: Engine, models: type, tmp_path: pathlib.Path) -> None:
    start = install_change_log(engine, metadata=models.Base.metadata)
    copy = _copy(engine, tmp_path)
    with record_changes(copy, start=start) as log:
        with Session(copy) as session:
            order = session.get(models.Order, "O-1")
            assert order is not None
            order.status = "refunded"
            order.refunded = Decimal("45.50")
            order.meta = {"channel": "web", "tags": ["gift", "refund"]}
            session.add(models.Refund(order_id="O-1", amount=Decimal("45.50"), reason="damaged"))
            session.delete(session.get(models.OrderLine, ("O-1", 1)))
            session.commit()
        live = log.diff()
    after = take_snapshot(copy, metadata=models.Base.metadata)
    assert live == log.diff() == diff_snapshots(start.snapshot, after)
    assert [(c.table, c.op) for c in live] == [("order_lines", "delete"), ("orders", "update"), ("refunds", "insert")]
    assert live[1].changed_fields["meta"] == (
        {"channel": "web", "tags": ["gift"]},
        {"channel": "web", "tags": ["gift", "refund"]},
    )


def test_the_template_is_untouched_and_copies_keep_its_triggers(engine: Engine, tmp_path: pathlib.Path) -> None:
    start = install_change_log(engine)
    copy = _copy(engine, tmp_path)
    with record_changes(copy, start=start) as log, copy.begin() as connection:
        connection.exec_driver_sql("UPDATE customers SET name = 'Ada' WHERE id = 'C-1'")
    assert [c.describe() for c in log.diff()] == ["customers id='C-1' updated: name 'Ada Byron' -> 'Ada'"]
    assert start.diff(engine).is_empty
    with copy.connect() as connection:
        triggers = connection.exec_driver_sql("SELECT count(*) FROM sqlite_master WHERE type = 'trigger'").scalar()
    assert triggers == 5 * len(start.tables)  # installed once, never removed per trial


def test_an_in_memory_backup_of_the_template_inherits_the_log(engine: Engine) -> None:
    start = install_change_log(engine)
    memory = sqlite3.connect(":memory:", check_same_thread=False)
    source = engine.raw_connection()
    try:
        source.driver_connection.backup(memory)  # type: ignore[union-attr]
    finally:
        source.close()
    memory.execute("DELETE FROM order_lines WHERE line = 2")
    memory.commit()
    copy = create_engine("sqlite://", creator=lambda: memory, poolclass=StaticPool)
    assert start.diff(memory) == start.diff(copy) == diff_snapshots(start.snapshot, take_snapshot(copy))
    assert [(c.op, c.key) for c in start.diff(memory)] == [("delete", {"order_id": "O-1", "line": 2})]


def test_replace_and_a_moved_key_diff_like_two_snapshots(engine: Engine, tmp_path: pathlib.Path) -> None:
    start = install_change_log(engine)
    copy = _copy(engine, tmp_path)
    with copy.begin() as connection:
        # A REPLACE deletes the old row without firing a trigger, and gives the key a new rowid.
        connection.exec_driver_sql("INSERT OR REPLACE INTO customers VALUES ('C-2', 'Alan Turing', 'a@x.org')")
        connection.exec_driver_sql("UPDATE order_lines SET line = 7 WHERE order_id = 'O-1' AND line = 2")
    diff = start.diff(copy)
    assert diff == diff_snapshots(start.snapshot, take_snapshot(copy))
    assert [(c.table, c.op, c.key) for c in diff] == [
        ("customers", "update", {"id": "C-2"}),
        ("order_lines", "delete", {"order_id": "O-1", "line": 2}),
        ("order_lines", "insert", {"order_id": "O-1", "line": 7}),
    ]


def test_a_table_without_rowids_is_compared_in_full(tmp_path: pathlib.Path) -> None:
    template = create_engine(f"sqlite:///{tmp_path / 'retail.db'}")
    with template.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE stock (sku TEXT PRIMARY KEY, count INTEGER) WITHOUT ROWID")
        connection.exec_driver_sql("INSERT INTO stock VALUES ('MUG', 3), ('TEA', 1)")
    start = install_change_log(template)
    assert "stock" not in start.rowids
    copy = _copy(template, tmp_path)
    with copy.begin() as connection:
        connection.exec_driver_sql("UPDATE stock SET count = 2 WHERE sku = 'MUG'")
    assert [c.describe() for c in start.diff(copy)] == ["stock sku='MUG' updated: count 3 -> 2"]


def test_a_database_without_the_log_is_one_clear_error(engine: Engine) -> None:
    start = install_change_log(engine)
    other = create_engine("sqlite://")
    with (
        pytest.raises(ChangeLogError, match="no change log installed: call install_change_log"),
        record_changes(other, start=start),
    ):
        pass


def test_the_starting_state_fixes_the_tables(engine: Engine) -> None:
    start = install_change_log(engine, tables=["orders"])
    assert sorted(start.tables) == ["orders"]
    with pytest.raises(ChangeLogError, match="pass tables, exclude and metadata to install_change_log"):
        record_changes(engine, start=start, tables=["customers"])


def test_a_template_on_another_database_is_pointed_to_snapshots() -> None:
    other = create_engine("clickhousedb://default@127.0.0.1:1/default")
    with pytest.raises(ChangeLogError, match=r"SQLite database.*diff_snapshots"):
        install_change_log(other)


_ROW_IDS = st.sampled_from(["C-1", "C-2", "C-3", "C-4"])
_OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("insert"), _ROW_IDS, st.sampled_from(["a@x", "b@x"])),
        st.tuples(st.just("update"), _ROW_IDS, st.sampled_from(["a@x", "b@x", "ada@example.com"])),
        st.tuples(st.just("delete"), _ROW_IDS, st.just("")),
        st.tuples(st.just("replace"), _ROW_IDS, st.sampled_from(["a@x", "alan@example.com"])),
        st.tuples(st.just("rekey"), _ROW_IDS, _ROW_IDS),
    ),
    max_size=12,
)


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=_OPERATIONS)
def test_any_sequence_of_writes_on_a_copy_gives_the_snapshot_diff(
    tmp_path: pathlib.Path, operations: list[tuple[str, str, str]]
) -> None:
    path = tmp_path / "retail.db"
    path.unlink(missing_ok=True)
    setup = sqlite3.connect(path)
    setup.execute("CREATE TABLE customers (id TEXT PRIMARY KEY, name TEXT, email TEXT)")
    setup.executemany(
        "INSERT INTO customers VALUES (?, ?, ?)",
        [("C-1", "Ada", "ada@example.com"), ("C-2", "Alan", "alan@example.com")],
    )
    setup.commit()
    setup.close()
    start = install_change_log(create_engine(f"sqlite:///{path}"))
    copy = sqlite3.connect(":memory:")
    with sqlite3.connect(path) as source:
        source.backup(copy)
    for op, row_id, value in operations:
        if op == "insert":
            copy.execute("INSERT OR IGNORE INTO customers VALUES (?, 'New', ?)", (row_id, value))
        elif op == "update":
            copy.execute("UPDATE customers SET email = ? WHERE id = ?", (value, row_id))
        elif op == "delete":
            copy.execute("DELETE FROM customers WHERE id = ?", (row_id,))
        elif op == "replace":
            copy.execute("INSERT OR REPLACE INTO customers VALUES (?, 'Re', ?)", (row_id, value))
        else:
            copy.execute("UPDATE OR REPLACE customers SET id = ? WHERE id = ?", (value, row_id))
    copy.commit()
    after = take_snapshot(create_engine("sqlite://", creator=lambda: copy, poolclass=StaticPool))
    assert start.diff(copy) == diff_snapshots(start.snapshot, after)
