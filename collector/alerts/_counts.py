"""Per-task-type ticket counts of a period, built from the store's per-ticket tallies (or from trial rows)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from passhat.collector.alerts._types import PeriodCounts, TicketCounts
from passhat.collector.store import TicketTally, TrialRow, tallies_of_trials


def counts_from_tallies(
    period: str, tallies: Iterable[TicketTally], *, weights: Mapping[str, float] | None = None
) -> PeriodCounts:
    """(n trials, c passed) per ticket, per task type, from the store's tallies (`Store.ticket_tallies`).

    Trials that ended in a simulator or infrastructure error say nothing about the agent: a tally counts only
    the others, and a ticket left with none is left out.
    """
    by_type: dict[str, tuple[list[int], list[int]]] = {}
    for tally in sorted(tallies, key=lambda t: (t.task_type, t.ticket_id)):
        if tally.trials <= 0:
            continue
        ns, cs = by_type.setdefault(tally.task_type, ([], []))
        ns.append(tally.trials)
        cs.append(tally.passes)
    return PeriodCounts(
        period=period,
        task_types={name: TicketCounts(n=ns, c=cs) for name, (ns, cs) in by_type.items()},
        weights=weights,
    )


def counts_from_trials(
    period: str, trials: Iterable[TrialRow], *, weights: Mapping[str, float] | None = None
) -> PeriodCounts:
    """Group trials by task type and ticket into (n trials, c passed) per ticket (as `counts_from_tallies`)."""
    return counts_from_tallies(period, tallies_of_trials(trials), weights=weights)
