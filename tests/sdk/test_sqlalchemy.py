"""instrument_sqlalchemy on a real SQLite file: ORM diffs, before-images of rows read, Core DML counts."""

from __future__ import annotations

import datetime
import decimal
import pathlib
from collections.abc import Iterator

import pytest
from sqlalchemy import ForeignKey, Numeric, String, create_engine, delete, insert, select, text, update
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import passhat
from passhat.testing import Capture


class Base(DeclarativeBase):
    pass


class Customer(Base):
    __tablename__ = "customers"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(80))
    email: Mapped[str] = mapped_column(String(120))


class Order(Base):
    __tablename__ = "orders"
    id: Mapped[str] = mapped_column(String(20), primary_key=True)
    customer_id: Mapped[int] = mapped_column(ForeignKey("customers.id"))
    status: Mapped[str] = mapped_column(String(20))
    total: Mapped[decimal.Decimal] = mapped_column(Numeric(10, 2))
    placed_at: Mapped[datetime.date]


class OrderLine(Base):
    __tablename__ = "order_lines"
    order_id: Mapped[str] = mapped_column(ForeignKey("orders.id"), primary_key=True)
    line_no: Mapped[int] = mapped_column(primary_key=True)
    sku: Mapped[str] = mapped_column(String(20))


@pytest.fixture
def engine(tmp_path: pathlib.Path) -> Iterator[Engine]:
    engine = create_engine(f"sqlite:///{tmp_path / 'shop.db'}")
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add(Customer(id=1, name="Ada", email="ada@example.com"))
        session.add(
            Order(
                id="O-1",
                customer_id=1,
                status="delivered",
                total=decimal.Decimal("42.50"),
                placed_at=datetime.date(2026, 1, 5),
            )
        )
        session.add(OrderLine(order_id="O-1", line_no=1, sku="sku-1"))
        session.commit()
    handle = passhat.instrument_sqlalchemy(engine)
    yield engine
    handle.uninstrument()
    engine.dispose()


def test_an_orm_update_records_only_the_changed_columns(engine: Engine, passhat_capture: Capture) -> None:
    with passhat.ticket("T-1", task_type="refund"), Session(engine) as session:
        order = session.get(Order, "O-1")
        assert order is not None
        order.status = "refunded"
        order.customer_id = 1  # set to the same value: not a change
        session.commit()
    (write,) = passhat_capture.state_writes()
    assert write == {
        "table": "orders",
        "key": {"id": "O-1"},
        "op": "update",
        "before": {"status": "delivered"},
        "after": {"status": "refunded"},
        "changed": ["status"],
    }


def test_inserts_and_deletes_carry_the_full_row_and_composite_keys(engine: Engine, passhat_capture: Capture) -> None:
    with passhat.ticket("T-2", task_type="exchange"), Session(engine) as session:
        session.add(OrderLine(order_id="O-1", line_no=2, sku="sku-2"))
        session.flush()
        old = session.get(OrderLine, ("O-1", 1))
        session.delete(old)
        session.commit()
    inserted, deleted = passhat_capture.state_writes()
    assert inserted["op"] == "insert"
    assert inserted["key"] == {"order_id": "O-1", "line_no": 2}
    assert inserted["after"] == {"order_id": "O-1", "line_no": 2, "sku": "sku-2"}
    assert "before" not in inserted
    assert deleted["op"] == "delete"
    assert deleted["key"] == {"order_id": "O-1", "line_no": 1}
    assert deleted["before"] == {"order_id": "O-1", "line_no": 1, "sku": "sku-1"}
    assert "after" not in deleted


def test_an_autoincrement_key_is_known_in_the_insert_event(engine: Engine, passhat_capture: Capture) -> None:
    with passhat.ticket("T-3", task_type="signup"), Session(engine) as session:
        session.add(Customer(name="Grace", email="grace@example.com"))
        session.commit()
    (write,) = passhat_capture.state_writes()
    assert write["key"] == {"id": 2}
    assert write["after"]["email"] == passhat.current().redactor.text("grace@example.com")
    assert write["after"]["email"].endswith("@example.com") and write["after"]["email"] != "grace@example.com"


def test_rows_read_inside_a_ticket_are_recorded_once_as_before_images(engine: Engine, passhat_capture: Capture) -> None:
    with passhat.ticket("T-4", task_type="refund"), Session(engine) as session:
        session.scalars(select(Order)).all()
        session.expunge_all()
        session.scalars(select(Order)).all()  # loaded again: not recorded twice
        session.get(Customer, 1)
    reads = passhat_capture.state_reads()
    assert reads == [
        {
            "table": "orders",
            "key": {"id": "O-1"},
            "row": {
                "id": "O-1",
                "customer_id": 1,
                "status": "delivered",
                "total": "42.50",
                "placed_at": "2026-01-05",
            },
        },
        {
            "table": "customers",
            "key": {"id": 1},
            "row": {"id": 1, "name": "Ada", "email": passhat.current().redactor.text("ada@example.com")},
        },
    ]


def test_nothing_is_recorded_outside_a_ticket(engine: Engine, passhat_capture: Capture) -> None:
    with Session(engine) as session:
        order = session.get(Order, "O-1")
        assert order is not None
        order.status = "lost"
        session.commit()
    assert passhat_capture.spans == []


def test_writes_made_inside_a_tool_land_on_the_tool_span(engine: Engine, passhat_capture: Capture) -> None:
    @passhat.tool
    def cancel_order(order_id: str) -> str:
        with Session(engine) as session:
            order = session.get(Order, order_id)
            assert order is not None
            order.status = "cancelled"
            session.commit()
            return order.status

    with passhat.ticket("T-5", task_type="cancel"):
        cancel_order("O-1")
    tool = passhat_capture.one("execute_tool cancel_order")
    assert [event.name for event in tool.events] == ["passhat.state_read", "passhat.state_write"]


def test_core_dml_is_recorded_with_its_table_and_row_count(engine: Engine, passhat_capture: Capture) -> None:
    orders = Order.__table__
    with passhat.ticket("T-6", task_type="bulk"), engine.begin() as conn:
        conn.execute(update(orders).where(orders.c.customer_id == 1).values(status="held"))
        conn.execute(insert(OrderLine.__table__), [{"order_id": "O-1", "line_no": n, "sku": "x"} for n in (5, 6)])
        conn.execute(delete(OrderLine.__table__).where(OrderLine.__table__.c.line_no >= 5))
        conn.execute(text("UPDATE orders SET status = 'raw'"))  # raw SQL text: documented as not captured
    assert [(w["table"], w["op"], w["rowcount"]) for w in passhat_capture.state_writes()] == [
        ("orders", "bulk_update", 1),
        ("order_lines", "bulk_insert", 2),
        ("order_lines", "bulk_delete", 2),
    ]


def test_orm_bulk_update_statements_are_recorded_once(engine: Engine, passhat_capture: Capture) -> None:
    with passhat.ticket("T-7", task_type="bulk"), Session(engine) as session:
        session.execute(update(Order).where(Order.status == "delivered").values(status="archived"))
        session.commit()
    assert [(w["table"], w["op"], w["rowcount"]) for w in passhat_capture.state_writes()] == [
        ("orders", "bulk_update", 1)
    ]


def test_uninstrument_stops_recording(engine: Engine, tmp_path: pathlib.Path, passhat_capture: Capture) -> None:
    other = create_engine(f"sqlite:///{tmp_path / 'other.db'}")
    Base.metadata.create_all(other)
    handle = passhat.instrument_sqlalchemy(other)
    handle.uninstrument()
    handle.uninstrument()  # twice is harmless
    with passhat.ticket("T-8", task_type="signup"), Session(other) as session:
        session.add(Customer(id=9, name="Lin", email="lin@example.com"))
        session.commit()
    assert passhat_capture.state_writes() == []
    other.dispose()


def test_instrumenting_something_that_is_not_an_engine_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="expects a SQLAlchemy Engine"):
        passhat.instrument_sqlalchemy("sqlite:///x.db")


async def test_an_async_engine_records_the_same_diffs(tmp_path: pathlib.Path, passhat_capture: Capture) -> None:
    from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'async.db'}")
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    handle = passhat.instrument_sqlalchemy(engine)
    try:
        async with passhat.ticket("T-9", task_type="signup"), AsyncSession(engine) as session:
            session.add(Customer(id=5, name="Lin", email="lin@example.com"))
            await session.commit()
            customer = await session.get(Customer, 5)
            assert customer is not None
            customer.name = "Lin Q."
            await session.commit()
            await session.execute(update(Order).values(status="held"))
            await session.commit()
    finally:
        handle.uninstrument()
        await engine.dispose()
    assert [(w["table"], w["op"]) for w in passhat_capture.state_writes()] == [
        ("customers", "insert"),
        ("customers", "update"),
        ("orders", "bulk_update"),
    ]
    assert passhat_capture.state_writes()[1]["after"] == {"name": "Lin Q."}
