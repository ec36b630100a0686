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
    asked_k: int | None = None  # the k asked for, when it exceeded a run's trials per ticket (see largest_k)

    @property
    def largest_k(self) -> int:
        """The largest k the runs can be compared at: the fewer trials per ticket of the two runs."""
        return min(trials_per_ticket(self.baseline), trials_per_ticket(self.candidate))

    @property
    def notes(self) -> list[str]:
        """What the comparison had to leave out or lower, in words."""
        lowered = []
        if self.asked_k is not None and self.asked_k > self.largest_k:
            short = min((self.baseline, self.candidate), key=trials_per_ticket)
            lowered.append(
                f"pass^{self.asked_k} was asked for, but run {short.run_id} has {trials_per_ticket(short)} trials "
                f"per ticket: pass^k above a ticket's trials cannot be estimated without bias (only the tickets it "
                f"failed would count), so the runs are compared at k = {self.largest_k} at most"
            )
        return lowered + pairing_notes(
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
    """`compare_trials` from the runs' per-ticket tallies (`Store.ticket_tallies`).

    A ``k`` above either run's trials per ticket is lowered to them (a note says so): a ticket's pass^k with
    fewer than k trials is known only when one of them failed, so what would be left is a selection of the
    tickets a run failed. ValueError for a ``k`` below 1 or a ``level`` outside (0, 1)."""
    if k is not None and k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"the interval's level must lie strictly between 0 and 1 (e.g. 0.95), got {level:g}")
    asked = k or min(baseline.k, candidate.k)
    wanted = min(asked, trials_per_ticket(baseline), trials_per_ticket(candidate))
    base_tallies, cand_tallies = list(baseline_tallies), list(candidate_tallies)
    if not {t.ticket_id for t in base_tallies if t.trials} & {t.ticket_id for t in cand_tallies if t.trials}:
        raise ValueError(
            f"runs {baseline.run_id} and {candidate.run_id} share no ticket with a usable trial: "
            f"replay the candidate with --compare-to {baseline.run_id} to use the same tickets"
        )
    pairing = pair_tickets(base_tallies, cand_tallies, wanted, level=level)
    return RunComparison(
        baseline, candidate, pairing.k, level, pairing.task_types, pairing.unpaired_tickets, requested_k=wanted,
        unsettled_tickets=pairing.unsettled_tickets, flips=pairing.flips, asked_k=asked,
    )  # fmt: skip


def trials_per_ticket(run: ReplayRun) -> int:
    """How many trials each ticket of the run was to get (its design's; at least its k)."""
    return max(RunParams.of(run).trials or run.k, run.k)


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
