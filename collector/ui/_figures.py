"""The figures of a period, per task type, computed from the store's trial rows with `reliability`.

The UI does not import the loop or the report (they sit at its rank), so it applies the same rules itself:
a period's official run is its newest finished run (older finished runs of the period, and unfinished ones, are
exploratory); trials that ended in a simulator or infrastructure error say nothing about the agent and are left
out; a ticket counts when at least k usable trials remain (as the loop's report does).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from passhat.collector.reliability import TaskTypeSummary, summarize_task_type
from passhat.collector.store import ReplayRun, Store, TrialRow

UNCLASSIFIED = "unclassified"
#: Bootstrap resamples per interval: enough for a stable second decimal, cheap enough to draw a page with.
_RESAMPLES = 400


@dataclass(frozen=True)
class TaskTypeFigures:
    """One task type in one run: pass@1, pass@k, pass^k with intervals, and what its failures looked like."""

    task_type: str
    period: str
    run_id: str
    summary: TaskTypeSummary
    signatures: Counter[str] = field(default_factory=Counter)
    left_out: int = 0  # tickets without k usable trials


def period_of(run: ReplayRun) -> str:
    """The period a run replayed (`2026-W48`), or its id for a run of generated scenarios."""
    period = run.params.get("period")
    return str(period) if period else run.run_id


def official_runs(store: Store, project: str, *, periods: int = 12) -> list[ReplayRun]:
    """The official run of each of the last `periods` periods that have one, newest period first."""
    chosen: dict[str, ReplayRun] = {}
    for run in store.list_replay_runs(project, limit=500):
        if run.status == "finished":
            chosen.setdefault(period_of(run), run)  # runs come newest first: the first one seen wins
    return sorted(chosen.values(), key=lambda r: period_of(r), reverse=True)[:periods]


def official_run_ids(store: Store, project: str) -> set[str]:
    """The ids of every period's official run (the newest finished one)."""
    return {r.run_id for r in official_runs(store, project, periods=500)}


def usable(trials: Sequence[TrialRow]) -> list[TrialRow]:
    """The trials that speak about the agent (no simulator or infrastructure error)."""
    return [t for t in trials if not (t.simulator_error or t.infra_error)]


def figures_of_run(run: ReplayRun, trials: Sequence[TrialRow]) -> dict[str, TaskTypeFigures]:
    """Per task type figures of one run's trials."""
    by_ticket: dict[tuple[str, str], list[TrialRow]] = {}
    for trial in usable(trials):
        by_ticket.setdefault((trial.task_type, trial.ticket_id), []).append(trial)
    grouped: dict[str, list[list[TrialRow]]] = {}
    left_out: Counter[str] = Counter()
    for (task_type, _ticket), rows in sorted(by_ticket.items()):
        if len(rows) >= run.k:
            grouped.setdefault(task_type, []).append(rows)
        else:
            left_out[task_type] += 1
    figures: dict[str, TaskTypeFigures] = {}
    for task_type, tickets in grouped.items():
        n = [len(rows) for rows in tickets]
        c = [sum(t.passed for t in rows) for rows in tickets]
        summary = summarize_task_type(n, c, run.k, resamples=_RESAMPLES, seed=0)
        signatures = Counter(t.failure_label or UNCLASSIFIED for rows in tickets for t in rows if not t.passed)
        figures[task_type] = TaskTypeFigures(
            task_type, period_of(run), run.run_id, summary, signatures, left_out[task_type]
        )
    return figures


@dataclass(frozen=True)
class History:
    """The official figures of the last periods: `periods` oldest first, `figures[period][task_type]`."""

    periods: list[str]
    runs: dict[str, ReplayRun]
    figures: dict[str, dict[str, TaskTypeFigures]]
    trials: dict[str, list[TrialRow]]

    def latest(self, task_type: str) -> TaskTypeFigures | None:
        for period in reversed(self.periods):
            found = self.figures[period].get(task_type)
            if found is not None:
                return found
        return None

    def series(self, task_type: str) -> list[tuple[str, TaskTypeFigures | None]]:
        return [(period, self.figures[period].get(task_type)) for period in self.periods]

    def task_types(self) -> list[str]:
        return sorted({name for per in self.figures.values() for name in per})


def history(store: Store, project: str, *, periods: int = 8) -> History:
    """The official figures of the last `periods` periods with a finished run."""
    runs = list(reversed(official_runs(store, project, periods=periods)))
    names = [period_of(r) for r in runs]
    trials = {period_of(r): store.list_trials(project, r.run_id) for r in runs}
    figures = {period_of(r): figures_of_run(r, trials[period_of(r)]) for r in runs}
    return History(names, {period_of(r): r for r in runs}, figures, trials)
