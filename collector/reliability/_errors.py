"""Error rates of drop alerts: multiple-testing control across task types, and the power of a drop test.

A drop rule over every task type runs one test per task type each period. Without correction, 15 tests at
α = 0.01 raise a false alert in about 14% of quiet periods. Holm's step-down procedure keeps the chance of any
false alert among them at most α whatever the dependence between the tests; Benjamini–Hochberg instead keeps
the expected share of false alerts among those raised at most α (more alerts, weaker guarantee).

Power: with k trials a ticket, per-ticket pass^k is 0/1, so a drop test compares two binomial samples; the
permutation test over tickets is then Fisher's exact test. Its power is computed exactly by summing the
binomial probabilities of the outcomes it rejects.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy.special import gammaln
from scipy.stats import binom

from passhat.collector.reliability._estimators import ArrayLike, FloatArray

Correction = Literal["holm", "bh", "none"]


def adjust_p_values(p_values: ArrayLike, method: Correction = "holm") -> FloatArray:
    """Adjusted p-values of one family of tests: reject those at or below α to control the stated error rate."""
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1 or np.any((p < 0) | (p > 1)):
        raise ValueError("p-values must be a list of numbers in [0, 1]")
    m = p.size
    if m == 0 or method == "none":
        return p.copy()
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":
        stepped = np.maximum.accumulate((m - np.arange(m)) * ranked)
    elif method == "bh":
        stepped = np.minimum.accumulate(m / np.arange(m, 0, -1) * ranked[::-1])[::-1]
    else:
        raise ValueError(f"correction must be holm, bh or none, got {method!r}")
    out = np.empty(m)
    out[order] = np.minimum(stepped, 1.0)
    return out


def drop_power(current_tickets: int, baseline_tickets: int, before: float, after: float, *, alpha: float) -> float:
    """The chance that a one-sided exact test at level ``alpha`` sees pass^k fall from ``before`` to ``after``.

    Tickets are 0/1 for pass^k (k trials each); the current period has ``current_tickets`` and the baseline
    ``baseline_tickets``. For a family corrected by Holm, pass ``alpha`` divided by the number of task types
    (the level the smallest p-value must reach).
    """
    if current_tickets < 1 or baseline_tickets < 1:
        raise ValueError("both sides need at least one ticket")
    if not (0.0 <= after <= 1.0 and 0.0 <= before <= 1.0 and 0.0 < alpha < 1.0):
        raise ValueError("pass^k levels must lie in [0, 1] and alpha in (0, 1)")
    current = np.arange(current_tickets + 1)[:, None]
    baseline = np.arange(baseline_tickets + 1)[None, :]
    # One-sided p-value of the drop: the chance of this few passes on the current side given the total passes.
    p_value = _lower_tail(current_tickets, baseline_tickets)[current, current + baseline]
    reject = p_value <= alpha + 1e-12
    chance = binom.pmf(current, current_tickets, after) * binom.pmf(baseline, baseline_tickets, before)
    return float(np.sum(chance * reject))


def _lower_tail(current_tickets: int, baseline_tickets: int) -> FloatArray:
    """P(X <= x) for X hypergeometric (x passes on the current side given t in all), as a (x, t) table."""
    total = current_tickets + baseline_tickets
    x = np.arange(current_tickets + 1, dtype=np.float64)[:, None]
    t = np.arange(total + 1, dtype=np.float64)[None, :]
    other = t - x
    valid = (other >= 0) & (other <= baseline_tickets)
    with np.errstate(invalid="ignore"):
        log_pmf = _log_choose(t, x) + _log_choose(total - t, current_tickets - x) - _log_choose(total, current_tickets)
    pmf = np.where(valid & (x <= t), np.exp(np.where(valid, log_pmf, 0.0)), 0.0)
    result: FloatArray = np.cumsum(pmf, axis=0)
    return result


def _log_choose(n: FloatArray | float, r: FloatArray | float) -> FloatArray:
    result: FloatArray = gammaln(np.asarray(n) + 1) - gammaln(np.asarray(r) + 1) - gammaln(np.asarray(n) - r + 1)
    return result


def tickets_for_power(
    before: float, after: float, *, alpha: float, power: float = 0.8, baseline_ratio: int = 1, limit: int = 400
) -> int | None:
    """The fewest tickets a period for the drop test to reach ``power`` (baseline: ``baseline_ratio`` times more)."""
    low, high = 1, limit
    if drop_power(high, high * baseline_ratio, before, after, alpha=alpha) < power:
        return None
    while low < high:
        middle = (low + high) // 2
        if drop_power(middle, middle * baseline_ratio, before, after, alpha=alpha) >= power:
            high = middle
        else:
            low = middle + 1
    return low
