"""The collateral-damage property: a domain's checks catch every unrequested write, and only those.

For each task type, the domain's reference path (its ReferenceAgent plan, no failure injected) is run as a real
trial, then run again with one unrequested write added after the agent's final turn: (a) on a column the check
does not claim of a row it claims; (b) on another row of a table the path wrote; (c) on a table the
path never wrote. Each must fail with a diagnostic naming that write (table, row and, for (a), column). The
reference path with every lookup repeated (harmless extra reads) must still pass.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import Boolean, Engine, Float, Integer, Numeric, String, Table, Text, update

from passhat.checks import CheckContext, Claim, Diagnostic, RowChange, Snapshot, values_equal
from passhat.sandbox.agents import Agent, AgentFactory, FlawConfig, Message, ReferenceAgent, Toolbox, TrialContext
from passhat.sandbox.domain import Domain, Scenario
from passhat.sandbox.trial import Sandbox, TrialResult, run_trial

Probe = Literal["extra_reads", "claimed_column", "same_table", "other_table"]

PROBES: tuple[Probe, ...] = ("extra_reads", "claimed_column", "same_table", "other_table")
"""The probes, in the order they run: the harmless one first, then the three kinds of collateral write."""


@dataclass(frozen=True)
class Write:
    """One unrequested write: a column of a row, set to a value it did not hold."""

    table: str
    key: dict[str, Any]
    column: str
    before: Any
    after: Any

    def describe(self) -> str:
        where = ", ".join(f"{name}={value!r}" for name, value in self.key.items())
        return f"{self.table} {where}: {self.column} {self.before!r} -> {self.after!r}"


@dataclass(frozen=True)
class ProbeResult:
    """How one probe of one scenario came out: whether the property held, and what was seen."""

    task_type: str
    scenario_id: str
    probe: Probe
    write: Write | None
    held: bool
    detail: str

    def describe(self) -> str:
        write = f" with the write {self.write.describe()}" if self.write else ""
        outcome = "holds" if self.held else "BROKEN"
        return f"{self.scenario_id} {self.probe}{write}: {outcome}: {self.detail}"


class CollateralDamageError(AssertionError):
    """A domain's checks let an unrequested write pass, fail a harmless path, or name the wrong write."""

    def __init__(self, broken: Sequence[ProbeResult]) -> None:
        self.broken = list(broken)
        lines = "\n".join(f"- {result.describe()}" for result in self.broken)
        super().__init__(f"{len(self.broken)} collateral-damage probe(s) broken:\n{lines}")


class _ProbingAgent:
    """Wraps the reference agent: repeats its lookups, or adds one write to the backend after its final turn."""

    def __init__(self, inner: Agent, domain: Domain, *, extra_reads: bool, write: Write | None) -> None:
        self.inner = inner
        self.domain = domain
        self.extra_reads = extra_reads
        self.write = write
        self.written = False

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        seen = len(tools.calls)
        turn = await self.inner.respond(conversation, tools)
        if self.extra_reads:
            for call in list(tools.calls[seen:]):
                if call.name in self.domain.lookup_tools and call.outcome == "ok":
                    await tools.call(call.name, call.arguments)
        if self.write is not None and turn.final and not self.written:
            if tools.engine is None:
                raise RuntimeError("the trial's toolbox has no database engine to write the probe's row with")
            _apply(tools.engine, self.domain.metadata.tables[self.write.table], self.write)
            self.written = True
        return turn

    async def aclose(self) -> None:
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()


def _apply(engine: Engine, table: Table, write: Write) -> None:
    condition = [table.c[name] == value for name, value in write.key.items()]
    with engine.begin() as connection:
        connection.execute(update(table).where(*condition).values({write.column: write.after}))


def _changed_value(table: Table, column: str, value: Any) -> Any | None:
    """A value the column accepts that differs from `value`; None when the column's type is not a plain one."""
    kind = table.c[column].type
    if isinstance(kind, Boolean):
        return not bool(value)
    if isinstance(kind, Integer):
        return (value or 0) + 1
    if isinstance(kind, Float | Numeric):
        return round(float(value or 0) + 1.25, 2)
    if isinstance(kind, String | Text):
        return f"{value} (changed)" if value else "changed"
    return None


def _free_columns(table: Table, taken: Iterable[str]) -> Iterator[str]:
    """Columns a probe may write: not part of the key, no reference to another table, not unique, not taken."""
    busy = set(taken)
    plain = [
        column
        for column in table.columns
        if not column.primary_key and not column.foreign_keys and not column.unique and column.name not in busy
    ]
    # Text first: a changed string cannot be mistaken for a rounding of the same amount.
    plain.sort(key=lambda column: not isinstance(column.type, String | Text))
    yield from (column.name for column in plain)


def _write_on(table: Table, row: dict[str, Any], key: dict[str, Any], taken: Iterable[str] = ()) -> Write | None:
    for column in _free_columns(table, taken):
        after = _changed_value(table, column, row.get(column))
        if after is not None and not values_equal(after, row.get(column)):
            return Write(table.name, key, column, row.get(column), after)
    return None


def plan_writes(
    domain: Domain, initial: Snapshot, changes: Sequence[RowChange], claims: Iterable[Claim] = ()
) -> dict[Probe, Write]:
    """The unrequested writes to add to a reference path that made `changes`, whose check claims `claims`.

    ``claimed_column`` aims at a column of a row the path updated that neither the path changed nor the check
    names;
    ``same_table`` at an untouched row of a table the path wrote; ``other_table`` at a table it never wrote. A
    probe is left out when the path gives it nothing to aim at (a read-only task writes no table).
    """
    tables = domain.metadata.tables
    written = {change.sort_key() for change in changes}
    claimed_columns: dict[tuple[str, str], set[str]] = {}
    for claim in claims:
        if len(claim) == 3:
            claimed_columns.setdefault((claim[0], claim[1]), set()).add(claim[2])
    planned: dict[Probe, Write] = {}
    for change in changes:
        if change.op != "update" or change.after is None or change.table not in tables:
            continue
        # A row claimed whole (allow=["*"]) is probed too: the property is that nobody's unrequested column
        # change passes, and a task that truly needs a whole-row claim is left out by name (task_types=).
        taken = claimed_columns.get(change.sort_key(), set()) | set(change.changed_fields)
        write = _write_on(tables[change.table], change.after, change.key, taken)
        if write is not None:
            planned["claimed_column"] = write
            break
    for name in sorted({change.table for change in changes}):
        if name not in tables or name not in initial:
            continue
        found = _first_untouched(tables[name], initial, written)
        if found is not None:
            planned["same_table"] = found
            break
    touched = {change.table for change in changes}
    for name in sorted(set(tables) - touched):
        if name not in initial:
            continue
        found = _first_untouched(tables[name], initial, written)
        if found is not None:
            planned["other_table"] = found
            break
    return planned


def _first_untouched(table: Table, initial: Snapshot, written: set[tuple[str, str]]) -> Write | None:
    snapshot = initial.table(table.name)
    for key_values in sorted(snapshot.rows, key=repr):
        row = snapshot.rows[key_values]
        key = snapshot.key_of(row)
        if RowChange(table.name, key, "update", row, row).sort_key() in written:
            continue
        write = _write_on(table, row, key)
        if write is not None:
            return write
    return None


def _names_the_write(diagnostic: Diagnostic, write: Write, *, column: bool) -> bool:
    if diagnostic.table != write.table or diagnostic.key is None or set(diagnostic.key) != set(write.key):
        return False
    if not all(values_equal(diagnostic.key[name], value) for name, value in write.key.items()):
        return False
    return not column or diagnostic.field == write.column


def _factory(domain: Domain, *, extra_reads: bool = False, write: Write | None = None) -> AgentFactory:
    reference = ReferenceAgent.factory(FlawConfig.off())

    def build(context: TrialContext) -> Agent:
        return _ProbingAgent(reference(context), domain, extra_reads=extra_reads, write=write)

    return build


def _explain(result: TrialResult) -> str:
    return result.record.verdict.explanation.replace("\n", "; ")


async def probe_scenario(sandbox: Sandbox, scenario: Scenario) -> list[ProbeResult]:
    """Run the reference path of one scenario and every probe that applies to it."""
    domain = sandbox.domain

    def result(probe: Probe, write: Write | None, held: bool, detail: str) -> ProbeResult:
        return ProbeResult(scenario.task_type, scenario.scenario_id, probe, write, held, detail)

    reference = await run_trial(sandbox, scenario, 0, _factory(domain))
    if not reference.passed:
        return [result("extra_reads", None, False, f"the reference path itself fails: {_explain(reference)}")]
    results: list[ProbeResult] = []
    reads = await run_trial(sandbox, scenario, 0, _factory(domain, extra_reads=True))
    repeated = len(reads.record.tool_calls) - len(reference.record.tool_calls)
    if reads.passed:
        results.append(result("extra_reads", None, True, f"passes with {repeated} repeated lookup(s)"))
    else:
        results.append(result("extra_reads", None, False, f"harmless extra reads fail it: {_explain(reads)}"))
    changes = reference.record.diff.changes
    check = domain.task_type(scenario.task_type).check(scenario.intent)
    claims = getattr(check, "claims", None)
    claimed = claims(CheckContext(diff=reference.record.diff, initial=sandbox.initial)) if callable(claims) else set()
    for probe, write in plan_writes(domain, sandbox.initial, changes, claimed).items():
        trial = await run_trial(sandbox, scenario, 0, _factory(domain, write=write))
        if trial.passed:
            results.append(result(probe, write, False, "the check passes with this unrequested write"))
            continue
        failures = trial.record.verdict.failures()
        named = [d for d in failures if _names_the_write(d, write, column=probe == "claimed_column")]
        if named:
            results.append(result(probe, write, True, named[0].message))
        else:
            results.append(
                result(probe, write, False, f"it fails, but no diagnostic names the write: {_explain(trial)}")
            )
    return results


def check_collateral(
    domain: Domain | str | Sandbox,
    *,
    task_types: Iterable[str] | None = None,
    scenarios_per_task_type: int = 1,
    seed: int = 0,
    size: str = "small",
) -> list[ProbeResult]:
    """Run the collateral-damage property on every task type of a domain; raise when any probe is broken.

    `domain` is a domain, its name, or a `Sandbox` already built (reused, not closed). Returns every probe's
    result when all hold; raises `CollateralDamageError` (an AssertionError) listing the broken ones. Runs its
    own event loop: call it from synchronous code (a plain test function).
    """
    if isinstance(domain, Sandbox):
        return _check(domain, task_types, scenarios_per_task_type, seed)
    with Sandbox(domain, seed=seed, size=size) as sandbox:
        return _check(sandbox, task_types, scenarios_per_task_type, seed)


def _check(sandbox: Sandbox, task_types: Iterable[str] | None, count: int, seed: int) -> list[ProbeResult]:
    names = sorted(task_types) if task_types is not None else sorted(sandbox.domain.task_types)
    scenarios = [s for name in names for s in sandbox.scenarios(name, count, seed=seed)]

    async def run_all() -> list[ProbeResult]:
        found: list[ProbeResult] = []
        for scenario in scenarios:
            found.extend(await probe_scenario(sandbox, scenario))
        return found

    results = asyncio.run(run_all())
    broken = [result for result in results if not result.held]
    if broken:
        raise CollateralDamageError(broken)
    return results
