"""The domain contract as one property test any domain runs in its own tests: `check_domain(domain)`.

Properties, each reported by name (`PROPERTIES`):

- `policy`: the domain has a written policy.
- `systems`: every tool belongs to exactly one system, every table to exactly one system, and each system's
  tables exist (only for a domain that declares systems).
- `deterministic`: the seed generator gives the same starting state for the same (seed, size) and another for
  another seed; scenarios are the same for the same seed.
- `write_checks_guard`: every write task's check contains a `no_other_writes` check.
- `do_nothing_fails`: an agent that answers without doing anything fails every write task.
- `tools_never_raise`: every tool, called with empty arguments on a fresh trial server, returns a result (an
  error of the domain's vocabulary, or an argument-validation error), never an unexpected exception.
- `reference_passes`: the ReferenceAgent with failures off passes every scenario.
- `failure_modes`: every failure mode is reachable in some task type, and forced, fails the trial and is named
  by the classifier as `EXPECTED_SIGNATURE[mode]` in at least 95% of (task type, mode, scenario) trials.
- `errors_declared`: every error type the tools returned during those trials is in the domain's vocabulary.
- `collateral`: `check_collateral` holds (the checks catch every unrequested write).
- `intent_fields`: every task type declares its intent's fields (name, type, where a value lives), and every
  field its scenarios' intents hold is declared with the type it holds (a light domain may declare none).
- `mutations`: for every task type, the reference path passes and each mutation of it (a sibling entity, a
  dropped write, an extra write, a wrong value, a write before the customer's yes) fails with the expected
  signature, while an order the policy leaves free passes (see `passhat.sandbox.testing.MUTATIONS`). The
  agreement is printed per domain, and must be 100%.

A `benchmark` domain must have them all; a `light` one (a user's own domain without reference plans) is checked
for the properties that need no ReferenceAgent: policy, systems, deterministic, write_checks_guard,
do_nothing_fails, tools_never_raise, intent_fields.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from passhat.sandbox.agents import FlawConfig, Message, ReferenceAgent, Toolbox
from passhat.sandbox.domain import EXPECTED_SIGNATURE, FAILURE_MODES, Domain, Scenario, parse_error
from passhat.sandbox.testing._collateral import CollateralDamageError, check_collateral
from passhat.sandbox.testing._intent_fields import intent_field_problems
from passhat.sandbox.testing._mutations import Mutated, mutate_scenario
from passhat.sandbox.trial import Sandbox, TrialResult, connect, run_trials

PROPERTIES: tuple[str, ...] = (
    "policy",
    "systems",
    "deterministic",
    "write_checks_guard",
    "do_nothing_fails",
    "tools_never_raise",
    "reference_passes",
    "failure_modes",
    "errors_declared",
    "collateral",
    "intent_fields",
    "mutations",
)
LIGHT_PROPERTIES: frozenset[str] = frozenset((*PROPERTIES[:6], "intent_fields"))
"""The properties a light domain (no reference plans) is held to."""

NAMED_SHARE = 0.95
"""The share of forced-failure trials the classifier must name correctly."""

_WRITE_KINDS = frozenset({"write", "chain"})


@dataclass(frozen=True)
class PropertyResult:
    """How one property came out on a domain."""

    name: str
    held: bool
    detail: str


class DomainContractError(AssertionError):
    """A domain breaks one or more contract properties; each is listed with what was seen."""

    def __init__(self, domain: str, broken: Sequence[PropertyResult]) -> None:
        self.broken = list(broken)
        lines = "\n".join(f"- {result.name}: {result.detail}" for result in self.broken)
        super().__init__(f"domain {domain!r} breaks {len(self.broken)} contract propert(ies):\n{lines}")


class _DoNothing:
    """An agent that answers at once and touches nothing."""

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        return Message("agent", "Thank you for reaching out. Everything is in order.", final=True)


def _intent_fields(domain: Domain, sandbox: Sandbox, count: int, seed: int) -> PropertyResult:
    scenarios = [s for name in domain.task_types for s in sandbox.scenarios(name, count, seed=seed)]
    problems = intent_field_problems(domain, scenarios)
    shown = "; ".join(problems[:8]) + (f" (and {len(problems) - 8} more)" if len(problems) > 8 else "")
    held = f"{sum(1 for t in domain.task_types.values() if t.intent_fields)} task types declare their intent's fields"
    return PropertyResult("intent_fields", not problems, shown or held)


def _policy(domain: Domain) -> PropertyResult:
    text = domain.policy.strip()
    return PropertyResult("policy", bool(text), f"{len(text)} characters" if text else "the policy is empty")


def _systems(domain: Domain) -> PropertyResult:
    if not domain.systems:
        return PropertyResult("systems", True, "no systems declared (contract v1 tool sets)")
    problems: list[str] = []
    owners: dict[str, str] = {}
    for system in domain.systems:
        for table in system.tables:
            if table not in domain.metadata.tables:
                problems.append(f"system {system.name!r} names table {table!r}, which is not in the metadata")
            if table in owners:
                problems.append(f"table {table!r} belongs to both {owners[table]!r} and {system.name!r}")
            owners[table] = system.name
        if not system.tools:
            problems.append(f"system {system.name!r} declares no tools")
    orphans = sorted(set(domain.metadata.tables) - set(owners))
    if orphans:
        problems.append(f"tables {orphans} belong to no system")
    detail = "; ".join(problems) or f"{len(domain.systems)} systems, {len(owners)} tables, {len(domain.tool_systems)}"
    return PropertyResult("systems", not problems, detail if problems else detail + " tools")


def _deterministic(domain: Domain, sandbox: Sandbox, seed: int, size: str) -> PropertyResult:
    with Sandbox(domain, seed=seed, size=size) as again, Sandbox(domain, seed=seed + 1, size=size) as other:
        if again.initial != sandbox.initial:
            return PropertyResult("deterministic", False, f"seed {seed} gave two different starting states")
        if other.initial == sandbox.initial:
            return PropertyResult("deterministic", False, f"seeds {seed} and {seed + 1} gave the same state")
        for name in domain.task_types:
            first = [s.intent for s in sandbox.scenarios(name, 5, seed=seed)]
            second = [s.intent for s in again.scenarios(name, 5, seed=seed)]
            if first != second:
                return PropertyResult("deterministic", False, f"{name}: the same seed drew other scenarios")
    return PropertyResult("deterministic", True, "same (seed, size), same state and scenarios; another seed differs")


def _guarded(results: Sequence[TrialResult], domain: Domain) -> PropertyResult:
    missing = sorted(
        {
            r.scenario.task_type
            for r in results
            if domain.task_type(r.scenario.task_type).kind in _WRITE_KINDS
            and not any(v.check == "no_other_writes" for v in r.record.verdict.walk())
        }
    )
    detail = f"no no_other_writes check in {missing}" if missing else "every write task guards other writes"
    return PropertyResult("write_checks_guard", not missing, detail)


def _do_nothing(results: Sequence[TrialResult], domain: Domain) -> PropertyResult:
    passed = sorted(
        {
            r.scenario.scenario_id
            for r in results
            if domain.task_type(r.scenario.task_type).kind in _WRITE_KINDS and r.passed
        }
    )
    detail = f"a do-nothing agent passes {passed[:5]}" if passed else "a do-nothing agent fails every write task"
    return PropertyResult("do_nothing_fails", not passed, detail)


async def _tools_never_raise(domain: Domain, sandbox: Sandbox) -> PropertyResult:
    database = sandbox.memory_copy()
    problems: list[str] = []
    try:
        async with connect(domain, database, "memory") as client:
            if client is None:  # a domain whose agents use the database directly: no tools to call
                return PropertyResult("tools_never_raise", True, "the domain serves no MCP tools")
            listed = await client.list_tools()
            for tool in listed.tools:
                arguments = _empty_arguments(tool.input_schema)
                response = await client.call_tool(tool.name, arguments)
                text = "".join(getattr(block, "text", "") for block in response.content)
                if response.is_error and text.strip() == f"Error executing tool {tool.name}":
                    problems.append(f"{tool.name}({arguments}) raised instead of returning an error")
                elif (
                    response.is_error and text.lstrip().startswith("{") and parse_error(text, domain.errors)[0] is None
                ):
                    problems.append(f"{tool.name} returned an error type outside the vocabulary: {text[:120]}")
    finally:
        database.close()
    detail = "; ".join(problems) or "every tool returns a result for empty arguments"
    return PropertyResult("tools_never_raise", not problems, detail)


def _empty_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Valid-typed but empty arguments for a tool: what a careless agent sends."""
    empty: dict[str, Any] = {"string": "", "integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}
    arguments: dict[str, Any] = {}
    for name, spec in (schema.get("properties") or {}).items():
        kind = spec.get("type") if isinstance(spec, dict) else None
        arguments[name] = empty.get(kind, "") if isinstance(kind, str) else ""
    return arguments


def _reference(results: Sequence[TrialResult]) -> PropertyResult:
    failed = [f"{r.scenario.scenario_id}: {r.record.verdict.explanation}" for r in results if not r.passed]
    detail = "; ".join(failed[:5]) or f"passes all {len(results)} scenarios"
    return PropertyResult("reference_passes", not failed, detail)


def _named(domain: Domain, forced: dict[str, list[TrialResult]]) -> PropertyResult:
    reachable = set().union(*(domain.failure_modes_of(name) for name in domain.task_types))
    unreachable = sorted(set(FAILURE_MODES) - reachable)
    total = sum(len(results) for results in forced.values())
    misnamed = [
        f"{r.scenario.task_type}/{mode} -> {r.signature.label if r.signature else 'passed'}"
        for mode, results in forced.items()
        for r in results
        if r.signature is None or r.signature.label != EXPECTED_SIGNATURE[mode]
    ]
    share = 1 - len(misnamed) / total if total else 0.0
    problems = [f"modes {unreachable} are reachable in no task type"] if unreachable else []
    if share < NAMED_SHARE:
        problems.append(f"only {share:.1%} of {total} forced trials named right; e.g. {sorted(set(misnamed))[:6]}")
    detail = "; ".join(problems) or f"{share:.1%} of {total} forced trials named right"
    return PropertyResult("failure_modes", not problems, detail)


def _declared(domain: Domain, results: Sequence[TrialResult]) -> PropertyResult:
    seen = {c.error_type for r in results for c in r.record.tool_calls if c.error_type is not None}
    unknown = sorted(seen - set(domain.errors) - {"invalid_argument"})
    detail = f"undeclared error types {unknown}" if unknown else f"error types seen: {sorted(seen)}"
    return PropertyResult("errors_declared", not unknown, detail)


def _collateral(sandbox: Sandbox, count: int, seed: int) -> PropertyResult:
    try:
        probes = check_collateral(sandbox, scenarios_per_task_type=count, seed=seed)
    except CollateralDamageError as broken:
        return PropertyResult("collateral", False, "; ".join(r.describe() for r in broken.broken[:5]))
    return PropertyResult("collateral", True, f"{len(probes)} probes hold")


def _mutations(sandbox: Sandbox, seed: int) -> PropertyResult:
    async def run_all() -> list[Mutated]:
        found: list[Mutated] = []
        for name in sorted(sandbox.domain.task_types):
            for scenario in sandbox.scenarios(name, 1, seed=seed):
                found.extend(await mutate_scenario(sandbox, scenario))
        return found

    mutated = asyncio.run(run_all())
    kinds = list(dict.fromkeys(m.mutation for m in mutated))
    counts = ", ".join(
        f"{kind} {sum(m.agrees for m in mutated if m.mutation == kind)}/{sum(m.mutation == kind for m in mutated)}"
        for kind in kinds
    )
    share = sum(m.agrees for m in mutated) / len(mutated) if mutated else 0.0
    summary = f"agreement {share:.1%} of {len(mutated)} trials ({counts})"
    print(f"mutation agreement, {sandbox.domain.name}: {summary}")
    disagree = [m.describe() for m in mutated if not m.agrees]
    detail = summary + ("; " + "; ".join(disagree[:5]) if disagree else "")
    return PropertyResult("mutations", bool(mutated) and not disagree, detail)


def check_domain(
    domain: Domain | str,
    *,
    scenarios_per_task_type: int = 3,
    seed: int = 0,
    size: str = "small",
    properties: Sequence[str] | None = None,
) -> list[PropertyResult]:
    """Hold `domain` to the contract (see the module doc); raise `DomainContractError` naming broken properties.

    A light domain (`Domain.grade == "light"`) is held to `LIGHT_PROPERTIES` only. `properties` narrows the run
    to some of them (by name). Runs its own event loop: call it from a plain (synchronous) test function.
    """
    if isinstance(domain, str):
        with Sandbox(domain, seed=seed, size=size) as sandbox:
            return check_domain(
                sandbox.domain,
                scenarios_per_task_type=scenarios_per_task_type,
                seed=seed,
                size=size,
                properties=properties,
            )
    wanted = set(properties or PROPERTIES)
    if domain.grade == "light":
        wanted &= LIGHT_PROPERTIES
    unknown = sorted(wanted - set(PROPERTIES))
    if unknown:
        raise ValueError(f"unknown contract properties {unknown}; known: {', '.join(PROPERTIES)}")
    with Sandbox(domain, seed=seed, size=size) as sandbox:
        results = asyncio.run(_run(domain, sandbox, wanted, scenarios_per_task_type, seed, size))
        if "collateral" in wanted:
            results.append(_collateral(sandbox, min(scenarios_per_task_type, 2), seed))
        if "intent_fields" in wanted:
            results.append(_intent_fields(domain, sandbox, scenarios_per_task_type, seed))
        if "mutations" in wanted:
            results.append(_mutations(sandbox, seed))
    broken = [result for result in results if not result.held]
    if broken:
        raise DomainContractError(domain.name, broken)
    return results


async def _run(
    domain: Domain, sandbox: Sandbox, wanted: set[str], count: int, seed: int, size: str
) -> list[PropertyResult]:
    scenarios: list[Scenario] = [s for name in domain.task_types for s in sandbox.scenarios(name, count, seed=seed)]
    results: list[PropertyResult] = []
    if "policy" in wanted:
        results.append(_policy(domain))
    if "systems" in wanted:
        results.append(_systems(domain))
    if "deterministic" in wanted:
        results.append(_deterministic(domain, sandbox, seed, size))
    if wanted & {"write_checks_guard", "do_nothing_fails"}:
        idle = await run_trials(sandbox, scenarios, 1, lambda context: _DoNothing())
        if "write_checks_guard" in wanted:
            results.append(_guarded(idle, domain))
        if "do_nothing_fails" in wanted:
            results.append(_do_nothing(idle, domain))
    if "tools_never_raise" in wanted:
        results.append(await _tools_never_raise(domain, sandbox))
    observed: list[TrialResult] = []
    if "reference_passes" in wanted:
        clean = await run_trials(sandbox, scenarios, 1, ReferenceAgent.factory(FlawConfig.off()))
        observed.extend(clean)
        results.append(_reference(clean))
    if wanted & {"failure_modes", "errors_declared"}:
        forced: dict[str, list[TrialResult]] = {}
        for mode in FAILURE_MODES:
            applicable = [s for s in scenarios if mode in domain.failure_modes_of(s.task_type)]
            forced[mode] = await run_trials(sandbox, applicable, 1, ReferenceAgent.factory(FlawConfig.forced(mode)))
            observed.extend(forced[mode])
        if "failure_modes" in wanted:
            results.append(_named(domain, forced))
    if "errors_declared" in wanted:
        results.append(_declared(domain, observed))
    return results
