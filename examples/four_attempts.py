"""Four attempts at the same refund, graded on the backend's terminal state.

Ada asks for a refund of her damaged kettle (order O-1001). Policy: refund the item price, not the shipping.
Three of the four attempts end cleanly with a confident closing message; two of them make valid,
state-changing tool calls. Only one is right, and the checks say what is wrong with each of the others.

Run it:  python examples/four_attempts.py
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from sqlalchemy import Engine, ForeignKey, Numeric, create_engine, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from passhat.checks import (
    Check,
    CheckContext,
    FailureSignature,
    ToolCallRecord,
    TrialRecord,
    Verdict,
    all_of,
    check,
    classify_failure,
    inserted,
    no_other_writes,
    record_changes,
    response_contains,
    take_snapshot,
    updated,
)


class Base(DeclarativeBase):
    pass


class Order(Base):
    __tablename__ = "orders"
    id: Mapped[str] = mapped_column(primary_key=True)
    customer_id: Mapped[str]
    item: Mapped[str]
    item_price: Mapped[Decimal] = mapped_column(Numeric(10, 2))
    shipping: Mapped[Decimal] = mapped_column(Numeric(10, 2))
    status: Mapped[str]


class Refund(Base):
    __tablename__ = "refunds"
    id: Mapped[int] = mapped_column(primary_key=True)
    order_id: Mapped[str] = mapped_column(ForeignKey("orders.id"))
    amount: Mapped[Decimal] = mapped_column(Numeric(10, 2))


class Tools:
    """The backend's tools as the agent sees them; every call is recorded with its outcome."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.calls: list[ToolCallRecord] = []

    def find_order(self, order_id: str) -> Order | None:
        order = self.session.get(Order, order_id)
        self.calls.append(ToolCallRecord("find_order", {"order_id": order_id}, "ok" if order else "empty"))
        return order

    def refund_order(self, order_id: str, amount: Decimal) -> bool:
        arguments = {"order_id": order_id, "amount": str(amount)}
        order = self.session.get(Order, order_id)
        if order is None or order.status != "delivered":
            reason = "only a delivered order can be refunded"
            self.calls.append(ToolCallRecord("refund_order", arguments, "error", "not_allowed", reason, True))
            return False
        order.status = "refunded"
        self.session.add(Refund(order_id=order_id, amount=amount))
        self.session.commit()
        self.calls.append(ToolCallRecord("refund_order", arguments, "ok", is_write=True))
        return True


# Four agents. Each returns its closing message; all four sound equally sure of themselves.
def closes_without_writing(tools: Tools) -> str:
    order = tools.find_order("O-1001")
    assert order is not None
    return f"I've processed your refund of ${order.item_price}. It will arrive in 5 to 7 business days."


def refunds_the_wrong_order(tools: Tools) -> str:
    tools.find_order("O-1001")
    other = tools.find_order("O-1002")  # Ada's other order: the right kind of write, the wrong row
    assert other is not None
    tools.refund_order(other.id, other.item_price)
    return f"Done: ${other.item_price} is on its way back to your card."


def refunds_the_wrong_amount(tools: Tools) -> str:
    order = tools.find_order("O-1001")
    assert order is not None
    total = order.item_price + order.shipping  # policy says shipping is not refunded
    tools.refund_order(order.id, total)
    return f"Done: ${total} is on its way back to your card."


def does_it_right(tools: Tools) -> str:
    order = tools.find_order("O-1001")
    assert order is not None
    tools.refund_order(order.id, order.item_price)
    return f"Done: ${order.item_price} is on its way back to your card."


@check(name="example.refund_item_price")
def refund_item_price(order_id: str, amount: Decimal) -> Check:
    """The order is refunded once, for the item price, nothing else changes, and the amount is disclosed."""
    return all_of(
        updated("orders", where={"id": order_id}, to={"status": "refunded"}),
        inserted("refunds", match={"order_id": order_id, "amount": amount}),
        no_other_writes(),
        response_contains(f"${amount}"),
    )


def build_backend(path: Path) -> None:
    engine = create_engine(f"sqlite:///{path}")
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add_all(
            [
                Order(id="O-1001", customer_id="C-1", item="kettle", item_price=Decimal("45.50"),
                      shipping=Decimal("4.99"), status="delivered"),
                Order(id="O-1002", customer_id="C-1", item="teapot", item_price=Decimal("45.50"),
                      shipping=Decimal("0.00"), status="delivered"),
            ]
        )  # fmt: skip
        session.commit()
    engine.dispose()


@dataclass
class Attempt:
    name: str
    closing: str
    verdict: Verdict
    signature: FailureSignature | None


def run_attempt(template: Path, workdir: Path, name: str, agent: Callable[[Tools], str]) -> Attempt:
    database = workdir / f"{name}.db"
    shutil.copyfile(template, database)  # every attempt starts from the same state
    engine: Engine = create_engine(f"sqlite:///{database}")
    initial = take_snapshot(engine)
    # Expected values come from the starting state and the customer's intent, never from what an agent did.
    with Session(engine) as session:
        kettle = session.scalars(select(Order).where(Order.id == "O-1001")).one()
        task_check = refund_item_price("O-1001", kettle.item_price)
    with record_changes(engine) as log, Session(engine) as session:
        tools = Tools(session)
        closing = agent(tools)
    diff = log.diff()
    verdict = task_check(CheckContext(diff=diff, final_response=closing, agent_messages=[closing], initial=initial))
    record = TrialRecord(
        passed=verdict.passed,
        verdict=verdict,
        diff=diff,
        tool_calls=tools.calls,
        termination_reason="customer_stop",
        transcript=[
            ("customer", "My kettle arrived broken, order O-1001. Refund please."),
            ("agent", closing),
        ],
        final_response=closing,
    )
    engine.dispose()
    return Attempt(name, closing, verdict, classify_failure(record))


AGENTS: dict[str, Callable[[Tools], str]] = {
    "closes_without_writing": closes_without_writing,
    "refunds_the_wrong_order": refunds_the_wrong_order,
    "refunds_the_wrong_amount": refunds_the_wrong_amount,
    "does_it_right": does_it_right,
}


def main(workdir: Path | None = None) -> list[Attempt]:
    with tempfile.TemporaryDirectory() as scratch:
        folder = workdir or Path(scratch)
        template = folder / "template.db"
        build_backend(template)
        attempts = [run_attempt(template, folder, name, agent) for name, agent in AGENTS.items()]
    for attempt in attempts:
        outcome = "PASS" if attempt.verdict.passed else f"FAIL  {attempt.signature.label if attempt.signature else ''}"
        print(f"{attempt.name:<26} {outcome}")
        print(f"    agent said: {attempt.closing}")
        if attempt.signature is not None:
            print(f"    evidence:   {attempt.signature.evidence}")
    return attempts


if __name__ == "__main__":
    main()
