"""Pairing two runs' tickets for a paired comparison: which shared tickets count at which k, per task type
paired differences, the tickets that flipped between reliable and not, and what had to be left out, in words.

Works on anything with a ticket's id, task type and counted trials and passes (the store's `TicketTally`), so
`passhat runs compare`, the loop and the web UI share it. It degrades rather than refusing: tickets settled
below k (curtailed replay) count, k is lowered when no shared ticket is settled at it, and a task type with
fewer than `MIN_PAIRED_TICKETS` pairs gets no interval; each is said in `pairing_notes`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from passhat.collector.reliability._paired import MIN_PAIRED_TICKETS, PairedDifference, paired_difference


class TicketCounts(Protocol):
    """What pairing reads of one ticket of a run (`passhat.collector.store.TicketTally` has it)."""

    @property
    def ticket_id(self) -> str: ...

    @property
    def task_type(self) -> str: ...

    @property
    def trials(self) -> int: ...

    @property
    def passes(self) -> int: ...


@dataclass(frozen=True)
class PairedTaskType:
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
class TicketPairing:
    """The shared tickets of two runs compared per task type at ``k`` (``requested_k`` was asked for)."""

    k: int
    requested_k: int
    level: float
    task_types: list[PairedTaskType]
    unpaired_tickets: int  # tickets only one run has usable trials for
    unsettled_tickets: int  # shared tickets whose pass^k neither run settled
    flips: tuple[FlippedTicket, ...]


def _settled(trials: int, passes: int, k: int) -> bool:
    """pass^k and pass@k are known: k trials ran, or one passed and one failed already (curtailed replay)."""
    return trials >= k or 0 < passes < trials


def pair_tickets(
    baseline: Iterable[TicketCounts], candidate: Iterable[TicketCounts], k: int, *, level: float = 0.95
) -> TicketPairing:
    """Pair the tickets both sides have usable trials for; ValueError when they share none."""
    base = {t.ticket_id: (t.task_type, t.trials, t.passes) for t in baseline if t.trials > 0}
    cand = {t.ticket_id: (t.task_type, t.trials, t.passes) for t in candidate if t.trials > 0}
    shared = sorted(set(base) & set(cand))
    if not shared:
        raise ValueError("the runs share no ticket with a usable trial")

    def both_settled(ticket: str, at: int) -> bool:
        return _settled(*base[ticket][1:], at) and _settled(*cand[ticket][1:], at)

    used = k
    if not any(both_settled(t, used) for t in shared):
        # Too few usable trials for pass^k on every shared ticket: compare at the most trials all of them have.
        used = min(min(base[t][1], cand[t][1]) for t in shared)
    kept = [t for t in shared if both_settled(t, used)]
    by_type: dict[str, list[str]] = {}
    for ticket in kept:
        by_type.setdefault(base[ticket][0], []).append(ticket)
    rows = []
    for task_type, tickets in sorted(by_type.items()):
        at_1, hat_k = paired_difference(
            [base[t][1] for t in tickets], [base[t][2] for t in tickets],
            [cand[t][1] for t in tickets], [cand[t][2] for t in tickets], used, level=level, curtailed=True,
        )  # fmt: skip
        rows.append(PairedTaskType(task_type, at_1, hat_k))
    flips = tuple(
        FlippedTicket(t, base[t][0], (base[t][1], base[t][2]), (cand[t][1], cand[t][2]))
        for t in shared
        if (base[t][2] == base[t][1]) != (cand[t][2] == cand[t][1])
    )
    return TicketPairing(
        used, k, level, rows, len(set(base) ^ set(cand)), len(shared) - len(kept), flips
    )  # fmt: skip


def pairing_notes(pairing: TicketPairing) -> list[str]:
    """What the comparison had to leave out or lower, in words."""
    found = []
    if pairing.requested_k != pairing.k:
        found.append(
            f"no shared ticket has pass^{pairing.requested_k} settled in both runs (too few usable trials), so the "
            f"runs are compared at k = {pairing.k}, the most trials every shared ticket has"
        )
    if pairing.unsettled_tickets:
        found.append(
            f"{pairing.unsettled_tickets} shared ticket(s) with fewer than {pairing.k} usable trials and outcomes "
            f"that all agree were left out (their pass^{pairing.k} is not settled)"
        )
    small = [t.task_type for t in pairing.task_types if t.pass_hat_k.interval is None]
    if small:
        found.append(
            f"{', '.join(small)}: fewer than {MIN_PAIRED_TICKETS} shared tickets, so no interval is given (too few "
            f"pairs to trust one); replay more tickets with --compare-to to get one"
        )
    return found
