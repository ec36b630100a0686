"""The before-you-ship gate: run a chosen part of the suite for an agent, and fail on what is credibly wrong.

Per task type (of each domain) the gate fails when

- its pass^k is credibly below ``threshold``: the whole interval (continuity-corrected Wilson, over the task
  type's tasks) lies below it; or
- it is credibly worse than a ``baseline`` suite run on the same tasks: the paired difference in pass^k
  (candidate minus baseline, task by task) has its whole interval below zero.

"Credibly" keeps noise from failing a build: a task type with few tasks has a wide interval and fails only on
a large gap. `GateResult.check()` raises `GateFailure` (an AssertionError, so pytest prints it) whose message
names each failing task type with its figure, interval and task count.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from passhat.collector.reliability import paired_difference, settled, summarize_task_type
from passhat.collector.store import Store, TicketTally, open_store
from passhat.collector.suite._profiles import suite_agent
from passhat.collector.suite._run import SuiteRunSettings, run_suite, suite_runs
from passhat.collector.suite._tasks import SuiteError


class GateFailure(AssertionError):  # noqa: N818 (a test failure, as pytest names it)
    """The gate failed; the message lists every failing task type with its figures."""


@dataclass
class GateResult:
    """What the gate found for one suite run: each task type's figures and the reasons it fails (if any)."""

    run_id: str
    k: int
    level: float
    threshold: float | None
    baseline: str | None
    task_types: list[dict[str, Any]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures

    def message(self) -> str:
        if self.passed:
            return f"suite gate passed: {len(self.task_types)} task type(s) of run {self.run_id}, k = {self.k}"
        lines = [f"suite gate failed for run {self.run_id} ({len(self.failures)} problem(s), k = {self.k}):"]
        lines.extend(f"  - {failure}" for failure in self.failures)
        return "\n".join(lines)

    def check(self) -> None:
        """Raise `GateFailure` with the readable message when any task type fails."""
        if not self.passed:
            raise GateFailure(self.message())


def _by_type(tallies: Sequence[TicketTally], k: int) -> dict[tuple[str, str], dict[str, TicketTally]]:
    grouped: dict[tuple[str, str], dict[str, TicketTally]] = collections.defaultdict(dict)
    for tally in tallies:
        if tally.trials > 0 and bool(settled([tally.trials], [tally.passes], k)[0]):
            grouped[(str(tally.domain), tally.task_type)][tally.ticket_id] = tally
    return grouped


def gate_run(
    store: Store,
    project: str,
    run_id: str,
    *,
    threshold: float | None = None,
    baseline: str | None = None,
    level: float = 0.95,
) -> GateResult:
    """Judge a stored suite run against ``threshold`` (pass^k) and/or a ``baseline`` suite run (paired)."""
    if threshold is None and baseline is None:
        raise SuiteError("give the gate a threshold, a baseline run, or both")
    if threshold is not None and not 0.0 <= threshold <= 1.0:
        raise SuiteError(f"the threshold is a pass^k between 0 and 1 (0.8 for 80%), got {threshold}")
    names = [run_id] if baseline is None else [run_id, baseline]
    runs = suite_runs(store, project, names)
    k = min(run.k for run in runs)
    mine = _by_type(store.ticket_tallies(project, run_id), k)
    theirs = {} if baseline is None else _by_type(store.ticket_tallies(project, baseline), k)
    result = GateResult(run_id, k, level, threshold, baseline)
    for (domain, task_type), tasks in sorted(mine.items()):
        name = f"{domain}/{task_type}"
        n = np.array([t.trials for t in tasks.values()])
        c = np.array([t.passes for t in tasks.values()])
        summary = summarize_task_type(n, c, k, level=level)
        low, high = summary.pass_hat_k_ci
        row: dict[str, Any] = {"domain": domain, "task_type": task_type, **summary.to_dict()}
        figure = (
            f"pass^{k} {100 * summary.pass_hat_k:.1f}% [{100 * low:.1f}, {100 * high:.1f}] over {summary.tickets} tasks"
        )
        if threshold is not None and high < threshold:
            result.failures.append(f"{name}: {figure} is credibly below the threshold {100 * threshold:.1f}%")
        other = theirs.get((domain, task_type), {})
        shared = sorted(set(tasks) & set(other))
        if baseline is not None and shared:
            _, hat = paired_difference(
                [other[t].trials for t in shared], [other[t].passes for t in shared],
                [tasks[t].trials for t in shared], [tasks[t].passes for t in shared], k, level=level,
            )  # fmt: skip
            row["paired_pass_hat_k"] = hat.to_dict()
            if hat.credibly_lower and hat.interval is not None:
                a, b = hat.interval
                result.failures.append(
                    f"{name}: pass^{k} {100 * hat.candidate:.1f}% against the baseline's {100 * hat.baseline:.1f}% "
                    f"on the same {hat.tickets} tasks: {100 * hat.difference:+.1f} pts "
                    f"[{100 * a:+.1f}, {100 * b:+.1f}], "
                    f"credibly worse than run {baseline}"
                )
        result.task_types.append(row)
    return result


def ship_gate(
    agent: str = "reference",
    *,
    store: Store | str,
    project: str = "default",
    domains: Sequence[str] = (),
    task_types: Sequence[str] = (),
    k: int = 20,
    threshold: float | None = None,
    baseline: str | None = None,
    flaws: str | None = None,
    label: str = "",
    level: float = 0.95,
    workers: int = 0,
) -> GateResult:
    """Run part of the suite with ``agent`` (as `passhat suite run --agent` names it; ``flaws`` a reference
    profile) and judge the run (`gate_run`). ``store`` is a Store or its URL. Call ``.check()`` in a test."""
    opened = open_store(store) if isinstance(store, str) else store
    try:
        opened.ensure_project(project)
        spec = suite_agent(agent, flaws=flaws)
        settings = SuiteRunSettings(
            domains=tuple(domains), task_types=tuple(task_types), k=k, label=label, workers=workers
        )
        outcome = asyncio.run(run_suite(opened, project, spec, settings))
        return gate_run(opened, project, outcome.run.run_id, threshold=threshold, baseline=baseline, level=level)
    finally:
        if isinstance(store, str):
            opened.close()
