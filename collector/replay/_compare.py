"""Comparing two replay runs on the tickets both replayed: did the candidate agent make things better?

Used by `passhat replay --compare-to RUN` (the candidate replays the baseline run's tickets), by
`passhat runs compare A B`, and by `passhat.testing.assert_no_regression` (a CI gate).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from passhat.collector.reliability import FlippedTicket, PairedTaskType, TicketPairing, pair_tickets, pairing_notes
from passhat.collector.store import ReplayRun, RunParams, Store, StoreError, TicketTally, TrialRow, tallies_of_trials

#: One task type's paired differences (kept under the name this module has always exported).
TaskTypeComparison = PairedTaskType


@dataclass(frozen=True)
class RunComparison:
    """Two runs compared per task type at one k and interval level."""

    baseline: ReplayRun
    candidate: ReplayRun
    k: int
    level: float
    task_types: list[PairedTaskType]
    unpaired_tickets: int  # tickets only one of the runs has usable trials for (left out)
    requested_k: int | None = None  # the k asked for, when fewer trials forced a smaller one
    unsettled_tickets: int = 0  # shared tickets whose pass^k neither run settled (too few trials): left out
    flips: tuple[FlippedTicket, ...] = ()

    @property
    def notes(self) -> list[str]:
        """What the comparison had to leave out or lower, in words."""
        return pairing_notes(
            TicketPairing(
                self.k, self.requested_k or self.k, self.level, self.task_types, self.unpaired_tickets,
                self.unsettled_tickets, self.flips,
            )
        )  # fmt: skip

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
            "unsettled_tickets": self.unsettled_tickets,
            "flips": [f.to_dict() for f in self.flips],
            "notes": self.notes,
        }


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
    wanted = k or min(baseline.k, candidate.k)
    try:
        pairing = pair_tickets(baseline_tallies, candidate_tallies, wanted, level=level)
    except ValueError:
        raise ValueError(
            f"runs {baseline.run_id} and {candidate.run_id} share no ticket with a usable trial: "
            f"replay the candidate with --compare-to {baseline.run_id} to use the same tickets"
        ) from None
    return RunComparison(
        baseline, candidate, pairing.k, level, pairing.task_types, pairing.unpaired_tickets, requested_k=wanted,
        unsettled_tickets=pairing.unsettled_tickets, flips=pairing.flips,
    )  # fmt: skip


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
