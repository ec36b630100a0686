"""Per-task-type aggregates: the mean of the per-ticket estimators, with cluster-bootstrap intervals.

Tickets are the clusters: a bootstrap replicate resamples whole tickets (all their trials together), because
trials of one ticket are not independent of each other. A replicate's mean depends only on how many times each
distinct (n, c) pair was drawn, so instead of materialising B x T ticket indices we draw multinomial counts over
the distinct pairs: the same distribution, at a cost independent of the number of tickets.
"""

from __future__ import annotations

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


@dataclass(frozen=True)
class TaskTypeSummary:
    """pass@1, pass@k and pass^k of one task type, with confidence intervals over tickets."""

    tickets: int
    trials_per_ticket: int
    k: int
    pass_at_1: float
    pass_at_k: float
    pass_hat_k: float
    pass_at_1_ci: tuple[float, float]
    pass_at_k_ci: tuple[float, float]
    pass_hat_k_ci: tuple[float, float]
    level: float

    def to_dict(self) -> dict[str, object]:
        """The JSON shape passhat prints wherever these metrics appear."""
        return {
            "tickets": self.tickets,
            "trials_per_ticket": self.trials_per_ticket,
            "k": self.k,
            "pass_at_1": self.pass_at_1,
            "pass_at_k": self.pass_at_k,
            "pass_hat_k": self.pass_hat_k,
            "pass_at_1_ci": list(self.pass_at_1_ci),
            "pass_at_k_ci": list(self.pass_at_k_ci),
            "pass_hat_k_ci": list(self.pass_hat_k_ci),
        }


def distinct_counts(n: IntArray, c: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """The distinct (n, c) pairs and how many tickets have each."""
    pairs, counts = np.unique(np.stack([n, c], axis=1), axis=0, return_counts=True)
    return pairs[:, 0].copy(), pairs[:, 1].copy(), counts.astype(np.int64)


def _check_level(level: float, resamples: int) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"the confidence level must lie strictly between 0 and 1, got {level}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")


def bootstrap_means(
    values: FloatArray, weights: IntArray, *, resamples: int, seed: int | np.random.Generator
) -> FloatArray:
    """Bootstrap replicates of the mean of per-ticket values, tickets grouped by distinct value.

    ``values`` is (U, M): M metrics for each of U distinct tickets; ``weights`` (U,) counts tickets per row.
    Returns (resamples, M).
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    total = int(weights.sum())
    draws = rng.multinomial(total, weights / total, size=resamples).astype(np.float64)
    means: FloatArray = draws @ values / total
    return means


def percentile_interval(replicates: FloatArray, level: float) -> FloatArray:
    """Percentile interval (2, M) of bootstrap replicates (resamples, M)."""
    alpha = (1.0 - level) / 2.0
    bounds: FloatArray = np.quantile(replicates, [alpha, 1.0 - alpha], axis=0)
    return bounds


def summarize_task_type(
    n: ArrayLike,
    c: ArrayLike,
    k: int,
    *,
    level: float = 0.95,
    resamples: int = 1000,
    seed: int | np.random.Generator = 0,
) -> TaskTypeSummary:
    """Summarise one task type from per-ticket trial counts (n trials, c successes per ticket)."""
    n_arr, c_arr = as_counts(n, c)
    if n_arr.size == 0:
        raise ValueError("a task type needs at least one ticket with trials to summarise")
    k = _check_k(k, n_arr)
    _check_level(level, resamples)
    un, uc, weights = distinct_counts(n_arr, c_arr)
    values = np.stack([pass_at_k_array(un, uc, 1), pass_at_k_array(un, uc, k), pass_hat_k_array(un, uc, k)], axis=1)
    point = weights @ values / weights.sum()
    bounds = percentile_interval(bootstrap_means(values, weights, resamples=resamples, seed=seed), level)

    def ci(i: int) -> tuple[float, float]:
        return (float(bounds[0, i]), float(bounds[1, i]))

    return TaskTypeSummary(
        tickets=int(n_arr.size),
        trials_per_ticket=int(n_arr.min()),
        k=k,
        pass_at_1=float(point[0]),
        pass_at_k=float(point[1]),
        pass_hat_k=float(point[2]),
        pass_at_1_ci=ci(0),
        pass_at_k_ci=ci(1),
        pass_hat_k_ci=ci(2),
        level=level,
    )
