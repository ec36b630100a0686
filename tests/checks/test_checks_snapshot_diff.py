"""Snapshots and the diff between two of them: rows by primary key, field-level before and after."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from sqlalchemy import Engine, create_engine
from sqlalchemy.orm import Session

from passhat.checks import SnapshotError, diff_snapshots, take_snapshot


def test_snapshot_holds_every_row_by_primary_key(engine: Engine) -> None:
    snapshot = take_snapshot(engine)
    assert sorted(snapshot.tables) == ["customers", "order_lines", "orders", "refunds"]
    assert snapshot.row_count == 7
    order = snapshot.get("orders", {"id": "O-1"})
    assert order is not None
    assert order["total"] == Decimal("45.50")
    assert order["placed_at"] == dt.datetime(2026, 11, 1, 10, 30)
    assert snapshot.table("order_lines").primary_key == ("order_id", "line")
    assert [row["id"] for row in snapshot.rows("orders", {"customer_id": "C-1"})] == ["O-1", "O-2"]


def test_identical_states_have_an_empty_diff(engine: Engine) -> None:
    diff = diff_snapshots(take_snapshot(engine), take_snapshot(engine))
    assert diff.is_empty
    assert diff.describe() == "no changes"


def test_update_insert_and_delete_are_reported_with_field_level_changes(engine: Engine, models: type) -> None:
    before = take_snapshot(engine)
    with Session(engine) as session:
        order = session.get(models.Order, "O-1")
        assert order is not None
        order.status = "refunded"
        order.refunded = Decimal("45.50")
        session.add(models.Refund(order_id="O-1", amount=Decimal("45.50"), reason="damaged"))
        line = session.get(models.OrderLine, ("O-1", 2))
        session.delete(line)
        session.commit()
    diff = diff_snapshots(before, take_snapshot(engine))

    assert [(c.table, c.op) for c in diff] == [
        ("order_lines", "delete"),
        ("orders", "update"),
        ("refunds", "insert"),
    ]
    update = diff.updated[0]
    assert update.key == {"id": "O-1"}
    assert update.changed_fields == {
        "status": ("delivered", "refunded"),
        "refunded": (Decimal("0.00"), Decimal("45.50")),
    }
    assert diff.deleted[0].key == {"order_id": "O-1", "line": 2}
    assert diff.inserted[0].after is not None and diff.inserted[0].after["amount"] == Decimal("45.50")
    assert len(diff.for_table("orders")) == 1
    assert diff.find("orders", {"id": "O-1"}) is update
    assert "orders id='O-1' updated: status 'delivered' -> 'refunded'" in diff.describe()


def test_rewriting_a_value_in_another_spelling_is_not_a_change(engine: Engine) -> None:
    before = take_snapshot(engine)
    with engine.begin() as connection:
        # 45.50 stored as the float 45.5 and the JSON document re-serialised with other spacing.
        connection.exec_driver_sql("UPDATE orders SET total = 45.5 WHERE id = 'O-1'")
        connection.exec_driver_sql(
            'UPDATE orders SET meta = \'{"tags": ["gift"],   "channel": "web"}\' WHERE id = \'O-1\''
        )
        connection.exec_driver_sql("UPDATE orders SET placed_at = placed_at WHERE id = 'O-1'")
    assert diff_snapshots(before, take_snapshot(engine)).is_empty


def test_null_to_value_is_a_change(engine: Engine) -> None:
    before = take_snapshot(engine)
    with engine.begin() as connection:
        connection.exec_driver_sql("UPDATE orders SET meta = '{\"note\": 1}' WHERE id = 'O-2'")
    diff = diff_snapshots(before, take_snapshot(engine))
    assert diff.updated[0].changed_fields == {"meta": (None, {"note": 1})}


def test_snapshot_with_metadata_reads_values_through_the_declared_types(engine: Engine, models: type) -> None:
    snapshot = take_snapshot(engine, metadata=models.Base.metadata)
    row = snapshot.get("orders", {"id": "O-1"})
    assert row is not None and row["meta"] == {"channel": "web", "tags": ["gift"]}


def test_snapshot_accepts_a_connection_or_a_session(engine: Engine) -> None:
    with engine.connect() as connection:
        assert take_snapshot(connection, tables=["orders"]).row_count == 3
    with Session(engine) as session:
        assert take_snapshot(session, exclude=["orders"]).row_count == 4


def test_unknown_table_is_one_clear_error(engine: Engine) -> None:
    with pytest.raises(SnapshotError, match="unknown table"):
        take_snapshot(engine, tables=["ordres"])


def test_table_without_primary_key_is_refused_with_what_to_do(tmp_path: object) -> None:
    database = create_engine("sqlite://")
    with database.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE audit (message TEXT)")
    with pytest.raises(SnapshotError, match=r"no primary key.*exclude="):
        take_snapshot(database)
    assert take_snapshot(database, exclude=["audit"]).tables == {}


def test_not_a_database_is_one_clear_error() -> None:
    with pytest.raises(SnapshotError, match="expected a SQLAlchemy Engine"):
        take_snapshot("sqlite:///x.db")  # type: ignore[arg-type]


def test_diffing_something_else_than_snapshots_is_one_clear_error(engine: Engine) -> None:
    with pytest.raises(SnapshotError, match="takes two Snapshot objects"):
        diff_snapshots(take_snapshot(engine), {})  # type: ignore[arg-type]


def test_diff_serialises_to_json_types(engine: Engine) -> None:
    before = take_snapshot(engine)
    with engine.begin() as connection:
        connection.exec_driver_sql("UPDATE orders SET refunded = 12 WHERE id = 'O-2'")
    change = diff_snapshots(before, take_snapshot(engine)).to_dict()["changes"][0]
    assert change["before"]["refunded"] == "0.00"
    assert change["after"]["refunded"] == "12.00"
    assert change["after"]["placed_at"] == "2026-11-02T09:00:00"


def test_get_finds_a_row_by_any_fields_that_pick_out_one_row(engine: Engine) -> None:
    snapshot = take_snapshot(engine)
    row = snapshot.get("customers", {"email": "alan@example.com"})
    assert row is not None and row["id"] == "C-2"
    assert snapshot.get("orders", {"customer_id": "C-1"}) is None  # two rows match
    assert snapshot.get("orders", {"id": "O-9"}) is None
    assert snapshot.rows("orders", {"id": "O-1", "status": "cancelled"}) == []
