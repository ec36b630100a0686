"""The headline figures and their curve over k from one function: pass@j and pass^j for j = 1..k, each with its
interval, where the value and interval at j = k are exactly the headline's (`summarize_task_type` at k).

A band drawn from another estimator than the headline's (the extrapolating `curve_band` beyond the smallest
trial count, under curtailed replay) reads 7–51% where the headline card says 17–33% for the same figure. Here
every point up to the run's k is the headline estimator at that j: the mean over settled tickets of the
curtailed unbiased per-ticket estimate, with the continuity-corrected Wilson interval over tickets. Computed on
the distinct (trials, passes) pairs, so its cost does not grow with the number of tickets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from passhat.collector.reliability._estimators import (
    ArrayLike,
    FloatArray,
    IntArray,
    _check_k,
    as_counts,
    pass_at_k_array,
    pass_hat_k_array,
)
from passhat.collector.reliability._intervals import stratified_interval, wilson_bounds
from passhat.collector.reliability._summary import distinct_counts


@dataclass(frozen=True)
class HeadlineCurve:
    """pass@j and pass^j for j = 1..k over one set of settled tickets, each with its interval at ``level``.

    ``pass_at_1`` (with its interval) is the headline pass@1: from each ticket's first attempts when given
    (curtailed replay), which is also the curve's value at j = 1.
    """

    k: IntArray
    tickets: int
    trials: int
    level: float
    pass_at_1: float
    pass_at_1_ci: tuple[float, float]
    pass_at_k: FloatArray
    pass_at_k_low: FloatArray
    pass_at_k_high: FloatArray
    pass_hat_k: FloatArray
    pass_hat_k_low: FloatArray
    pass_hat_k_high: FloatArray

    @property
    def max_k(self) -> int:
        return int(self.k[-1])

    def at(self, j: int) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        """((pass@j, low, high), (pass^j, low, high)) at one j of the curve."""
        if not 1 <= j <= self.max_k:
            raise ValueError(f"the curve runs from k = 1 to {self.max_k}, not {j}")
        i = j - 1
        return (
            (float(self.pass_at_k[i]), float(self.pass_at_k_low[i]), float(self.pass_at_k_high[i])),
            (float(self.pass_hat_k[i]), float(self.pass_hat_k_low[i]), float(self.pass_hat_k_high[i])),
        )

    def to_dict(self) -> dict[str, object]:
        def floats(values: FloatArray) -> list[float]:
            return [round(float(v), 6) for v in values]

        return {
            "k": [int(v) for v in self.k],
            "tickets": self.tickets,
            "trials": self.trials,
            "level": self.level,
            "pass_at_k": floats(self.pass_at_k),
            "pass_at_k_low": floats(self.pass_at_k_low),
            "pass_at_k_high": floats(self.pass_at_k_high),
            "pass_hat_k": floats(self.pass_hat_k),
            "pass_hat_k_low": floats(self.pass_hat_k_low),
            "pass_hat_k_high": floats(self.pass_hat_k_high),
        }


def headline_curve(
    n: ArrayLike,
    c: ArrayLike,
    k: int,
    *,
    first_n: ArrayLike | None = None,
    first_c: ArrayLike | None = None,
    level: float = 0.95,
) -> HeadlineCurve:
    """The curve j = 1..k of the headline estimator, from per-ticket counts of tickets settled at k.

    At j = k it equals `summarize_task_type(n, c, k, first_n=..., first_c=...)` (value and interval); at j = 1
    both pass@1 and pass^1 are the headline pass@1. Raises ValueError for a ticket whose pass^k is not settled.
    """
    n_arr, c_arr = as_counts(n, c)
    if n_arr.size == 0:
        raise ValueError("a curve needs at least one ticket with trials")
    k = _check_k(k, n_arr, c_arr)
    if not 0.0 < level < 1.0:
        raise ValueError(f"the confidence level must lie strictly between 0 and 1, got {level}")
    if (first_n is None) != (first_c is None):
        raise ValueError("give both first_n and first_c (each ticket's first attempts), or neither")
    f_n, f_c = (n_arr, c_arr) if first_n is None or first_c is None else as_counts(first_n, first_c)
    if f_n.shape != n_arr.shape:
        raise ValueError(f"first_n and first_c need one entry per ticket ({n_arr.size}), got {f_n.size}")
    tickets = float(n_arr.size)
    un, uc, weights = distinct_counts(n_arr, c_arr)
    wf = weights.astype(np.float64)
    ks = np.arange(1, k + 1, dtype=np.int64)
    at_sum = np.array([wf @ pass_at_k_array(un, uc, int(j), curtailed=True) for j in ks])
    hat_sum = np.array([wf @ pass_hat_k_array(un, uc, int(j), curtailed=True) for j in ks])
    first_sum = float((f_c / f_n).sum())
    at_sum[0] = hat_sum[0] = first_sum
    at_low, at_high = wilson_bounds(at_sum, np.full(k, tickets), level)
    hat_low, hat_high = wilson_bounds(hat_sum, np.full(k, tickets), level)
    return HeadlineCurve(
        k=ks,
        tickets=int(n_arr.size),
        trials=int(n_arr.sum()),
        level=level,
        pass_at_1=first_sum / tickets,
        pass_at_1_ci=(float(at_low[0]), float(at_high[0])),
        pass_at_k=at_sum / tickets,
        pass_at_k_low=np.asarray(at_low, dtype=np.float64),
        pass_at_k_high=np.asarray(at_high, dtype=np.float64),
        pass_hat_k=hat_sum / tickets,
        pass_hat_k_low=np.asarray(hat_low, dtype=np.float64),
        pass_hat_k_high=np.asarray(hat_high, dtype=np.float64),
    )


def weighted_headline_curve(
    curves: Sequence[HeadlineCurve], weights: Sequence[float], level: float = 0.95
) -> HeadlineCurve:
    """Task types' headline curves combined by their traffic: at each j the weighted mean of their values with the
    stratified interval (task types the strata, their weights known), as the weekly report's headline computes it.

    Every curve must run to the same k. Task types of weight 0 (no traffic in the period) count for nothing.
    """
    if not curves or len(curves) != len(weights):
        raise ValueError("a weighted headline needs one weight per task type's curve, and at least one curve")
    k = curves[0].max_k
    if any(curve.max_k != k for curve in curves):
        raise ValueError("every task type's curve must run to the same k")
    w = np.asarray(weights, dtype=np.float64)
    tickets = np.array([curve.tickets for curve in curves], dtype=np.float64)

    def stratified(values: FloatArray) -> tuple[float, float, float]:
        estimate, (low, high), _ = stratified_interval(values, tickets, w, level)
        return estimate, float(low), float(high)

    def along(name: str) -> tuple[FloatArray, FloatArray, FloatArray]:
        stacked = np.vstack([np.asarray(getattr(curve, name), dtype=np.float64) for curve in curves])
        points = [stratified(stacked[:, i]) for i in range(k)]
        return tuple(np.array([p[part] for p in points], dtype=np.float64) for part in range(3))  # type: ignore[return-value]

    at, at_low, at_high = along("pass_at_k")
    hat, hat_low, hat_high = along("pass_hat_k")
    first, first_low, first_high = stratified(np.array([curve.pass_at_1 for curve in curves]))
    return HeadlineCurve(
        k=np.arange(1, k + 1, dtype=np.int64),
        tickets=int(tickets.sum()),
        trials=sum(curve.trials for curve in curves),
        level=level,
        pass_at_1=first,
        pass_at_1_ci=(first_low, first_high),
        pass_at_k=at,
        pass_at_k_low=at_low,
        pass_at_k_high=at_high,
        pass_hat_k=hat,
        pass_hat_k_low=hat_low,
        pass_hat_k_high=hat_high,
    )
