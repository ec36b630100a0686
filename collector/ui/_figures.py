"""The figures of a period, per task type, computed from the store's trial rows with `reliability`.

The UI does not import the loop or the report (they sit at its rank), so it applies the same rules itself:
a period's official run is its newest finished run (older finished runs of the period, and unfinished ones, are
exploratory); trials that ended in a simulator or infrastructure error say nothing about the agent and are left
out; a ticket counts once its pass^k is settled (k trials, or one pass and one fail under curtailed replay), as
in the replay tables and the report (`reliability.summarize_trials`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from passhat.collector.reliability import TaskTypeSummary, summarize_trials
from passhat.collector.store import ReplayRun, Store, TrialRow


@dataclass(frozen=True)
class TaskTypeFigures:
    """One task type in one run: pass@1, pass@k, pass^k with intervals, and what its failures looked like."""

    task_type: str
    period: str
    run_id: str
    summary: TaskTypeSummary
    signatures: Counter[str] = field(default_factory=Counter)
    left_out: int = 0  # tickets whose pass^k is not settled yet


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
    """Per task type figures of one run's trials (`reliability.summarize_trials`, as the replay tables)."""
    design = run.params.get("design")
    min_trials = design.get("min_trials") if isinstance(design, dict) else None
    rows = summarize_trials(usable(trials), run.k, min_trials=min_trials if isinstance(min_trials, int) else None)
    return {
        row.task_type: TaskTypeFigures(
            row.task_type, period_of(run), run.run_id, row.summary, Counter(row.signatures), row.unsettled_tickets
        )
        for row in rows
    }


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
