"""From reliability per task type to what live traffic experiences, and the seed's calculator."""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Literal, TypeVar

from passhat.collector.reliability._mixture import Mixture


@dataclass(frozen=True)
class TaskTypeTraffic:
    """One task type's measured reliability and its live daily ticket volume."""

    task_type: str
    daily_volume: float
    pass_at_1: float
    pass_hat_k: float
    pass_at_k: float | None = None


@dataclass(frozen=True)
class TrafficImpact:
    """Traffic-weighted reliability: what a day of real tickets looks like."""

    total_daily_volume: float
    pass_at_1: float
    pass_at_k: float | None
    pass_hat_k: float
    expected_failed_tickets_per_day: float
    noticed_failures_per_day: float
    share_of_traffic_handled_every_time: float

    def to_dict(self) -> dict[str, float | None]:
        return asdict(self)


def _probability(name: str, value: float) -> float:
    if not (isinstance(value, int | float) and math.isfinite(value) and 0.0 <= value <= 1.0):
        raise ValueError(f"{name} is a probability and must lie in [0, 1], got {value!r}")
    return float(value)


def traffic_impact(rows: Sequence[TaskTypeTraffic], *, noticed_share: float = 1.0) -> TrafficImpact:
    """Weight each task type's pass@1 / pass^k by its daily volume.

    Each live ticket is one attempt, so a task type with volume v and pass@1 q fails v (1 - q) tickets a day.
    The share of traffic handled every time is the volume-weighted pass^k: the chance that a ticket of today's
    traffic belongs to a case the agent gets right on all k attempts.
    """
    _probability("noticed share", noticed_share)
    if not rows:
        raise ValueError("traffic weighting needs at least one task type with a daily volume")
    for row in rows:
        if not math.isfinite(row.daily_volume) or row.daily_volume < 0:
            raise ValueError(f"daily volume of {row.task_type!r} must be a non-negative number")
        _probability(f"pass@1 of {row.task_type!r}", row.pass_at_1)
        _probability(f"pass^k of {row.task_type!r}", row.pass_hat_k)
    total = sum(row.daily_volume for row in rows)
    if total <= 0:
        raise ValueError("every task type has zero daily volume: there is no traffic to weight by")
    weighted_at_1 = sum(row.daily_volume * row.pass_at_1 for row in rows) / total
    weighted_hat = sum(row.daily_volume * row.pass_hat_k for row in rows) / total
    at_k_known = all(row.pass_at_k is not None for row in rows)
    weighted_at_k = sum(row.daily_volume * (row.pass_at_k or 0.0) for row in rows) / total if at_k_known else None
    failed = total * (1.0 - weighted_at_1)
    return TrafficImpact(
        total_daily_volume=total,
        pass_at_1=weighted_at_1,
        pass_at_k=weighted_at_k,
        pass_hat_k=weighted_hat,
        expected_failed_tickets_per_day=failed,
        noticed_failures_per_day=failed * noticed_share,
        share_of_traffic_handled_every_time=weighted_hat,
    )


@dataclass(frozen=True)
class CalculatorResult:
    """The seed's "take the metric to your own agent" calculator."""

    model: Literal["homogeneous", "mixture"]
    k: int
    tickets_per_day: float
    noticed_share: float
    pass_at_1: float
    pass_at_k: float
    pass_hat_k: float
    failed_tickets_per_day: float
    noticed_failures_per_day: float
    share_of_task_types_handled_every_time: float

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def calculate(
    *,
    tickets_per_day: float,
    noticed_share: float,
    k: int,
    success_rate: float | None = None,
    mixture: Mixture | None = None,
) -> CalculatorResult:
    """Failed and noticed tickets per day, pass@k and pass^k, for a success rate or a fitted mixture.

    With only a success rate every task type is assumed to succeed at that same rate (a homogeneous agent), so
    pass^k = rate^k; real agents are a mixture of easy and hard task types, which a fitted mixture captures.
    """
    if (success_rate is None) == (mixture is None):
        raise ValueError("give either a per-attempt success rate or a fitted mixture, not both or neither")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a whole number of attempts >= 1, got {k!r}")
    if not math.isfinite(tickets_per_day) or tickets_per_day < 0:
        raise ValueError(f"tickets per day must be a non-negative number, got {tickets_per_day!r}")
    _probability("noticed share", noticed_share)
    if mixture is None:
        assert success_rate is not None
        model = Mixture.of([1.0], [_probability("success rate", success_rate)])
        kind: Literal["homogeneous", "mixture"] = "homogeneous"
    else:
        model, kind = mixture, "mixture"
    pass_at_1 = float(model.pass_at_k(1)[0])
    pass_hat = float(model.pass_hat_k(k)[0])
    failed = tickets_per_day * (1.0 - pass_at_1)
    return CalculatorResult(
        model=kind,
        k=k,
        tickets_per_day=float(tickets_per_day),
        noticed_share=float(noticed_share),
        pass_at_1=pass_at_1,
        pass_at_k=float(model.pass_at_k(k)[0]),
        pass_hat_k=pass_hat,
        failed_tickets_per_day=failed,
        noticed_failures_per_day=failed * noticed_share,
        share_of_task_types_handled_every_time=pass_hat,
    )


@dataclass(frozen=True)
class FailureProjection:
    """Measured reliability applied to a day of traffic: expected customers failed, with intervals.

    ``failing`` is daily tickets × traffic share × (1 - pass@1): tickets of the day the agent gets wrong.
    ``repeat_affected`` is the same volume × (1 - pass^k): customers who bring this kind of request back k times
    and are failed at least once. The intervals carry the reliability figures' intervals through (a share of
    counted traffic is taken as known; the figures' sampling error dominates).
    """

    daily_tickets: float
    share: float
    k: int
    failing: float
    failing_ci: tuple[float, float]
    repeat_affected: float
    repeat_affected_ci: tuple[float, float]


def project_failures(
    *,
    daily_tickets: float,
    share: float,
    k: int,
    pass_at_1: tuple[float, float, float],
    pass_hat_k: tuple[float, float, float],
) -> FailureProjection:
    """Expected failing and repeat-affected customers a day, from (value, low, high) of pass@1 and pass^k."""
    if not math.isfinite(daily_tickets) or daily_tickets < 0:
        raise ValueError(f"daily tickets must be a non-negative number, got {daily_tickets!r}")
    _probability("traffic share", share)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a whole number of attempts >= 1, got {k!r}")
    volume = daily_tickets * share
    at_1 = [_probability("pass@1", v) for v in pass_at_1]
    hat = [_probability(f"pass^{k}", v) for v in pass_hat_k]
    return FailureProjection(
        daily_tickets=float(daily_tickets),
        share=float(share),
        k=k,
        failing=volume * (1.0 - at_1[0]),
        failing_ci=(volume * (1.0 - at_1[2]), volume * (1.0 - at_1[1])),
        repeat_affected=volume * (1.0 - hat[0]),
        repeat_affected_ci=(volume * (1.0 - hat[2]), volume * (1.0 - hat[1])),
    )


_Key = TypeVar("_Key", bound=Hashable)


def daily_volumes(rows: Iterable[tuple[dt.date, _Key, int]]) -> dict[_Key, float]:
    """Mean production tickets per day of each key (a task type) over the days that have any traffic recorded.

    ``rows`` are (day, key, tickets). A key with no row on such a day had no tickets that day; days with no
    traffic at all are left out, so a report on a week in progress is not diluted by days that have not happened
    yet. The report's daily volumes, and the web UI's "a day of traffic", are these.
    """
    found = list(rows)
    days = {day for day, _, _ in found}
    totals: Counter[_Key] = Counter()
    for _, key, tickets in found:
        totals[key] += tickets
    return {key: total / len(days) for key, total in totals.items()} if days else {}
