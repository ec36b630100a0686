"""The ReferenceAgent: an offline SIMULATION of an agent that follows a domain's policy procedurally.

Each task type ships a reference plan (an async procedure over a `ReferenceRun`). The agent runs the plan
and may inject failure modes, reproducibly from (scenario id, attempt), so the whole loop runs without a model
and its statistics are known in advance. It is a simulation and is labelled as one wherever it appears
(`ReferenceAgent.label`).

Failures are injected **per step** under rates (`FlawConfig(rates=...)`, `FlawConfig.default()`): every
point of a plan where a mode can happen (each write can skip its precondition, go to a sibling row, send a
broken argument or not happen, and each confirmation can be put off until after the write; each lookup can be
mistyped and given up on) is one chance, drawn on its own
with the mode's rate; the first that fires is the trial's flaw, and a trial has at most one. A chain of n
writes therefore has n chances per write-side mode, and a longer chain fails more often by construction.
A forced mode or a mixture (`FlawConfig.forced`, `FlawConfig.from_mixture`) picks the trial's mode up front
and injects it at its first chance.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from passhat.sandbox.agents._conversation import Message, Toolbox, ToolResult, TrialContext
from passhat.sandbox.domain import FAILURE_MODES, DomainError, ReferencePlan

DEFAULT_RATES: Mapping[str, float] = {
    "skip_precondition": 0.03,
    "empty_lookup": 0.02,
    "error_not_retried": 0.02,
    "wrong_entity": 0.015,
    "unresolved": 0.01,
    "no_write": 0.005,
    "act_before_confirm": 0.015,
}
"""Per-mode injection rates for `--flaws default`, before the scenario's difficulty factor."""

_DIFFICULTY = (0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 4.0, 6.0)
"""Per-scenario multipliers: some tickets never fail, some often, so pass^k falls faster than pass@1^k."""


class PlanOverError(Exception):
    """Raised inside a plan once the agent has given its final turn or ended the conversation."""


@dataclass(frozen=True)
class FlawConfig:
    """Which failure modes the ReferenceAgent injects and how often.

    `rates` applies to every task type unless `per_task_type[task_type]` overrides it; `force` injects one
    mode in every trial where the task type supports it (for tests of the classifier).
    """

    rates: Mapping[str, float] = field(default_factory=dict)
    per_task_type: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    force: str | None = None
    vary_by_scenario: bool = True
    mixture: tuple[tuple[float, float], ...] = ()
    per_task_type_mixture: Mapping[str, tuple[tuple[float, float], ...]] = field(default_factory=dict)

    @classmethod
    def off(cls) -> FlawConfig:
        """No failure is ever injected: the agent follows the policy exactly."""
        return cls()

    @classmethod
    def default(cls) -> FlawConfig:
        """The shipped rates (`DEFAULT_RATES`), varied per scenario."""
        return cls(rates=DEFAULT_RATES)

    @classmethod
    def from_mixture(
        cls,
        components: Sequence[tuple[float, float]],
        *,
        per_task_type: Mapping[str, Sequence[tuple[float, float]]] | None = None,
    ) -> FlawConfig:
        """Each scenario succeeds with its own per-attempt probability, drawn from a binomial mixture.

        `components` are (weight, success probability) pairs, e.g. the seed's fitted mixture
        ((0.31, 0.99), (0.60, 0.58), (0.09, 0.0)): a scenario falls in a component by a hash of its id, and
        every attempt at it fails with probability 1 - p, with a failure mode drawn among those its task type
        supports. `per_task_type` replaces the mixture for named task types (e.g. one that regressed).
        """
        mixtures = {name: _check_mixture(value) for name, value in (per_task_type or {}).items()}
        return cls(mixture=_check_mixture(components), per_task_type_mixture=mixtures)

    @classmethod
    def forced(cls, mode: str) -> FlawConfig:
        """Inject `mode` in every trial whose task type supports it."""
        if mode not in FAILURE_MODES:
            raise DomainError(f"unknown failure mode {mode!r}; known: {', '.join(FAILURE_MODES)}")
        return cls(force=mode)

    def per_step(self, task_type: str) -> bool:
        """Whether this task type's failures are drawn per step (rates) rather than once per trial."""
        if self.force is not None or self.per_task_type_mixture.get(task_type, self.mixture):
            return False
        return bool(self.per_task_type.get(task_type, self.rates))

    def choose(self, task_type: str, applicable: frozenset[str], scenario_id: str, attempt: int) -> str | None:
        """The mode a forced or mixture config injects in this trial (None under per-step rates: see `step`)."""
        if self.force is not None:
            return self.force if self.force in applicable else None
        mixture = self.per_task_type_mixture.get(task_type, self.mixture)
        if mixture:
            return _choose_from_mixture(mixture, applicable, scenario_id, attempt)
        return None

    def step_rate(self, task_type: str, mode: str, scenario_id: str) -> float:
        """The chance that one step of `mode` fails in this scenario: the mode's rate times its difficulty."""
        rate = self.per_task_type.get(task_type, self.rates).get(mode, 0.0)
        if self.vary_by_scenario:
            digest = hashlib.sha256(scenario_id.encode()).digest()
            rate *= _DIFFICULTY[digest[0] % len(_DIFFICULTY)]
        return min(rate, 1.0)

    def step(self, task_type: str, mode: str, scenario_id: str, attempt: int, index: int) -> bool:
        """Whether the `index`-th chance of `mode` in this trial fails, reproducible from its coordinates."""
        rate = self.step_rate(task_type, mode, scenario_id)
        return rate > 0 and random.Random(f"{scenario_id}#{attempt}#{mode}#{index}").random() < rate


def _check_mixture(components: Sequence[tuple[float, float]]) -> tuple[tuple[float, float], ...]:
    pairs = tuple((float(w), float(p)) for w, p in components)
    if not pairs or any(w < 0 for w, _ in pairs) or sum(w for w, _ in pairs) <= 0:
        raise DomainError("a failure mixture needs (weight, success probability) pairs with positive total weight")
    if any(not 0.0 <= p <= 1.0 for _, p in pairs):
        raise DomainError("a failure mixture's success probabilities must lie in [0, 1]")
    return pairs


def _choose_from_mixture(
    mixture: tuple[tuple[float, float], ...], applicable: frozenset[str], scenario_id: str, attempt: int
) -> str | None:
    modes = [mode for mode in FAILURE_MODES if mode in applicable]
    if not modes:
        return None
    total = sum(w for w, _ in mixture)
    # The scenario's component is fixed by its id; each attempt then fails with probability 1 - p.
    position = int.from_bytes(hashlib.sha256(f"mixture/{scenario_id}".encode()).digest()[:8], "big") / 2**64
    cumulative, success = 0.0, mixture[-1][1]
    for weight, p in mixture:
        cumulative += weight / total
        if position < cumulative:
            success = p
            break
    draw = random.Random(f"{scenario_id}#{attempt}").random()
    if draw < success:
        return None
    return modes[random.Random(f"mode/{scenario_id}#{attempt}").randrange(len(modes))]


class ReferenceRun:
    """The plan's side of the conversation: say things, ask for facts, call tools, finish.

    Each `take_flaw(mode)` is one chance of `mode` (one step where it can happen); `flaws` decides whether it
    fires (per step under rates, at the first chance of the trial's chosen mode otherwise).
    """

    def __init__(
        self,
        context: TrialContext,
        flaw: str | None,
        outbox: asyncio.Queue[Message | BaseException],
        flaws: FlawConfig | None = None,
    ):
        self.context = context
        self.facts: dict[str, Any] = {}
        self.tools: Toolbox | None = None
        self._chosen = flaw
        self._flaws = flaws or FlawConfig.off()
        self._task_type = context.scenario.task_type
        self._applicable = context.domain.failure_modes_of(self._task_type)
        self._per_step = self._flaws.per_step(self._task_type)
        self._chances: dict[str, int] = {}
        self._outbox = outbox
        self._inbox: asyncio.Queue[Message] = asyncio.Queue()
        self.injected: str | None = None
        """The mode that fired in this trial (at most one), once it has."""
        self._unasked: list[str] = []
        """Proposals the agent acted on before asking (the act_before_confirm flaw): asked after the next write."""

    @property
    def flaw(self) -> str | None:
        """The trial's flaw: the mode that fired, or the mode a forced or mixture config chose for it."""
        return self.injected if self._per_step else self.injected or self._chosen

    @property
    def intent_hint(self) -> Mapping[str, Any]:
        """Facts the customer has stated so far (the agent's understanding of the request)."""
        return self.facts

    def _fires(self, mode: str, *, spend: bool) -> bool:
        if self.injected is not None or mode not in self._applicable:
            return False
        if not self._per_step:
            return self._chosen == mode
        index = self._chances.get(mode, 0)
        if spend:
            self._chances[mode] = index + 1
        context = self.context
        return self._flaws.step(self._task_type, mode, context.scenario.scenario_id, context.attempt, index)

    def take_flaw(self, mode: str) -> bool:
        """One chance of `mode`: True if it fires here (then no other flaw fires in this trial)."""
        if self._fires(mode, spend=True):
            self.injected = mode
            return True
        return False

    def has_flaw(self, mode: str) -> bool:
        """Whether the next chance of `mode` will fire (to prepare it, e.g. find the sibling row to write)."""
        return self._fires(mode, spend=False)

    async def receive(self, message: Message) -> None:
        """Deliver a customer message to the plan."""
        await self._inbox.put(message)

    async def next_customer_message(self) -> Message:
        """Wait for the customer's next message and remember the facts it revealed."""
        message = await self._inbox.get()
        self.facts.update(message.facts)
        return message

    async def say(self, text: str, *asks: str, proposes: str | None = None) -> Message:
        """Send an agent turn and wait for the customer's answer."""
        await self._outbox.put(Message("agent", text, asks=tuple(asks), proposes=proposes))
        return await self.next_customer_message()

    async def ask(self, text: str, *keys: str) -> dict[str, Any]:
        """Ask for facts by key; returns everything known so far."""
        await self.say(text, *keys)
        return self.facts

    async def confirm(self, summary: str, action: str | None = None) -> bool:
        """List the action (`action`: the tool it names, if one) and ask for an explicit yes.

        One chance of `act_before_confirm`: the agent takes the yes for granted, makes its next write, and only
        then asks (so every confirmation until that write is put off too).
        """
        if self._unasked or self.take_flaw("act_before_confirm"):
            self._unasked.append(summary)
            return True
        await self.say(f"{summary} Shall I go ahead? Please confirm with yes.", "confirm", proposes=action)
        return bool(self.facts.pop("confirm", False))

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Call a tool on the trial's server."""
        if self.tools is None:
            raise RuntimeError("the plan has no tools yet")
        result = await self.tools.call(name, arguments)
        if self._unasked and result.ok and self.tools.kind_of(name) == "write":
            proposal, self._unasked = " ".join(self._unasked), []
            await self.say(f"{proposal} Shall I go ahead? Please confirm with yes.", "confirm")
            self.facts.pop("confirm", None)
        return result

    async def finish(self, text: str) -> None:
        """The final turn (an action done, a refusal or an answer); the plan ends here."""
        await self._outbox.put(Message("agent", text, final=True))
        raise PlanOverError

    async def end(self, text: str) -> None:
        """End the conversation from the agent's side without a final answer."""
        await self._outbox.put(Message("agent", text, stop=True))
        raise PlanOverError


class ReferenceAgent:
    """Offline SIMULATION of a policy-following agent with injectable failure modes (see module docstring)."""

    label = "reference (offline simulation)"

    def __init__(self, context: TrialContext, flaws: FlawConfig | None = None) -> None:
        task = context.domain.task_type(context.scenario.task_type)
        if task.reference is None:
            raise DomainError(
                f"task type {context.domain.name}/{task.name} has no reference plan, so the ReferenceAgent cannot "
                "run it: give TaskType(reference=...) or replay your own agent (agent.factory = module:function)"
            )
        self.flaws = flaws or FlawConfig.off()
        applicable = context.domain.failure_modes_of(task.name)
        self._chosen = self.flaws.choose(task.name, applicable, context.scenario.scenario_id, context.attempt)
        self._plan: ReferencePlan = task.reference
        self._outbox: asyncio.Queue[Message | BaseException] = asyncio.Queue()
        self._run = ReferenceRun(context, self._chosen, self._outbox, self.flaws)
        self._task: asyncio.Task[None] | None = None
        self._done = False

    @property
    def flaw(self) -> str | None:
        """The failure mode injected in this trial (known once the plan has run), or None."""
        return self._run.flaw

    @classmethod
    def factory(cls, flaws: FlawConfig | None = None) -> Callable[[TrialContext], ReferenceAgent]:
        """An AgentFactory building a ReferenceAgent with these flaws for each trial.

        A `functools.partial` of the class, so it pickles: a replay's worker processes build the agent themselves."""
        return functools.partial(cls, flaws=flaws)

    async def _drive(self) -> None:
        try:
            await self._run.next_customer_message()
            await self._plan(self._run)
            await self._outbox.put(Message("agent", "Is there anything else I can help with?", final=True))
        except PlanOverError:
            pass
        except BaseException as exc:  # handed to respond(), which raises it in the orchestrator
            await self._outbox.put(exc)
        finally:
            self._done = True

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        """Feed the customer's last message to the plan and return the plan's next turn."""
        self._run.tools = tools
        if self._task is None:
            self._task = asyncio.ensure_future(self._drive())
        elif self._done and self._outbox.empty():
            return Message("agent", "Goodbye.", stop=True)
        await self._run.receive(conversation[-1])
        turn = await self._outbox.get()
        if isinstance(turn, BaseException):
            raise turn
        return turn

    async def aclose(self) -> None:
        """Cancel the plan if the conversation ended before it did."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
