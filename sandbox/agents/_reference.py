"""The ReferenceAgent: an offline SIMULATION of an agent that follows a domain's policy procedurally.

Each task type ships a reference plan (an async procedure over a `ReferenceRun`). The agent runs the plan,
and may inject one failure mode per trial, chosen reproducibly from (scenario id, attempt) and per-task-type
rates, so the whole loop runs without a model and its statistics are known in advance. It is a simulation
and is labelled as one wherever it appears (`ReferenceAgent.label`).
"""

from __future__ import annotations

import asyncio
import contextlib
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

    def choose(self, task_type: str, applicable: frozenset[str], scenario_id: str, attempt: int) -> str | None:
        """The mode to inject in this trial, reproducible from (scenario id, attempt)."""
        if self.force is not None:
            return self.force if self.force in applicable else None
        mixture = self.per_task_type_mixture.get(task_type, self.mixture)
        if mixture:
            return _choose_from_mixture(mixture, applicable, scenario_id, attempt)
        rates = self.per_task_type.get(task_type, self.rates)
        if not rates:
            return None
        factor = 1.0
        if self.vary_by_scenario:
            digest = hashlib.sha256(scenario_id.encode()).digest()
            factor = _DIFFICULTY[digest[0] % len(_DIFFICULTY)]
        draw = random.Random(f"{scenario_id}#{attempt}").random()
        threshold = 0.0
        for mode in FAILURE_MODES:
            if mode in applicable:
                threshold += rates.get(mode, 0.0) * factor
                if draw < threshold:
                    return mode
        return None


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
    """The plan's side of the conversation: say things, ask for facts, call tools, finish."""

    def __init__(self, context: TrialContext, flaw: str | None, outbox: asyncio.Queue[Message | BaseException]):
        self.context = context
        self.flaw = flaw
        self.facts: dict[str, Any] = {}
        self.tools: Toolbox | None = None
        self._outbox = outbox
        self._inbox: asyncio.Queue[Message] = asyncio.Queue()
        self._flaw_spent = False

    @property
    def intent_hint(self) -> Mapping[str, Any]:
        """Facts the customer has stated so far (the agent's understanding of the request)."""
        return self.facts

    def take_flaw(self, mode: str) -> bool:
        """True once if this trial injects `mode` (a chain applies its flaw at the first chance only)."""
        if self.flaw == mode and not self._flaw_spent:
            self._flaw_spent = True
            return True
        return False

    def has_flaw(self, mode: str) -> bool:
        """True while `mode` is injected and not yet spent."""
        return self.flaw == mode and not self._flaw_spent

    async def receive(self, message: Message) -> None:
        """Deliver a customer message to the plan."""
        await self._inbox.put(message)

    async def next_customer_message(self) -> Message:
        """Wait for the customer's next message and remember the facts it revealed."""
        message = await self._inbox.get()
        self.facts.update(message.facts)
        return message

    async def say(self, text: str, *asks: str) -> Message:
        """Send an agent turn and wait for the customer's answer."""
        await self._outbox.put(Message("agent", text, asks=tuple(asks)))
        return await self.next_customer_message()

    async def ask(self, text: str, *keys: str) -> dict[str, Any]:
        """Ask for facts by key; returns everything known so far."""
        await self.say(text, *keys)
        return self.facts

    async def confirm(self, summary: str) -> bool:
        """List the action and ask for an explicit yes."""
        await self.say(f"{summary} Shall I go ahead? Please confirm with yes.", "confirm")
        return bool(self.facts.pop("confirm", False))

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Call a tool on the trial's server."""
        if self.tools is None:
            raise RuntimeError("the plan has no tools yet")
        return await self.tools.call(name, arguments)

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
        self.flaw = self.flaws.choose(task.name, task.failure_modes, context.scenario.scenario_id, context.attempt)
        self._plan: ReferencePlan = task.reference
        self._outbox: asyncio.Queue[Message | BaseException] = asyncio.Queue()
        self._run = ReferenceRun(context, self.flaw, self._outbox)
        self._task: asyncio.Task[None] | None = None
        self._done = False

    @classmethod
    def factory(cls, flaws: FlawConfig | None = None) -> Callable[[TrialContext], ReferenceAgent]:
        """An AgentFactory building a ReferenceAgent with these flaws for each trial."""
        return lambda context: cls(context, flaws)

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


# -- procedures shared by every domain's plans ------------------------------------------------------------


def mangle(value: str) -> str:
    """A plausible typo of an identifier (the empty-lookup failure: the agent mistypes what it was told)."""
    if "@" in value:
        local, _, host = value.partition("@")
        return f"{local}x@{host}"
    if value and value[-1].isdigit():
        return value[:-1] + str((int(value[-1]) + 1) % 10)
    return value + "x"


async def identify_customer(
    run: ReferenceRun,
    by_email: tuple[str, str] = ("find_customer_by_email", "email"),
    by_name: tuple[str, tuple[str, ...]] = ("find_customer_by_name_zip", ("first_name", "last_name", "zip")),
    id_key: str = "customer_id",
) -> str | None:
    """Identify the customer (email first, then name and zip); None when the plan skips it (a flaw).

    Injected here: `skip_precondition` (no identification at all), `empty_lookup` (a mistyped identifier,
    then giving up) and `unresolved` (closing the conversation before looking anything up).
    """
    if run.take_flaw("skip_precondition"):
        return None
    email_tool, email_key = by_email
    name_tool, name_keys = by_name
    facts = await run.ask("I can help with that. First, could you give me your email address?", email_key)
    if run.take_flaw("unresolved"):
        await run.end("Thank you, I have noted your request and a colleague will follow up. Goodbye!")
    if email_key in facts:
        email = str(facts[email_key])
        typo = run.take_flaw("empty_lookup")
        found = await run.call(email_tool, {email_key: mangle(email) if typo else email})
        if typo and not found.ok:
            await run.end("I'm sorry, I could not find an account with that email. Please contact us again later.")
    else:
        facts = await run.ask("No problem. Could you give me your first name, last name and zip code?", *name_keys)
        arguments = {key: str(facts.get(key, "")) for key in name_keys}
        if run.take_flaw("empty_lookup"):
            arguments[name_keys[-1]] = mangle(arguments[name_keys[-1]])
            found = await run.call(name_tool, arguments)
            if not found.ok:
                await run.end("I'm sorry, I could not find an account with those details. Goodbye.")
        found = await run.call(name_tool, arguments)
    if not found.ok:
        await run.finish("I'm sorry, I could not verify your identity, so I cannot help with this request.")
    return str(found.data[id_key])


def _broken(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The same call with one argument the tool rejects as invalid (not a missing row: that is a lookup)."""
    broken = dict(arguments)
    if isinstance(broken.get("item_ids"), list) and broken["item_ids"]:
        broken["item_ids"] = [broken["item_ids"][0], broken["item_ids"][0]]
    elif "reason" in broken:
        broken["reason"] = "changed my mind"
    elif "zip" in broken:
        broken["zip"] = ""
    elif "payment_method_id" in broken:
        broken["payment_method_id"] = ""
    else:
        raise DomainError("no argument to break for the error_not_retried flaw")
    return broken


async def perform_write(
    run: ReferenceRun,
    tool: str,
    arguments: Mapping[str, Any],
    *,
    summary: str,
    sibling: Mapping[str, Any] | None = None,
) -> ToolResult:
    """Confirm, then make one write the way the policy says, injecting the write-side failure modes.

    `no_write` confirms and then closes without writing; `wrong_entity` writes `sibling` (the same kind of
    change to another row of the same customer); `error_not_retried` sends a broken identifier and repeats
    the identical call; `skip_precondition` (identity already skipped) also skips the confirmation.
    Returns the successful result; every failure path ends the plan.
    """
    skipping = run.flaw == "skip_precondition"
    if not skipping and not await run.confirm(summary):
        await run.finish("Understood, I have not changed anything.")
    if run.take_flaw("no_write"):
        await run.finish("Thank you for confirming. Everything is in order now. Is there anything else?")
    if sibling is not None and run.take_flaw("wrong_entity"):
        arguments = sibling
    if run.take_flaw("error_not_retried"):
        arguments = _broken(arguments)
        first = await run.call(tool, arguments)
        if not first.ok:
            await run.call(tool, arguments)
            await run.finish("I'm sorry, the system returned an error and I could not complete this request.")
    result = await run.call(tool, arguments)
    if not result.ok:
        await run.finish(f"I'm sorry, I could not complete this: {result.error_message}")
    return result
