"""A graded session: one trial whose agent is driven from outside, one message at a time.

The agent (anywhere, any language) opens a session, reads the customer's opening message, calls the trial's
tools over its own MCP endpoint, and sends its messages; the simulated customer answers each. The trial is the
same as any other: its own database copy and tool server, its calls recorded, its end graded by the task
type's check. Under the hood the runner drives the conversation and this session's agent waits for the next
message from outside.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

import passhat
from passhat.sandbox.agents import (
    CustomerFactory,
    McpEndpoint,
    Message,
    ScriptedCustomer,
    Toolbox,
    ToolTransportError,
    TrialContext,
)
from passhat.sandbox.domain import Scenario
from passhat.sandbox.trial._database import Sandbox
from passhat.sandbox.trial._runner import RunConfig, TrialResult, run_trial

ENDED_TEXT = ""
"""What the agent 'says' when it ends the session before the conversation ended: nothing (the runner's final
response is the last thing the agent did say)."""


class SessionShutDownError(ToolTransportError):
    """The server ended the session before the agent or the customer did: an infrastructure error, never the
    agent's failure (the trial is graded and kept with this as its `infra_error`)."""


@dataclass(frozen=True)
class SessionTurn:
    """What the agent hears back: the customer's message, or the end of the conversation."""

    customer: str
    ended: bool


class _DrivenAgent:
    """The trial's agent: each turn hands the customer's message out and waits for the agent's answer."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.heard: asyncio.Queue[tuple[str, McpEndpoint]] = asyncio.Queue()
        self.said: asyncio.Queue[Message | SessionShutDownError] = asyncio.Queue()

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        endpoint = await tools.http_endpoint()
        await self.heard.put((conversation[-1].text, endpoint))
        said = await self.said.get()
        if isinstance(said, SessionShutDownError):
            raise said
        return said


class GradedSession:
    """One session: `start` gives the customer's opening, `say` the next customer message, `end` the graded trial."""

    def __init__(
        self,
        sandbox: Sandbox,
        scenario: Scenario,
        *,
        attempt: int = 0,
        customer_factory: CustomerFactory = ScriptedCustomer.for_trial,
        config: RunConfig | None = None,
        runtime: passhat.Passhat | None = None,
        label: str = "graded session",
    ) -> None:
        self.scenario = scenario
        self._agent = _DrivenAgent(label)
        self._sandbox = sandbox
        self._attempt = attempt
        self._customer_factory = customer_factory
        self._config = config or RunConfig(timeout=1800.0)
        self._runtime = runtime
        self._task: asyncio.Task[TrialResult] | None = None
        self._lock = asyncio.Lock()
        self.endpoint: McpEndpoint | None = None

    def _factory(self, context: TrialContext) -> _DrivenAgent:
        return self._agent

    async def start(self) -> SessionTurn:
        """Start the trial; the customer's opening message (ended at once only if the customer failed to open)."""
        self._task = asyncio.ensure_future(
            run_trial(
                self._sandbox,
                self.scenario,
                self._attempt,
                self._factory,
                customer_factory=self._customer_factory,
                config=self._config,
                runtime=self._runtime,
            )
        )
        return await self._next()

    async def _next(self) -> SessionTurn:
        """Wait until the agent's turn comes again, or the trial is over."""
        assert self._task is not None
        heard = asyncio.ensure_future(self._agent.heard.get())
        await asyncio.wait({heard, self._task}, return_when=asyncio.FIRST_COMPLETED)
        if heard.done():
            text, self.endpoint = heard.result()
            return SessionTurn(text, ended=False)
        heard.cancel()
        result = self._task.result()
        transcript = result.record.transcript
        last = transcript[-1][1] if transcript and transcript[-1][0] == "customer" else ""
        return SessionTurn(last, ended=True)

    @property
    def ended(self) -> bool:
        """Whether the trial is over (graded or being graded)."""
        return self._task is not None and self._task.done()

    async def say(self, text: str, *, final: bool = False) -> SessionTurn:
        """The agent's message; the customer's answer, or `ended` once the conversation is over."""
        async with self._lock:
            if self._task is None:
                raise RuntimeError("start the session first")
            if self._task.done():
                return SessionTurn("", ended=True)
            await self._agent.said.put(Message("agent", text, final=final))
            return await self._next()

    async def end(self) -> TrialResult:
        """End the session (the agent stops if the conversation is still going) and grade it."""
        async with self._lock:
            if self._task is None:
                raise RuntimeError("start the session first")
            if not self._task.done():
                await self._agent.said.put(Message("agent", ENDED_TEXT, stop=True))
            return await self._task

    async def result(self) -> TrialResult:
        """The graded trial, once the conversation is over (however it ended)."""
        if self._task is None:
            raise RuntimeError("start the session first")
        return await asyncio.shield(self._task)

    def shut_down(self, why: str) -> None:
        """End the session now because its server stops (`why`): the trial ends at the agent's next turn as an
        infrastructure error and is graded as usual; `result()` gives it."""
        if self._task is not None and not self._task.done():
            self._agent.said.put_nowait(SessionShutDownError(why))

    async def cancel(self) -> None:
        """Abandon the session without waiting for its grade (server shutdown)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
