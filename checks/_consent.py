"""The customer's yes before a write: the agent proposed the action with its key values, the customer agreed,
and only then did the write happen.

Read from the conversation (``CheckContext.conversation``, whose customer turns record consent as a fact) and
the tool calls (``CheckContext.tool_calls``, each with its turn), never from the words of the reply.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from passhat.checks._conversation import ANY_ACTION, ToolCallRecord, Turn
from passhat.checks._registry import check, evaluate
from passhat.checks._response import _phrase_pattern, normalize_text
from passhat.checks._verdict import Check, CheckContext, Diagnostic, Verdict


def _spoken(value: Any) -> list[str]:
    """How a key value is said: each item of a list, an amount as its number, anything else as text."""
    if isinstance(value, list | tuple):
        return [text for item in value for text in _spoken(item)]
    if value is None or value == "":
        return []
    if isinstance(value, Decimal):
        return [format(value, "f")]
    return [str(value)]


def _mentions(text: str, value: Any) -> bool:
    folded = normalize_text(text)
    return all(_phrase_pattern(spoken).search(folded) for spoken in _spoken(value))


def _keys_of(call: ToolCallRecord, keys: Sequence[str]) -> dict[str, Any]:
    """The key values of a write: the values of the named arguments it was called with."""
    return {name: call.arguments[name] for name in keys if name in call.arguments}


def _consented(conversation: Sequence[Turn], call: ToolCallRecord, keys: dict[str, Any]) -> str | None:
    """Why this write was not made after a consent to it, or None when it was.

    A consent counts for the write when it names the write's tool (or any action), comes before the write's
    turn, and the agent's turns since the consent before it (the proposal) state every key value.
    """
    assert call.turn is not None
    proposal_start = 0
    near: str | None = None
    for index, turn in enumerate(conversation):
        if turn.role != "customer" or turn.consent is None:
            continue
        proposal = [t.text for t in conversation[proposal_start:index] if t.role == "agent"]
        proposal_start = index + 1
        if turn.consent not in (ANY_ACTION, call.name):
            continue
        missing = [name for name, value in keys.items() if not any(_mentions(text, value) for text in proposal)]
        if missing:
            near = near or (
                f"the customer agreed in turn {index}, but the agent's proposal did not state "
                + ", ".join(f"{name}={keys[name]!r}" for name in missing)
            )
            continue
        if index < call.turn:
            return None
        near = f"the customer agreed only in turn {index}, after the write in turn {call.turn}"
    return near or "the customer never agreed to it"


@check(role="consent")
def confirmed_before(actions: Mapping[str, Iterable[str]]) -> Check:
    """Every successful write of a tool in ``actions`` came after the customer's yes to it.

    ``actions`` maps a write tool to its key arguments (the values a customer recognises: an order number, an
    amount; an empty list when any proposal will do): the agent must have proposed the action stating those
    values, the customer must then have consented (a customer turn whose ``consent`` names the tool, or any
    action), and the write must come in a later turn.
    Calls whose position is unknown (``turn`` None) are not judged.
    """
    if not isinstance(actions, Mapping) or not all(isinstance(name, str) for name in actions):
        raise TypeError(f"confirmed_before(): actions maps a tool name to its key arguments, got {actions!r}")
    rules = {name: tuple(keys) for name, keys in actions.items()}
    for name, keys in rules.items():
        if not all(isinstance(key, str) for key in keys):
            raise TypeError(f"confirmed_before(): the key arguments of {name!r} are names, got {list(keys)!r}")

    def run(ctx: CheckContext) -> Verdict:
        problems: list[Diagnostic] = []
        for call in ctx.tool_calls:
            if call.name not in rules or not call.is_write or call.outcome != "ok" or call.turn is None:
                continue
            keys = _keys_of(call, rules[call.name])
            why = _consented(ctx.conversation, call, keys)
            if why is not None:
                shown = ", ".join(f"{name}={value!r}" for name, value in keys.items())
                message = f"{call.name}({shown}) was written in turn {call.turn} without the customer's yes: {why}"
                problems.append(Diagnostic("confirmed_before", message, expected="consent first", actual=call.turn))
        return Verdict(not problems, "confirmed_before", problems, role="consent")

    run.role = "consent"  # type: ignore[attr-defined]
    return run


@check
def with_consent(task: Check, actions: Mapping[str, Iterable[str]]) -> Check:
    """A task's own check, and ``confirmed_before(actions)`` beside it: how a domain whose policy asks for the
    customer's yes grades every task type. Its verdict has the two as children and adds no line of its own."""
    consent = confirmed_before(actions)

    def run(ctx: CheckContext) -> Verdict:
        own, given = evaluate(task, ctx), consent(ctx)
        return Verdict(own.passed and given.passed, "with_consent", [], [own, given])

    return run
