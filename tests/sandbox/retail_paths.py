"""A retail write task scripted two ways, for agents whose model is scripted: the correct path and a wrong entity.

The ticket is a pending-order cancellation whose customer has a second pending order. The correct path verifies
the customer, reads the order, asks for a yes and cancels *that* order; the faulty path cancels the sibling
order instead (the right kind of write on the wrong row), which the check must fail as `wrong_entity`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text

from passhat.sandbox import Message, Sandbox, Scenario


@dataclass(frozen=True)
class ToolStep:
    """One tool call the scripted model makes."""

    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Turn:
    """One agent turn: tool calls (each answered before the next model request), then its text."""

    calls: tuple[ToolStep, ...]
    text: str


@dataclass(frozen=True)
class CancelTicket:
    scenario: Scenario
    sibling: str

    @property
    def order_id(self) -> str:
        return str(self.scenario.intent["order_id"])

    def turns(self, *, wrong_entity: bool = False) -> list[Turn]:
        """The agent's turns, the customer being the ScriptedCustomer (it answers a question, stops on a statement)."""
        intent = self.scenario.intent
        target = self.sibling if wrong_entity else self.order_id
        return [
            Turn((), "Happy to help. What is the email address on your account?"),
            Turn(
                (
                    ToolStep("call_1", "find_customer_by_email", {"email": intent["email"]}),
                    ToolStep("call_2", "get_order", {"order_id": self.order_id}),
                ),
                f"Order {self.order_id} is pending. I will cancel it ({intent['reason']}). Shall I proceed?",
            ),
            Turn(
                (ToolStep("call_3", "cancel_pending_order", {"order_id": target, "reason": intent["reason"]}),),
                f"Done: order {target} is cancelled and the refund is on its way.",
            ),
        ]


def cancel_ticket(sandbox: Sandbox) -> CancelTicket:
    """A cancellation scenario whose customer has another pending order (the wrong-entity candidate)."""
    database = sandbox.memory_copy()
    try:
        with database.engine.connect() as connection:
            for scenario in sandbox.scenarios("cancel_pending_order", 30):
                rows = connection.execute(
                    text(
                        "SELECT order_id FROM orders WHERE customer_id = :c AND status = 'pending' AND order_id != :o"
                    ),
                    {"c": scenario.intent["customer_id"], "o": scenario.intent["order_id"]},
                ).all()
                if rows:
                    return CancelTicket(scenario, str(rows[0][0]))
    finally:
        database.close()
    raise AssertionError("no cancellation scenario with a second pending order in the small retail seed")


class SaysNo:
    """The scripted customer, but it answers the approval question with a no (no consent), then stops."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.refused = inner, False

    async def opening(self) -> Message:
        return await self.inner.opening()  # type: ignore[no-any-return]

    async def respond(self, conversation: Sequence[Message]) -> Message:
        if conversation[-1].text.startswith("Before I go ahead"):
            self.refused = True
            return Message("customer", "No, leave it as it is.")
        if self.refused:
            return Message("customer", "Thanks.", stop=True)
        return await self.inner.respond(conversation)  # type: ignore[no-any-return]


READS = ["find_customer_by_email", "get_order"]
REFUSED = "Understood: your order stays as it is."
"""What the scripted model answers once the customer refused the cancellation."""


def assert_asked_then_cancelled(result: Any, ticket: CancelTicket) -> None:
    """The approval path with a yes: the agent's second turn asked (stating the order and the reason), the
    customer's yes was consent to the cancellation, the trial's cancellation ran after it, and the trial passed."""
    assert result.record.infra_error is None and result.passed, result.record.verdict
    asked = [m.text for m in result.record.conversation if m.role == "agent"][1]
    assert asked.startswith("Before I go ahead: cancel pending order (order id ")
    assert ticket.order_id in asked and str(ticket.scenario.intent["reason"]) in asked
    assert [m.consent for m in result.record.conversation if m.consent] == ["cancel_pending_order"]
    assert [c.name for c in result.record.tool_calls] == [*READS, "cancel_pending_order"]


def assert_refused_and_not_cancelled(result: Any) -> None:
    """The approval path with a no: nothing was written, and the model was told and answered."""
    assert result.record.infra_error is None and not result.passed
    assert [c.name for c in result.record.tool_calls] == READS
    assert [m.text for m in result.record.conversation if m.role == "agent"][-1] == REFUSED
