"""A team's billing-support agent as it runs in production: SQLAlchemy models, four tools, a synchronous agent.

It was written before passhat; wrapping it took what `handle_ticket` shows: `instrument_sqlalchemy`, the tools
decorated with `@passhat.tool`, and one `passhat.ticket` per conversation.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine, ForeignKey, Integer, String, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import passhat


class Base(DeclarativeBase):
    pass


class Customer(Base):
    __tablename__ = "customers"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String)
    email: Mapped[str] = mapped_column(String, unique=True)
    phone: Mapped[str] = mapped_column(String)
    card_number: Mapped[str] = mapped_column(String)


class Plan(Base):
    __tablename__ = "plans"
    code: Mapped[str] = mapped_column(String, primary_key=True)
    monthly_cents: Mapped[int] = mapped_column(Integer)


class Subscription(Base):
    __tablename__ = "subscriptions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    customer_id: Mapped[int] = mapped_column(ForeignKey("customers.id"))
    plan_code: Mapped[str] = mapped_column(ForeignKey("plans.code"))


class Invoice(Base):
    __tablename__ = "invoices"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    customer_id: Mapped[int] = mapped_column(ForeignKey("customers.id"))
    amount_cents: Mapped[int] = mapped_column(Integer)


# -- the four tools ---------------------------------------------------------------------------------------
@passhat.tool
def find_customer(session: Session, email: str) -> dict[str, Any] | None:
    customer = session.scalars(select(Customer).where(Customer.email == email)).first()
    return None if customer is None else {"id": customer.id, "name": customer.name}


@passhat.tool
def get_subscription(session: Session, customer_id: int) -> dict[str, Any] | None:
    found = session.scalars(select(Subscription).where(Subscription.customer_id == customer_id)).first()
    return None if found is None else {"id": found.id, "plan_code": found.plan_code}


@passhat.tool
def change_plan(session: Session, subscription_id: int, plan_code: str) -> dict[str, Any]:
    if session.get(Plan, plan_code) is None:
        raise ValueError(f"no plan {plan_code!r}")
    subscription = session.get(Subscription, subscription_id)
    if subscription is None:
        raise LookupError(f"no subscription {subscription_id}")
    subscription.plan_code = plan_code
    session.commit()
    return {"id": subscription_id, "plan_code": plan_code}


@passhat.tool
def last_invoice(session: Session, customer_id: int) -> dict[str, Any] | None:
    found = session.scalars(
        select(Invoice).where(Invoice.customer_id == customer_id).order_by(Invoice.id.desc())
    ).first()
    return None if found is None else {"id": found.id, "amount_cents": found.amount_cents}


EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
PLAN = re.compile(r"\b(basic|pro|team)\b plan")


def task_type_of(opening: str) -> str:
    """How the app routes a conversation, from the customer's first message."""
    return "close_account" if "close my account" in opening.lower() else "change_plan"


class BillingAgent:
    """Answers one customer conversation; `reply` takes the customer's messages so far, returns the next answer.

    `forget_rate` is the bug this team has not found yet: now and then it confirms a plan change it never made.
    """

    def __init__(self, engine: Engine, *, forget_rate: float = 0.0, seed: object = None) -> None:
        self.engine = engine
        self.forget_rate = forget_rate
        self.rng = random.Random(str(seed)) if seed is not None else random.Random()
        self.found: dict[str, Any] = {}

    def reply(self, customer_messages: list[str]) -> str:
        email = EMAIL.search(" ".join(customer_messages))
        if email is None:
            return "Could you tell me the email address on your account?"
        with Session(self.engine) as session:
            customer = find_customer(session, email.group(0))
            if customer is None:
                return "I could not find an account with that email."
            self.found["customer_id"] = customer["id"]
            if task_type_of(customer_messages[0]) == "close_account":
                return "I'm sorry, I can't close accounts in chat: you can close it from your account settings page."
            plan = PLAN.search(customer_messages[0].lower())
            subscription = get_subscription(session, customer["id"])
            if plan is None or subscription is None:
                return "I could not find a subscription to change."
            if self.rng.random() >= self.forget_rate:
                change_plan(session, subscription["id"], plan.group(1))
            return f"Done: your subscription is now on the {plan.group(1)} plan."


def handle_ticket(
    engine: Engine, ticket_id: str, customer: Callable[[str | None], str], *, forget_rate: float = 0.0
) -> None:
    """Serve one conversation in production, traced by passhat (`customer` gives the next customer message)."""
    agent = BillingAgent(engine, forget_rate=forget_rate)
    messages = [customer(None)]
    with passhat.ticket(ticket_id, task_type=task_type_of(messages[0])) as ticket:
        for _ in range(4):
            ticket.customer_says(messages[-1])
            answer = agent.reply(messages)
            ticket.agent_says(answer)
            if "customer_id" in agent.found:
                email = EMAIL.search(" ".join(messages))
                plan = PLAN.search(messages[0].lower())
                ticket.set_intent(
                    {"customer_id": agent.found["customer_id"], "email": email.group(0) if email else None}
                    | ({"plan_code": plan.group(1)} if plan else {})
                )
            if not answer.endswith("?"):
                break
            messages.append(customer(answer))
        ticket.resolve()
