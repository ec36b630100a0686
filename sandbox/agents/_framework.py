"""What every framework adapter shares: the customer's new words, the agent's reply, the missing-extra error."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType

from passhat.sandbox.agents._conversation import Message
from passhat.sandbox.domain import DomainError


def require(module: str, extra: str) -> ModuleType:
    """Import a framework's package, or fail with the `pip install` that brings it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError:
        raise DomainError(f"this adapter needs {module.split('.')[0]}: pip install 'passhat[{extra}]'") from None


def customer_since(conversation: Sequence[Message], seen: int) -> str:
    """What the customer said since the agent last answered (usually one message)."""
    return "\n".join(m.text for m in conversation[seen:] if m.role == "customer")


def agent_reply(text: str) -> Message:
    """The framework's answer as the agent's turn: a question asks for more, anything else is final."""
    text = text.strip() or "(no reply)"
    return Message("agent", text, final=not text.endswith("?"))
