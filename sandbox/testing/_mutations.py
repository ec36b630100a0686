"""The mutation property: a domain's checks and the failure classifier agree with what was done wrong.

For each task type, the reference path (the ReferenceAgent, no failure injected) is run as a real trial and
recorded turn by turn, then replayed with one mutation, each a real trial on its own database copy:

- ``sibling``: the plan's own wrong-entity step (the same change to another row) -> ``wrong_entity``;
- ``dropped_write``: the path's last successful write left out -> ``no_write`` when no write is left, else
  ``unresolved`` (a chain stopped half way);
- ``extra_write``: one unrequested write to another row of a table the path wrote -> ``wrong_entity``, and to a
  table it never wrote -> ``policy_violation``;
- ``wrong_value``: a value the check names, on a row the path wrote, set to another value -> ``wrong_value``;
- ``before_consent``: the first write that needs the customer's yes made in the turn that proposes it, before
  the yes -> ``policy_violation``;
- ``wrong_fact``: a fact the check requires the agent to state (a date, an amount, an id, a name) replaced by
  another value of its kind in the agent's reply -> ``policy_violation``;
- ``reorder``: two writes of one turn swapped (an order the policy leaves free) -> passes. A swap the backend
  refuses is an order it does not allow, and is left out.

A mutation the path gives nothing to aim at (a read-only task has no write to drop) is left out. Agreement is
the share of mutated trials whose outcome is the expected one.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from passhat.checks import RowChange, Verdict, values_equal
from passhat.sandbox.agents import Agent, FlawConfig, Message, ReferenceAgent, Toolbox, TrialContext
from passhat.sandbox.domain import Scenario
from passhat.sandbox.testing._collateral import Write, _changed_value, _ProbingAgent, plan_writes
from passhat.sandbox.trial import Sandbox, TrialResult, run_trial

MUTATIONS: tuple[str, ...] = (
    "reference",
    "sibling",
    "dropped_write",
    "extra_write",
    "wrong_value",
    "before_consent",
    "wrong_fact",
    "reorder",
)
"""Every mutation, the unmutated reference path first (expected to pass)."""

PASS = "pass"

Call = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Mutated:
    """One mutated trial: what was changed, the outcome expected and the outcome seen."""

    task_type: str
    scenario_id: str
    mutation: str
    expected: str
    seen: str
    detail: str

    @property
    def agrees(self) -> bool:
        return self.expected == self.seen

    def describe(self) -> str:
        return f"{self.scenario_id} {self.mutation}: expected {self.expected}, got {self.seen} ({self.detail})"


@dataclass
class _Path:
    """A recorded reference path: each agent turn's message, and the calls made during it (by transcript index)."""

    messages: list[Message]
    calls: dict[int, list[Call]]
    writes: list[tuple[int, int]]
    """Successful write calls as (turn, position in that turn's calls)."""


class _Recorder:
    """Wraps the reference agent and keeps what it said and called, turn by turn."""

    def __init__(self, inner: Agent) -> None:
        self.inner = inner
        self.path = _Path([], {}, [])

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        seen = len(tools.calls)
        turn = await self.inner.respond(conversation, tools)
        index = len(conversation)
        for call in tools.calls[seen:]:
            made = self.path.calls.setdefault(index, [])
            if call.is_write and call.outcome == "ok":
                self.path.writes.append((index, len(made)))
            made.append((call.name, dict(call.arguments)))
        self.path.messages.append(turn)
        return turn

    async def aclose(self) -> None:
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()


class _Replay:
    """Says what the recorded path said and makes the (mutated) calls of each turn."""

    def __init__(self, messages: list[Message], calls: dict[int, list[Call]]) -> None:
        self.messages = messages
        self.calls = calls
        self.said = 0

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        for name, arguments in self.calls.get(len(conversation), []):
            await tools.call(name, arguments)
        if self.said >= len(self.messages):
            return Message("agent", "Goodbye.", stop=True)
        self.said += 1
        return self.messages[self.said - 1]


def _outcome(result: TrialResult) -> str:
    return PASS if result.passed else result.failure_label or "unclassified"


def _copy(calls: dict[int, list[Call]]) -> dict[int, list[Call]]:
    return {turn: list(made) for turn, made in calls.items()}


def _dropped(path: _Path) -> tuple[dict[int, list[Call]], str] | None:
    if not path.writes:
        return None
    turn, position = path.writes[-1]
    calls = _copy(path.calls)
    del calls[turn][position]
    return calls, "unresolved" if len(path.writes) > 1 else "no_write"


def _before_consent(path: _Path, consent: Sequence[str], agreed: Sequence[int]) -> dict[int, list[Call]] | None:
    """The calls with the first write needing consent (and the calls before it in its turn) moved into the turn
    that proposed it (the agent turn just before the customer's yes, `agreed` holding the yeses' indices)."""
    previous = 0
    for turn, position in path.writes:
        name = path.calls[turn][position][0]
        # Every yes since the write before this one may be part of its proposal (an action, then its price).
        yes = [index for index in agreed if previous < index < turn]
        previous = turn
        if name not in consent or not yes:
            continue
        # The write, and every call it needs that came after the proposal (a price quote), made at once.
        proposal = yes[0] - 1
        calls = _copy(path.calls)
        moved: list[Call] = []
        for between in sorted(t for t in calls if proposal < t < turn):
            moved.extend(calls.pop(between))
        moved.extend(calls[turn][: position + 1])
        calls[turn] = calls[turn][position + 1 :]
        calls.setdefault(proposal, []).extend(moved)
        return calls
    return None


def _reordered(path: _Path) -> dict[int, list[Call]] | None:
    by_turn: dict[int, list[int]] = {}
    for turn, position in path.writes:
        by_turn.setdefault(turn, []).append(position)
    for turn, positions in by_turn.items():
        if len(positions) >= 2:
            calls = _copy(path.calls)
            first, second = positions[-2], positions[-1]
            calls[turn][first], calls[turn][second] = calls[turn][second], calls[turn][first]
            return calls
    return None


def _another(fact: str) -> str:
    """Another value of the same kind: the next day for a date, the next number, else the text with a letter off."""
    try:
        return (_dt.date.fromisoformat(fact) + _dt.timedelta(days=1)).isoformat()
    except ValueError:
        pass
    digits = [index for index, char in enumerate(fact) if char.isdigit()]
    if digits:
        at = digits[-1]
        return fact[:at] + str((int(fact[at]) + 1) % 10) + fact[at + 1 :]
    return fact + "x"


def _wrong_fact(path: _Path, verdict: Verdict) -> tuple[list[Message], str] | None:
    """The path's messages with the first fact a disclosure requires, said by the agent, replaced by another."""
    facts = [
        phrase
        for node in verdict.walk()
        if node.role == "disclosure"
        for phrase in (node.spec or {}).get("args", {}).get("phrases", [])
        if isinstance(phrase, str)
    ]
    for fact in facts:
        for index in range(len(path.messages) - 1, -1, -1):
            message = path.messages[index]
            if fact in message.text:
                messages = list(path.messages)
                messages[index] = dataclasses.replace(message, text=message.text.replace(fact, _another(fact)))
                return messages, fact
    return None


def _named_columns(verdict: Verdict, table: str) -> set[str]:
    """The non-identifier columns a required write of the check names for `table` (its `to` or `match`)."""
    named: set[str] = set()
    for node in verdict.walk():
        args = (node.spec or {}).get("args", {})
        if node.role != "required_write" or args.get("table") != table:
            continue
        for argument in ("to", "match"):
            values = args.get(argument)
            if isinstance(values, dict):
                named.update(name for name in values if name != "id" and not name.endswith("_id"))
    return named


def _wrong_value(sandbox: Sandbox, reference: TrialResult) -> Write | None:
    """A value the check names, on a row the path wrote, set to another value the column accepts."""
    tables = sandbox.domain.metadata.tables
    changes: list[RowChange] = list(reference.record.diff.changes)
    for change in changes:
        if change.after is None or change.table not in tables:
            continue
        table = tables[change.table]
        for column in sorted(_named_columns(reference.record.verdict, change.table)):
            if column not in table.c or table.c[column].primary_key or table.c[column].foreign_keys:
                continue
            after = _changed_value(table, column, change.after.get(column))
            start = (change.before or {}).get(column)
            if after is not None and (change.before is None or not values_equal(after, start)):
                return Write(change.table, change.key, column, change.after.get(column), after)
    return None


async def mutate_scenario(sandbox: Sandbox, scenario: Scenario) -> list[Mutated]:
    """Run the reference path of one scenario and every mutation that applies to it."""
    domain = sandbox.domain

    def seen(mutation: str, expected: str, result: TrialResult, detail: str = "") -> Mutated:
        why = detail or (result.signature.evidence[:200] if result.signature else "passed")
        return Mutated(scenario.task_type, scenario.scenario_id, mutation, expected, _outcome(result), why)

    recorders: list[_Recorder] = []

    def recording(context: TrialContext) -> Agent:
        recorder = _Recorder(ReferenceAgent(context, FlawConfig.off()))
        recorders.append(recorder)
        return recorder

    reference = await run_trial(sandbox, scenario, 0, recording)
    found = [seen("reference", PASS, reference)]
    if not reference.passed:
        return found
    path = recorders[0].path
    modes = domain.failure_modes_of(scenario.task_type)

    async def replay(calls: dict[int, list[Call]]) -> TrialResult:
        return await run_trial(sandbox, scenario, 0, lambda context: _Replay(path.messages, calls))

    if "wrong_entity" in modes:
        sibling = await run_trial(sandbox, scenario, 0, ReferenceAgent.factory(FlawConfig.forced("wrong_entity")))
        if sibling.injected == "wrong_entity" and sibling.record.diff.changes != reference.record.diff.changes:
            found.append(seen("sibling", "wrong_entity", sibling))
    dropped = _dropped(path)
    if dropped is not None:
        found.append(seen("dropped_write", dropped[1], await replay(dropped[0])))
    planned = plan_writes(domain, sandbox.initial, reference.record.diff.changes)
    for probe, expected in (("same_table", "wrong_entity"), ("other_table", "policy_violation")):
        write = planned.get(probe)  # type: ignore[call-overload]
        if write is not None:
            found.append(seen("extra_write", expected, await _with_write(sandbox, scenario, write), write.describe()))
    wrong = _wrong_value(sandbox, reference)
    if wrong is not None:
        found.append(seen("wrong_value", "wrong_value", await _with_write(sandbox, scenario, wrong), wrong.describe()))
    early = _before_consent(path, tuple(domain.consent), sorted(reference.record.consents))
    if early is not None:
        found.append(seen("before_consent", "policy_violation", await replay(early)))
    wrong_fact = _wrong_fact(path, reference.record.verdict)
    if wrong_fact is not None:
        said, fact = wrong_fact
        result = await run_trial(sandbox, scenario, 0, lambda context: _Replay(said, path.calls))
        found.append(seen("wrong_fact", "policy_violation", result, f"{fact} said as {_another(fact)}"))
    swapped = _reordered(path)
    if swapped is not None:
        result = await replay(swapped)
        if all(call.outcome == "ok" for call in result.record.tool_calls if call.is_write):
            found.append(seen("reorder", PASS, result))
    return found


async def _with_write(sandbox: Sandbox, scenario: Scenario, write: Write) -> TrialResult:
    def build(context: TrialContext) -> Agent:
        return _ProbingAgent(ReferenceAgent(context, FlawConfig.off()), sandbox.domain, extra_reads=False, write=write)

    return await run_trial(sandbox, scenario, 0, build)
