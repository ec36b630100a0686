"""Comparing two replay runs on the tickets both replayed: did the candidate agent make things better?

Used by `passhat replay --compare-to RUN` (the candidate replays the baseline run's tickets), by
`passhat runs compare A B`, and by `passhat.testing.assert_no_regression` (a CI gate).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from passhat.collector.reliability import MIN_PAIRED_TICKETS, PairedDifference, paired_difference
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
class FlippedTicket:
    """A ticket both runs replayed that one run handled every time and the other did not."""

    ticket_id: str
    task_type: str
    baseline: tuple[int, int]  # (usable trials, passes)
    candidate: tuple[int, int]

    @property
    def became_unreliable(self) -> bool:
        """Reliable (every trial passed) with the baseline, not with the candidate."""
        return self.baseline[1] == self.baseline[0]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ticket_id": self.ticket_id,
            "task_type": self.task_type,
            "baseline": {"trials": self.baseline[0], "passes": self.baseline[1]},
            "candidate": {"trials": self.candidate[0], "passes": self.candidate[1]},
            "became_unreliable": self.became_unreliable,
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
    requested_k: int | None = None  # the k asked for, when fewer trials forced a smaller one
    unsettled_tickets: int = 0  # shared tickets whose pass^k neither run settled (too few trials): left out
    flips: tuple[FlippedTicket, ...] = ()

    @property
    def notes(self) -> list[str]:
        """What the comparison had to leave out or lower, in words."""
        found = []
        if self.requested_k is not None and self.requested_k != self.k:
            found.append(
                f"no shared ticket has pass^{self.requested_k} settled in both runs (too few usable trials), so the "
                f"runs are compared at k = {self.k}, the most trials every shared ticket has"
            )
        if self.unsettled_tickets:
            found.append(
                f"{self.unsettled_tickets} shared ticket(s) with fewer than {self.k} usable trials and outcomes that "
                f"all agree were left out (their pass^{self.k} is not settled)"
            )
        small = [t.task_type for t in self.task_types if t.pass_hat_k.interval is None]
        if small:
            found.append(
                f"{', '.join(small)}: fewer than {MIN_PAIRED_TICKETS} shared tickets, so no interval is given (too "
                f"few pairs to trust one); replay more tickets with --compare-to to get one"
            )
        return found

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


def _counts(tallies: Sequence[TicketTally]) -> dict[str, tuple[str, int, int]]:
    """Per ticket: (task type, usable trials, passes), for tickets with a usable trial (a trial that ended in a
    simulator or infrastructure error is not the agent's doing: left out on both sides)."""
    return {t.ticket_id: (t.task_type, t.trials, t.passes) for t in tallies if t.trials > 0}


def _settled(trials: int, passes: int, k: int) -> bool:
    """pass^k and pass@k are known: k trials ran, or one passed and one failed already (curtailed replay)."""
    return trials >= k or 0 < passes < trials


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
    base, cand = _counts(baseline_tallies), _counts(candidate_tallies)
    shared = sorted(set(base) & set(cand))
    if not shared:
        raise ValueError(
            f"runs {baseline.run_id} and {candidate.run_id} share no ticket with a usable trial: "
            f"replay the candidate with --compare-to {baseline.run_id} to use the same tickets"
        )

    def both_settled(ticket: str, at: int) -> bool:
        return _settled(*base[ticket][1:], at) and _settled(*cand[ticket][1:], at)

    k = wanted
    if not any(both_settled(t, k) for t in shared):
        # Too few usable trials for pass^k on every shared ticket: compare at the most trials all of them have.
        k = min(min(base[t][1], cand[t][1]) for t in shared)
    kept = [t for t in shared if both_settled(t, k)]
    by_type: dict[str, list[str]] = {}
    for ticket in kept:
        by_type.setdefault(base[ticket][0], []).append(ticket)
    rows = []
    for task_type, tickets in sorted(by_type.items()):
        at_1, hat_k = paired_difference(
            [base[t][1] for t in tickets], [base[t][2] for t in tickets],
            [cand[t][1] for t in tickets], [cand[t][2] for t in tickets], k, level=level, curtailed=True,
        )  # fmt: skip
        rows.append(TaskTypeComparison(task_type, at_1, hat_k))
    flips = tuple(
        FlippedTicket(t, base[t][0], base[t][1:], cand[t][1:])
        for t in shared
        if (base[t][2] == base[t][1]) != (cand[t][2] == cand[t][1])
    )
    unpaired = len(set(base) ^ set(cand))
    return RunComparison(
        baseline, candidate, k, level, rows, unpaired, requested_k=wanted, unsettled_tickets=len(shared) - len(kept),
        flips=flips,
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
