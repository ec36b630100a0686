"""Confidence intervals over tickets that hold at the sample sizes teams run (8 to 100 tickets a task type).

The interval of a task type's pass@1, pass@k or pass^k is a continuity-corrected Wilson score interval
(Newcombe's method 4) on (sum of the per-ticket estimates, tickets). Why this one:

- With k trials a ticket, per-ticket pass^k and pass@k are 0/1: their sum over tickets is exactly binomial in the
  number of tickets, whatever the spread of per-ticket success rates, so an interval for a binomial proportion
  is the right tool. A per-ticket pass@1 (c/n) lies in [0, 1] with a variance below a 0/1 value's of the same
  mean, so the same interval is conservative there.
- A cluster bootstrap under-covers at 8 tickets (as rarely as 50%) and collapses to zero width when every ticket
  agrees; the plain Wilson interval dips to 84% coverage for values near 0 or 1 at 8 tickets. The
  continuity-corrected form keeps coverage at or above 95% for every true value at 8, 30 and 100 tickets (see
  tests/collector/reliability/test_coverage.py) for about 15% more width than plain Wilson at 8 tickets and 5%
  at 100. Its width is never zero.

Traffic-weighted figures combine task types (strata) with known weights: the interval is the same Wilson form on
an effective number of tickets, the one that gives a single proportion the variance of the weighted mean.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

from passhat.collector.reliability._estimators import ArrayLike, FloatArray
from passhat.collector.reliability._words import counted

Interval = tuple[float, float]


def z_value(level: float) -> float:
    """The two-sided normal quantile of a confidence level (1.96 at 0.95)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"the confidence level must lie strictly between 0 and 1, got {level}")
    return float(norm.ppf(0.5 + level / 2.0))


def wilson_bounds(total: ArrayLike, tickets: ArrayLike, level: float = 0.95) -> tuple[FloatArray, FloatArray]:
    """Continuity-corrected Wilson bounds for each (sum of per-ticket values, number of tickets) given."""
    z = z_value(level)
    x = np.asarray(total, dtype=np.float64)
    n = np.asarray(tickets, dtype=np.float64)
    if np.any(n <= 0):
        raise ValueError("an interval needs at least one ticket")
    p = np.clip(x / n, 0.0, 1.0)
    q = 1.0 - p
    z2 = z * z
    denominator = 2.0 * (n + z2)
    low_root = np.sqrt(np.maximum(z2 - 2.0 - 1.0 / n + 4.0 * p * (n * q + 1.0), 0.0))
    high_root = np.sqrt(np.maximum(z2 + 2.0 - 1.0 / n + 4.0 * p * (n * q - 1.0), 0.0))
    low = (2.0 * n * p + z2 - 1.0 - z * low_root) / denominator
    high = (2.0 * n * p + z2 + 1.0 + z * high_root) / denominator
    low = np.where(p <= 0.0, 0.0, np.clip(low, 0.0, 1.0))
    high = np.where(p >= 1.0, 1.0, np.clip(high, 0.0, 1.0))
    return low, high


def wilson_interval(total: float, tickets: float, level: float = 0.95) -> Interval:
    """The interval of a mean of per-ticket values in [0, 1], from their sum and the number of tickets."""
    low, high = wilson_bounds(total, tickets, level)
    return float(low), float(high)


def stratified_interval(
    means: ArrayLike, tickets: ArrayLike, weights: ArrayLike, level: float = 0.95
) -> tuple[float, Interval, float]:
    """The weighted mean of per-stratum means, its interval, and the effective number of tickets behind it.

    Each stratum (task type) h has a mean m_h over n_h tickets and a known weight w_h (e.g. its daily volume).
    Its variance is bounded by that of 0/1 values of the same mean, taken at the Wilson centre
    (x_h + z^2/2) / (n_h + z^2) so that a stratum where every ticket agreed still counts as uncertain. The
    effective number of tickets makes one proportion as variable as the weighted mean, and the continuity-
    corrected Wilson interval is taken on it.
    """
    z = z_value(level)
    m = np.asarray(means, dtype=np.float64)
    n = np.asarray(tickets, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if m.size == 0 or m.shape != n.shape or m.shape != w.shape:
        raise ValueError("a stratified interval needs one mean, ticket count and weight per stratum")
    if np.any(n <= 0) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("every stratum needs tickets, and the weights must be non-negative and not all zero")
    w = w / w.sum()
    estimate = float(np.clip(w @ m, 0.0, 1.0))
    centre = (m * n + z * z / 2.0) / (n + z * z)
    variance = float(np.sum(w**2 * centre * (1.0 - centre) / n))
    pooled_centre = float(w @ centre)
    effective = pooled_centre * (1.0 - pooled_centre) / variance
    return estimate, wilson_interval(estimate * effective, effective, level), effective


def half_width(interval: Interval) -> float:
    """Half the width of an interval: the "±" a reader sees."""
    return (interval[1] - interval[0]) / 2.0


def tickets_for_half_width(value: float, target: float, level: float = 0.95, *, limit: int = 100_000) -> int:
    """About how many tickets bring the interval of a figure near ``value`` down to ±``target``.

    Pass the midpoint of the current interval rather than the estimate itself, so a task type whose sampled
    tickets all agreed (pass^k measured as 0 or 1) is not promised a tiny sample.
    """
    if not 0.0 < target < 0.5:
        raise ValueError(f"the target half-width must lie in (0, 0.5), got {target}")
    candidates = np.arange(1, limit + 1, dtype=np.float64)
    planned = float(np.clip(value, 0.0, 1.0))
    low, high = wilson_bounds(planned * candidates, candidates, level)
    good = np.nonzero((high - low) / 2.0 <= target)[0]
    return int(candidates[good[0]]) if good.size else limit


def sample_size_note(label: str, interval: Interval, tickets: int, level: float = 0.95) -> str:
    """One line a reader can act on: how wide the interval is now, and what ±10 points would take."""
    now = half_width(interval)
    needed = tickets_for_half_width((interval[0] + interval[1]) / 2.0, 0.10, level)
    points = f"{100.0 * now:.0f}"  # as the tables print the same interval's half-width ("[2.7, 97.3] ±47")
    sample = f"with {counted(tickets, 'ticket')}"
    if now <= 0.10:
        return f"{sample} the {label} interval is about ±{points} pts"
    return f"{sample} the {label} interval is about ±{points} pts; ±10 needs about {needed}"


def difference_interval(now: float, now_ci: Interval, then: float, then_ci: Interval) -> Interval:
    """The interval of ``now - then`` for two independent samples (two periods' tickets), from their intervals.

    Newcombe's square-and-add (MOVER) combination of the two intervals: each side of the difference takes the
    distance to the matching end of each interval, added in quadrature. With the continuity-corrected Wilson
    intervals of this module it covers at least the nominal level at 20 tickets a period (see
    tests/collector/reliability/test_difference_interval.py).
    """
    low = (now - now_ci[0]) ** 2 + (then_ci[1] - then) ** 2
    high = (now_ci[1] - now) ** 2 + (then - then_ci[0]) ** 2
    change = now - then
    return change - math.sqrt(low), change + math.sqrt(high)
