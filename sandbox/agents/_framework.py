"""What every framework adapter shares: the customer's new words, the agent's reply, the missing-extra error."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

from passhat.sandbox.agents._conversation import AgentError, Message, Toolbox, TrialContext
from passhat.sandbox.domain import DomainError

TrialBinding = Callable[[TrialContext, Toolbox], Any]
"""Builds, once per trial, what the agent's own tools reach their backend through (pydantic-ai's `deps`, LangGraph's
runtime `context`, the OpenAI Agents SDK's run `context`), from the trial's context and its Toolbox
(`tools.engine`: the trial's own database), so those tools use the trial's backend, never production."""


def checked_binding(adapter: str, name: str, binding: Any) -> TrialBinding | None:
    """``binding`` if it is None or callable; otherwise a TypeError saying what it should be."""
    if binding is None:
        return None
    if not callable(binding):
        raise TypeError(f"{adapter}: {name} must be a function (context, tools) -> {name}: {type(binding).__name__}")
    made: TrialBinding = binding
    return made


def require(module: str, extra: str) -> ModuleType:
    """Import a framework's package, or fail with the `pip install` that brings it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError:
        package = _PACKAGES.get(module.split(".")[0], module.split(".")[0])
        raise DomainError(f"this adapter needs the {package} package: pip install 'passhat[{extra}]'") from None


_PACKAGES = {"agents": "openai-agents", "pydantic_ai": "pydantic-ai", "langgraph": "langgraph"}
"""Import names whose package is named otherwise (the name `pip` installs)."""


def customer_since(conversation: Sequence[Message], seen: int) -> str:
    """What the customer said since the agent last answered (usually one message)."""
    return "\n".join(m.text for m in conversation[seen:] if m.role == "customer")


ApprovalQuestion = Callable[[str, Mapping[str, Any]], str]
"""What the agent asks the customer before a tool call that needs approval: (tool name, its arguments) -> text."""


def agent_reply(text: str, *, waiting: bool = False) -> Message:
    """The framework's answer as the agent's turn: a question asks for more, anything else is final; ``waiting``
    (the agent stopped for the customer's answer, e.g. at a LangGraph interrupt) is never final."""
    text = text.strip() or "(no reply)"
    return Message("agent", text, final=not waiting and not text.endswith("?"))


def approval_request(text: str, actions: Sequence[str]) -> Message:
    """The agent's turn asking the customer's yes to calls of ``actions`` (tools awaiting approval): a
    confirmation request (`asks` "confirm"), proposing the action when there is one, never final."""
    proposes = actions[0] if len(set(actions)) == 1 else None
    return Message("agent", text.strip() or "(no reply)", asks=("confirm",), proposes=proposes, final=False)


def ask_about(calls: Sequence[tuple[str, Mapping[str, Any]]], question: ApprovalQuestion) -> Message:
    """The agent's turn asking the customer's yes to ``calls`` (tool name, arguments), each in ``question``'s words."""
    return approval_request("\n".join(question(name, arguments) for name, arguments in calls), [n for n, _ in calls])


@functools.cache
def failure_types(module: str, names: tuple[str, ...]) -> tuple[type[BaseException], ...]:
    """The exception classes ``names`` of a framework's ``module`` that exist in the installed version (looked up
    once: each agent turn asks)."""
    found = importlib.import_module(module)
    return tuple(kind for kind in (getattr(found, name, None) for name in names) if isinstance(kind, type))


def agent_failure(exc: BaseException) -> AgentError:
    """A framework's own "the agent failed" exception as the trial's `AgentError` (its type and the first line of its
    message: the rest is usually a link to the framework's troubleshooting pages)."""
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    return AgentError(f"{type(exc).__name__}: {first}")


def ask_approval(name: str, arguments: Mapping[str, Any]) -> str:
    """The default question before a call that needs approval: the action and every argument's value, stated."""
    shown = ", ".join(f"{key.replace('_', ' ')} {value}" for key, value in arguments.items())
    return f"Before I go ahead: {name.replace('_', ' ')}" + (f" ({shown})" if shown else "") + ". Shall I proceed?"


def approved(said: Sequence[Message]) -> bool:
    """Whether the customer's messages since the agent asked agree (a turn that consents, as the checks count it)."""
    return any(m.role == "customer" and m.consent is not None for m in said)


def checked_question(owner: str, question: Any) -> ApprovalQuestion:
    """``question`` when it is a function, else a TypeError saying what ``approval_question`` takes."""
    if not callable(question):
        raise TypeError(
            f"{owner}: approval_question is a function (tool_name, arguments) -> the question to the customer, got "
            f"{type(question).__name__}"
        )
    return question  # type: ignore[no-any-return]
