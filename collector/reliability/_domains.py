"""Domain-level figures: pass@1, pass@k and pass^k of a whole domain (and of everything run), with intervals.

A domain's figure is the mean over its tickets of the per-ticket estimates, i.e. its task types' figures weighted
by their ticket counts. The interval treats the task types as strata (`stratified_interval`): the Wilson form
on the effective number of tickets, so a domain whose task types all agreed still shows its uncertainty.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from passhat.collector.reliability._intervals import Interval, stratified_interval, wilson_interval
from passhat.collector.reliability._trials import TaskTypeTrials


@dataclass(frozen=True)
class DomainFigures:
    """One domain (or ``overall``): its task types pooled by their tickets."""

    domain: str
    task_types: int
    tickets: int
    trials: int
    k: int
    pass_at_1: float
    pass_at_k: float
    pass_hat_k: float
    pass_at_1_ci: Interval
    pass_at_k_ci: Interval
    pass_hat_k_ci: Interval
    level: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "task_types": self.task_types,
            "tickets": self.tickets,
            "trials": self.trials,
            "k": self.k,
            "pass_at_1": self.pass_at_1,
            "pass_at_k": self.pass_at_k,
            "pass_hat_k": self.pass_hat_k,
            "pass_at_1_ci": list(self.pass_at_1_ci),
            "pass_at_k_ci": list(self.pass_at_k_ci),
            "pass_hat_k_ci": list(self.pass_hat_k_ci),
            "confidence_level": self.level,
        }


def pool_task_types(name: str, rows: Sequence[TaskTypeTrials], level: float = 0.95) -> DomainFigures:
    """The figures of ``rows`` (task types, each summarised at the same k) pooled over all their tickets."""
    if not rows:
        raise ValueError(f"{name}: no task type with a settled ticket to pool")
    tickets = [row.summary.tickets for row in rows]

    def pooled(field: str) -> tuple[float, Interval]:
        means = [float(getattr(row.summary, field)) for row in rows]
        estimate, _, effective = stratified_interval(means, tickets, tickets, level)
        estimate = round(estimate, 12)  # a sum of equal means is that mean, not 1 ulp below it
        return estimate, wilson_interval(estimate * effective, effective, level)

    at_1, at_k, hat_k = pooled("pass_at_1"), pooled("pass_at_k"), pooled("pass_hat_k")
    return DomainFigures(
        domain=name,
        task_types=len(rows),
        tickets=sum(tickets),
        trials=sum(row.summary.trials for row in rows),
        k=rows[0].summary.k,
        pass_at_1=at_1[0],
        pass_at_k=at_k[0],
        pass_hat_k=hat_k[0],
        pass_at_1_ci=at_1[1],
        pass_at_k_ci=at_k[1],
        pass_hat_k_ci=hat_k[1],
        level=level,
    )


def summarize_domains(rows: Sequence[TaskTypeTrials], level: float = 0.95) -> tuple[list[DomainFigures], DomainFigures]:
    """Per domain (in the rows' order) and overall: pass@1, pass@k and pass^k pooled over the tickets."""
    order: dict[str, list[TaskTypeTrials]] = {}
    for row in rows:
        order.setdefault(row.domain, []).append(row)
    return [pool_task_types(name, found, level) for name, found in order.items()], pool_task_types(
        "overall", rows, level
    )
