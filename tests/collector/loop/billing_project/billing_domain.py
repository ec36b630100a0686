"""The billing team's passhat domain: what replaying their own agent on their own backend needs, nothing more.

No package, no entry point, no MCP server, no reference plan: `passhat.toml` names `billing_domain:domain` and
`billing_domain:make_agent`, and passhat imports this file from the config's folder.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from billing_app import Base, BillingAgent, Customer, Invoice, Plan, Subscription
from sqlalchemy import Connection, insert, select

from passhat.checks import Check, all_of, no_other_writes, response_contains, updated
from passhat.sandbox import CustomerScript, Domain, Message, TaskType, Toolbox, TrialContext


def seed(connection: Connection, seed: int = 0, size: str = "small") -> None:
    """Synthetic customers: replayed tickets lay their own (pseudonymous) rows over these."""
    count = 30 if size == "small" else 300
    connection.execute(
        insert(Plan), [{"code": c, "monthly_cents": p} for c, p in (("basic", 900), ("pro", 2900), ("team", 9900))]
    )
    connection.execute(
        insert(Customer),
        [
            {"id": i, "name": f"Customer {i}", "email": f"customer{i}@billing.test", "phone": "", "card_number": ""}
            for i in range(1, count + 1)
        ],
    )
    connection.execute(
        insert(Subscription), [{"id": i, "customer_id": i, "plan_code": "basic"} for i in range(1, count + 1)]
    )
    connection.execute(insert(Invoice), [{"id": i, "customer_id": i, "amount_cents": 900} for i in range(1, count + 1)])


def candidates(connection: Connection) -> list[dict[str, Any]]:
    """Scenarios drawn from the seed, for `passhat bench --domain` (a replay of real tickets brings its own)."""
    rows = connection.execute(select(Customer.id, Customer.email).order_by(Customer.id)).all()
    return [{"customer_id": row.id, "email": row.email, "plan_code": "team"} for row in rows]


def change_plan_script(intent: Mapping[str, Any]) -> CustomerScript:
    return CustomerScript(
        goal=f"Move my subscription to the {intent['plan_code']} plan.",
        opening=f"Hi, please switch my subscription to the {intent['plan_code']} plan.",
        facts={"email": intent["email"]},
    )


def change_plan_check(intent: Mapping[str, Any]) -> Check:
    return all_of(
        updated("subscriptions", {"customer_id": intent["customer_id"]}, {"plan_code": intent["plan_code"]}),
        no_other_writes(),
    )


def close_account_script(intent: Mapping[str, Any]) -> CustomerScript:
    return CustomerScript(
        goal="Close my account.", opening="Hi, please close my account.", facts={"email": intent["email"]}
    )


def close_account_check(intent: Mapping[str, Any]) -> Check:
    return all_of(response_contains("account settings"), no_other_writes())


domain = Domain(
    name="billing",
    description="Subscriptions, plans and invoices of a SaaS product.",
    metadata=Base.metadata,
    seed=seed,
    task_types={
        "change_plan": TaskType(
            name="change_plan",
            kind="write",
            description="Move a subscription to another plan.",
            candidates=candidates,
            script=change_plan_script,
            check=change_plan_check,
            write_tables=frozenset({"subscriptions"}),
        ),
        "close_account": TaskType(
            name="close_account",
            kind="refuse",
            description="Closing an account is not done in chat: point to the settings page.",
            candidates=candidates,
            script=close_account_script,
            check=close_account_check,
        ),
    },
    lookup_tools=frozenset({"find_customer", "get_subscription", "last_invoice"}),
    write_tools=frozenset({"change_plan"}),
)


class ReplayedBillingAgent:
    """The team's synchronous agent in a trial: on the trial's own database, one reply per turn."""

    def __init__(self, context: TrialContext, forget_rate: float) -> None:
        self.seed = (context.scenario.scenario_id, context.attempt)  # each trial draws its own bug, reproducibly
        self.forget_rate = forget_rate
        self.agent: BillingAgent | None = None

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        if self.agent is None:
            self.agent = BillingAgent(tools.engine, forget_rate=self.forget_rate, seed=self.seed)
        said = [message.text for message in conversation if message.role == "customer"]
        text = await asyncio.to_thread(self.agent.reply, said)
        return Message("agent", text, final=not text.endswith("?"))


def make_agent(context: TrialContext, forget_rate: float = 0.0) -> ReplayedBillingAgent:
    return ReplayedBillingAgent(context, forget_rate)
