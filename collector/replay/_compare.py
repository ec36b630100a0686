"""Comparing two replay runs on the tickets both replayed: did the candidate agent make things better?

Used by `passhat replay --compare-to RUN` (the candidate replays the baseline run's tickets), by
`passhat runs compare A B`, and by `passhat.testing.assert_no_regression` (a CI gate).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from passhat.collector.reliability import PairedDifference, paired_difference
from passhat.collector.store import ReplayRun, RunParams, Store, StoreError, TicketTally, TrialRow, tallies_of_trials


@dataclass(frozen=True)
class TaskTypeComparison:
    """One task type: the paired differences (candidate minus baseline) over the tickets both runs replayed."""

    task_type: str
    pass_at_1: PairedDifference
    pass_hat_k: PairedDifference

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_type": self.task_type,
            "tickets": self.pass_hat_k.tickets,
            "pass_at_1": self.pass_at_1.to_dict(),
            "pass_hat_k": self.pass_hat_k.to_dict(),
        }


@dataclass(frozen=True)
class RunComparison:
    """Two runs compared per task type at one k and interval level."""

    baseline: ReplayRun
    candidate: ReplayRun
    k: int
    level: float
    task_types: list[TaskTypeComparison]
    unpaired_tickets: int  # tickets only one of the runs has usable trials for (left out)

    @property
    def regressed(self) -> list[str]:
        """Task types whose pass^k is credibly lower with the candidate."""
        return [t.task_type for t in self.task_types if t.pass_hat_k.credibly_lower]

    def to_dict(self) -> dict[str, Any]:
        def side(run: ReplayRun) -> dict[str, Any]:
            return {
                "run_id": run.run_id,
                "agent": RunParams.of(run).agent,
                "agent_version": RunParams.of(run).agent_version,
            }

        return {
            "baseline": side(self.baseline),
            "candidate": side(self.candidate),
            "k": self.k,
            "level": self.level,
            "task_types": [t.to_dict() for t in self.task_types],
            "regressed": self.regressed,
            "unpaired_tickets": self.unpaired_tickets,
        }


def _counts(tallies: Sequence[TicketTally], k: int) -> dict[str, tuple[str, int, int]]:
    """Per ticket: (task type, usable trials, passes), for tickets with at least k usable trials (a trial that
    ended in a simulator or infrastructure error is not the agent's doing: left out on both sides)."""
    return {t.ticket_id: (t.task_type, t.trials, t.passes) for t in tallies if t.trials >= k}


def compare_trials(
    baseline: ReplayRun,
    baseline_trials: Sequence[TrialRow],
    candidate: ReplayRun,
    candidate_trials: Sequence[TrialRow],
    *,
    k: int | None = None,
    level: float = 0.95,
) -> RunComparison:
    """Pair the two runs' tickets and compute per task type the paired differences at ``k`` (default: the
    smaller of the runs' k)."""
    return compare_tallies(
        baseline, tallies_of_trials(baseline_trials), candidate, tallies_of_trials(candidate_trials), k=k, level=level
    )


def compare_tallies(
    baseline: ReplayRun,
    baseline_tallies: Sequence[TicketTally],
    candidate: ReplayRun,
    candidate_tallies: Sequence[TicketTally],
    *,
    k: int | None = None,
    level: float = 0.95,
) -> RunComparison:
    """`compare_trials` from the runs' per-ticket tallies (`Store.ticket_tallies`)."""
    k = k or min(baseline.k, candidate.k)
    base, cand = _counts(baseline_tallies, k), _counts(candidate_tallies, k)
    shared = sorted(set(base) & set(cand))
    if not shared:
        raise ValueError(
            f"runs {baseline.run_id} and {candidate.run_id} share no ticket with {k} usable trials: "
            f"replay the candidate with --compare-to {baseline.run_id} to use the same tickets"
        )
    by_type: dict[str, list[str]] = {}
    for ticket in shared:
        by_type.setdefault(base[ticket][0], []).append(ticket)
    rows = []
    for task_type, tickets in sorted(by_type.items()):
        at_1, hat_k = paired_difference(
            [base[t][1] for t in tickets], [base[t][2] for t in tickets],
            [cand[t][1] for t in tickets], [cand[t][2] for t in tickets], k, level=level,
        )  # fmt: skip
        rows.append(TaskTypeComparison(task_type, at_1, hat_k))
    unpaired = len(set(base) ^ set(cand))
    return RunComparison(baseline, candidate, k, level, rows, unpaired)


def compare_runs(
    store: Store, project: str, baseline_id: str, candidate_id: str, *, k: int | None = None, level: float = 0.95
) -> RunComparison:
    """Compare two finished runs of the store (see `compare_trials`)."""
    runs = []
    for run_id in (baseline_id, candidate_id):
        run = store.get_replay_run(project, run_id)
        if run is None:
            raise StoreError(f"no replay run {run_id!r} in project {project!r}: `passhat runs list` shows the runs")
        runs.append(run)
    base, cand = runs
    return compare_tallies(
        base, store.ticket_tallies(project, base.run_id), cand, store.ticket_tallies(project, cand.run_id), k=k,
        level=level,
    )  # fmt: skip
