"""The figures of a period, per task type, computed from the store's trial rows with `reliability`.

A period's official run is chosen by the store's rule (`passhat.collector.store.choose_official`: the finished
run made official most recently; exploratory one-offs never are unless promoted), the same rule the loop, the
report and `passhat runs` use; trials that ended in a simulator or infrastructure error say nothing about the
agent and are left out; a ticket counts once its pass^k is settled (k trials, or one pass and one fail under
curtailed replay), as in the replay tables and the report. Figures come from the store's per-ticket tallies
(`Store.ticket_tallies`), never from every trial.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from passhat.collector.reliability import TaskTypeSummary, summarize_tallies
from passhat.collector.store import ReplayRun, RunParams, RunRole, Store, TicketTally, choose_official, role_of


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
    period = RunParams.of(run).period
    return period if period else run.run_id


def _by_period(runs: Sequence[ReplayRun]) -> dict[str, list[ReplayRun]]:
    by_period: dict[str, list[ReplayRun]] = {}
    for run in runs:
        by_period.setdefault(period_of(run), []).append(run)
    return by_period


def official_runs(store: Store, project: str, *, periods: int = 12) -> list[ReplayRun]:
    """The official run of each of the last `periods` periods that have one, newest period first."""
    by_period = _by_period(store.list_replay_runs(project, limit=500))
    chosen = [run for runs in by_period.values() if (run := choose_official(runs)) is not None]
    return sorted(chosen, key=period_of, reverse=True)[:periods]


def run_roles(store: Store, project: str, *, limit: int = 200) -> list[tuple[ReplayRun, RunRole]]:
    """Runs newest first, each with its role in its period (official, exploratory, superseded, running, failed)."""
    runs = store.list_replay_runs(project, limit=limit)
    officials = {period: choose_official(members) for period, members in _by_period(runs).items()}
    return [(run, role_of(run, officials[period_of(run)])) for run in runs]


def role_in_period(store: Store, project: str, run: ReplayRun) -> RunRole:
    """One run's role in its period."""
    same = [r for r in store.list_replay_runs(project, limit=500) if period_of(r) == period_of(run)]
    return role_of(run, choose_official(same or [run]))


def figures_of_run(run: ReplayRun, tallies: Sequence[TicketTally]) -> dict[str, TaskTypeFigures]:
    """Per task type figures of one run's tallies (`reliability.summarize_tallies`, as the replay tables)."""
    rows = summarize_tallies(tallies, run.k, min_trials=RunParams.of(run).design.min_trials)
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
    tallies: Mapping[str, list[TicketTally]]  # read when first asked for, in the UI (`FigureCache.history`)

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
    tallies = {period_of(r): store.ticket_tallies(project, r.run_id) for r in runs}
    figures = {period_of(r): figures_of_run(r, tallies[period_of(r)]) for r in runs}
    return History(names, {period_of(r): r for r in runs}, figures, tallies)
