"""The agent and the simulated customer a trial's factories make, or what stands in for one they could not make."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from passhat.sandbox.agents import Message, ModelServerUnusableError, TrialContext


class Unbuilt:
    """Stands in for the agent or the simulated customer its factory could not make (it raised, or made something
    else): the harness's failure (a setup the trial could not start with, e.g. a factory given the wrong
    function), recorded on the trial and never the agent's, rather than an exception that ends the whole run."""

    def __init__(self, party: str, reason: str, factory: object, what: str) -> None:
        """``what``: what went wrong, after "the agent factory NAME" ("raised ValueError(...)")."""
        name = getattr(factory, "label", None) or getattr(factory, "__qualname__", None) or type(factory).__name__
        self.label = str(name)
        self.reason = reason
        self.error = f"the {party} factory {name} {what}"

    def errors(self) -> tuple[str | None, str | None, str | None]:
        """(simulator error, harness error, the agent's own failure), as the runner's conversation returns them."""
        if self.reason == "simulator_error":
            return self.error, None, None
        return None, self.error, None

    async def opening(self) -> Message:
        raise RuntimeError(self.error)  # never asked: the runner's conversation ends the trial first

    async def respond(self, *conversation_and_tools: object) -> Message:
        raise RuntimeError(self.error)


_NEEDS = {
    "agent": (("respond",), "an agent (an object with async respond(conversation, tools))"),
    "customer": (("opening", "respond"), "a customer (an object with async opening() and respond(conversation))"),
}
"""What each party's factory must return: its methods, and how to say so."""


def built(factory: Callable[[TrialContext], Any], context: TrialContext, party: str, reason: str) -> Any:
    """What ``factory`` makes for this trial, or an `Unbuilt` saying why it could not (it raised, or made
    something that is not an agent or a customer)."""
    try:
        made = factory(context)
    except ModelServerUnusableError:
        raise  # no trial can work: the run stops
    except Exception as exc:
        return Unbuilt(party, reason, factory, f"raised {exc!r}")
    methods, shape = _NEEDS[party]
    if not all(callable(getattr(made, method, None)) for method in methods):
        return Unbuilt(party, reason, factory, f"returned {type(made).__name__}, not {shape}")
    return made
