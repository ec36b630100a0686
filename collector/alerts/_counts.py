"""Per-task-type ticket counts of a period, built from stored replay trials."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from passhat.collector.alerts._types import PeriodCounts, TicketCounts
from passhat.collector.reliability import is_harness_failure
from passhat.collector.store import TrialRow


def counts_from_trials(
    period: str, trials: Iterable[TrialRow], *, weights: Mapping[str, float] | None = None
) -> PeriodCounts:
    """Group trials by task type and ticket into (n trials, c passed) per ticket.

    Trials that ended in a simulator or infrastructure error say nothing about the agent, so they are left out
    (a ticket left with no trials is left out too).
    """
    per_ticket: dict[tuple[str, str], list[int]] = {}
    for trial in trials:
        if is_harness_failure(trial):
            continue
        counts = per_ticket.setdefault((trial.task_type, trial.ticket_id), [0, 0])
        counts[0] += 1
        counts[1] += int(trial.passed)
    by_type: dict[str, tuple[list[int], list[int]]] = {}
    for (task_type, _ticket), (n, c) in sorted(per_ticket.items()):
        ns, cs = by_type.setdefault(task_type, ([], []))
        ns.append(n)
        cs.append(c)
    return PeriodCounts(
        period=period,
        task_types={name: TicketCounts(n=ns, c=cs) for name, (ns, cs) in by_type.items()},
        weights=weights,
    )
