"""Agents the Ray tests send to workers (imported by the workers, so kept free of pytest)."""

from __future__ import annotations

import os
import pathlib
import signal
import tempfile
from collections.abc import Sequence
from typing import Any

from passhat.sandbox import Agent, AgentFactory, FlawConfig, Message, ReferenceAgent, Toolbox, TrialContext


class KillsItsWorker:
    """The ReferenceAgent, except that on one (ticket, attempt) it kills its own process once, mid-conversation.

    ``marker`` is created just before the kill: the retry finds it and runs the trial as the ReferenceAgent would.
    """

    def __init__(self, inner: Agent, context: TrialContext, target: tuple[str, int], marker: pathlib.Path) -> None:
        self.inner = inner
        self.label = getattr(inner, "label", "ReferenceAgent")
        self.flaw = getattr(inner, "flaw", None)
        self._armed = (context.scenario.scenario_id, context.attempt) == target
        self._marker = marker

    async def respond(self, messages: Sequence[Message], tools: Toolbox) -> Message:
        if self._armed and not self._marker.exists():
            # Its pid, and where its temporary files (its templates) are: killed, it leaves them.
            self._marker.write_text(f"{os.getpid()}\n{tempfile.gettempdir()}", encoding="utf-8")
            os.kill(os.getpid(), signal.SIGKILL)  # the worker process dies with this trial (and any other) in flight
        return await self.inner.respond(messages, tools)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def killing_factory(flaws: FlawConfig, target: tuple[str, int], marker: pathlib.Path) -> AgentFactory:
    reference = ReferenceAgent.factory(flaws)

    def make(context: TrialContext) -> Agent:
        return KillsItsWorker(reference(context), context, target, marker)

    return make


class KillingFactory:
    """`killing_factory` as a module-level class, so it pickles (local worker processes take only what pickles)."""

    def __init__(self, flaws: FlawConfig, target: tuple[str, int], marker: pathlib.Path) -> None:
        self.reference = ReferenceAgent.factory(flaws)
        self.target = target
        self.marker = marker

    def __call__(self, context: TrialContext) -> Agent:
        return KillsItsWorker(self.reference(context), context, self.target, self.marker)


class DropsFirstRun:
    """The reference agent, its connection reset on the first run of every trial: the harness runs each trial
    again (`run_trial_with_retries`), and the lost run's trace is kept. Picklable, for worker processes."""

    def __init__(self, flaws: FlawConfig) -> None:
        self.flaws = flaws
        self.runs: dict[tuple[str, int], int] = {}

    def __call__(self, context: TrialContext) -> Agent:
        key = (context.scenario.scenario_id, context.attempt)
        self.runs[key] = self.runs.get(key, 0) + 1
        return _ResetOnce(ReferenceAgent.factory(self.flaws)(context), drop=self.runs[key] == 1)


class _ResetOnce:
    def __init__(self, agent: Agent, *, drop: bool) -> None:
        self.agent, self.drop = agent, drop

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        if self.drop:
            raise ConnectionResetError("the agent's connection was reset")
        return await self.agent.respond(conversation, tools)
