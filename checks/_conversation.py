"""What a check sees of the conversation: its turns (with the customer's consents) and the agent's tool calls.

A tool call carries its position in the conversation (``turn``: the index, in the transcript, of the agent turn
during which it was made), and a customer turn records consent as a fact (``Turn.consent``: which action the
customer agreed to), so a check can tell a write made after the customer's yes from one made before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from passhat import ToolOutcome

ANY_ACTION = "*"
"""``Turn.consent`` when the customer agreed to whatever the agent's turn before proposed (free text)."""


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call the agent made during a trial, with how it came out and when.

    ``turn`` is the call's position in the conversation: the index (in the transcript) of the agent turn during
    which it was made, so a call made while answering the customer's yes comes after that yes. None where the
    position is unknown (a production trace, a record stored before positions were kept).
    """

    name: str
    arguments: dict[str, Any]
    outcome: ToolOutcome
    error_type: str | None = None
    error_message: str | None = None
    is_write: bool = False
    turn: int | None = None

    def describe(self) -> str:
        arguments = ", ".join(f"{name}={value!r}" for name, value in self.arguments.items())
        call = f"{self.name}({arguments})"
        if self.outcome == "ok":
            return f"{call} succeeded"
        if self.outcome == "empty":
            return f"{call} came back empty"
        detail = f": {self.error_message}" if self.error_message else ""
        return f"{call} failed with {self.error_type or 'an error'}{detail}"


@dataclass(frozen=True)
class Turn:
    """One turn of the conversation as a check sees it.

    ``consent`` is set on a customer turn that agrees to an action the agent proposed: the action's name (a
    tool) when the customer's side knows it, else ``ANY_ACTION`` (whatever the agent's turn before proposed).
    """

    role: str
    text: str
    consent: str | None = None


def conversation_of(transcript: list[tuple[str, str]], consents: dict[int, str]) -> tuple[Turn, ...]:
    """The turns of a stored transcript, with the consents recorded for it (turn index -> action)."""
    return tuple(Turn(role, text, consents.get(index)) for index, (role, text) in enumerate(transcript))
