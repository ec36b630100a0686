"""An existing support agent made traceable by passhat with five added lines (each marked ``# passhat``).

The agent is plain Python: its own SQLAlchemy tables, tool functions in a registry, and a handler that
answers a ticket. Without the marked lines it works exactly the same; with them every ticket becomes an
``invoke_agent`` trace with one ``execute_tool`` span per tool call and the rows it read and wrote.

Run it (spans go to ``PASSHAT_ENDPOINT``, default http://127.0.0.1:4318; with no collector there the agent
still runs and passhat logs one warning)::

    python examples/wrap_existing_agent.py --db /tmp/shop.db
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from sqlalchemy import String, create_engine
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import passhat  # passhat


class Base(DeclarativeBase):
    pass


class Order(Base):
    __tablename__ = "orders"
    id: Mapped[str] = mapped_column(String(20), primary_key=True)
    customer: Mapped[str] = mapped_column(String(80))
    status: Mapped[str] = mapped_column(String(20))
    total: Mapped[float]


def seed(engine: Engine) -> None:
    Base.metadata.drop_all(engine)
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add_all(
            [
                Order(id="O-1001", customer="ada", status="delivered", total=42.5),
                Order(id="O-1002", customer="grace", status="shipped", total=19.0),
            ]
        )
        session.commit()


class Shop:
    """The agent's tools: plain functions over the shop database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def find_order(self, order_id: str) -> dict[str, Any] | None:
        with Session(self.engine) as session:
            order = session.get(Order, order_id)
            if order is None:
                return None
            return {"id": order.id, "status": order.status, "total": order.total}

    def refund_order(self, order_id: str) -> dict[str, Any]:
        with Session(self.engine) as session:
            order = session.get(Order, order_id)
            if order is None or order.status != "delivered":
                raise ValueError(f"order {order_id} cannot be refunded")
            order.status = "refunded"
            session.commit()
            return {"id": order_id, "refunded": order.total}


def handle_ticket(tools: dict[str, Any], message: str) -> str:
    """The agent: find the order the customer names, refund it when the policy allows."""
    match = re.search(r"O-\d+", message)
    if match is None:
        return "Which order is this about?"
    order = tools["find_order"](match.group(0))
    if order is None:
        return f"I could not find order {match.group(0)}."
    if order["status"] != "delivered":
        return f"Order {order['id']} is {order['status']}; it can be refunded once delivered."
    refund = tools["refund_order"](order["id"])
    return f"Refunded {refund['refunded']:.2f} for order {order['id']}."


TICKETS = [
    {"id": "T-1", "type": "refund", "message": "Please refund O-1001"},
    {"id": "T-2", "type": "refund", "message": "Refund O-9999 please"},
    {"id": "T-3", "type": "refund", "message": "I want my money back for O-1002"},
]


def main(db_path: str) -> list[str]:
    passhat.configure(service_name="support-agent")  # passhat
    engine = create_engine(f"sqlite:///{db_path}")
    seed(engine)
    passhat.instrument_sqlalchemy(engine)  # passhat
    shop = Shop(engine)
    tools: dict[str, Any] = {"find_order": shop.find_order, "refund_order": shop.refund_order}
    tools = {name: passhat.tool(fn, name=name) for name, fn in tools.items()}  # passhat
    replies = []
    for ticket in TICKETS:
        with passhat.ticket(ticket["id"], task_type=ticket["type"]):  # passhat
            replies.append(handle_ticket(tools, ticket["message"]))
    engine.dispose()
    return replies


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="shop.db", help="SQLite file to create for the demo shop")
    for reply in main(parser.parse_args().db):
        print(reply)
