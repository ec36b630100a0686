"""Fixtures for the checks suite: a small retail backend in a real SQLite file."""

from __future__ import annotations

import datetime as dt
import pathlib
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import JSON, DateTime, Engine, ForeignKey, Numeric, String, create_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column


class Base(DeclarativeBase):
    pass


class Customer(Base):
    __tablename__ = "customers"
    id: Mapped[str] = mapped_column(String, primary_key=True)
    name: Mapped[str]
    email: Mapped[str]


class Order(Base):
    __tablename__ = "orders"
    id: Mapped[str] = mapped_column(String, primary_key=True)
    customer_id: Mapped[str] = mapped_column(ForeignKey("customers.id"))
    status: Mapped[str]
    total: Mapped[Decimal] = mapped_column(Numeric(10, 2))
    refunded: Mapped[Decimal] = mapped_column(Numeric(10, 2), default=Decimal("0"))
    placed_at: Mapped[dt.datetime] = mapped_column(DateTime)
    meta: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class OrderLine(Base):
    __tablename__ = "order_lines"
    order_id: Mapped[str] = mapped_column(ForeignKey("orders.id"), primary_key=True)
    line: Mapped[int] = mapped_column(primary_key=True)
    sku: Mapped[str]
    quantity: Mapped[int]


class Refund(Base):
    __tablename__ = "refunds"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    order_id: Mapped[str] = mapped_column(ForeignKey("orders.id"))
    amount: Mapped[Decimal] = mapped_column(Numeric(10, 2))
    reason: Mapped[str]


def seed(session: Session) -> None:
    session.add_all(
        [
            Customer(id="C-1", name="Ada Byron", email="ada@example.com"),
            Customer(id="C-2", name="Alan Turing", email="alan@example.com"),
            Order(
                id="O-1",
                customer_id="C-1",
                status="delivered",
                total=Decimal("45.50"),
                placed_at=dt.datetime(2026, 11, 1, 10, 30),
                meta={"channel": "web", "tags": ["gift"]},
            ),
            Order(
                id="O-2",
                customer_id="C-1",
                status="delivered",
                total=Decimal("12.00"),
                placed_at=dt.datetime(2026, 11, 2, 9, 0),
            ),
            Order(
                id="O-3",
                customer_id="C-2",
                status="delivered",
                total=Decimal("45.50"),
                placed_at=dt.datetime(2026, 11, 3, 8, 15),
            ),
            OrderLine(order_id="O-1", line=1, sku="MUG", quantity=2),
            OrderLine(order_id="O-1", line=2, sku="TEA", quantity=1),
        ]
    )


@pytest.fixture
def engine(tmp_path: pathlib.Path) -> Iterator[Engine]:
    """A seeded retail database in a SQLite file under the test's temporary directory."""
    database = create_engine(f"sqlite:///{tmp_path / 'retail.db'}")
    Base.metadata.create_all(database)
    with Session(database) as session:
        seed(session)
        session.commit()
    yield database
    database.dispose()


class RetailModels:
    """The test backend's ORM classes, handed to tests through the ``models`` fixture."""

    Base = Base
    Customer = Customer
    Order = Order
    OrderLine = OrderLine
    Refund = Refund


@pytest.fixture
def models() -> type[RetailModels]:
    return RetailModels
