"""Per-task-type aggregates: the mean of the per-ticket estimators, with intervals over tickets.

The intervals are continuity-corrected Wilson intervals (see ``_intervals``). The cluster bootstrap stays
available for comparison and for callers that combine replicates. Tickets are its clusters: a replicate
resamples whole tickets (all their trials together), because trials of one ticket are not independent. A
replicate's mean depends only on how many times each distinct value was drawn, so instead of materialising
B x T ticket indices we draw multinomial counts over the distinct values: the same distribution, at a cost
independent of the number of tickets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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
from passhat.collector.reliability._intervals import half_width, sample_size_note, wilson_bounds

IntervalMethod = Literal["wilson", "bootstrap"]


@dataclass(frozen=True)
class TaskTypeSummary:
    """pass@1, pass@k and pass^k of one task type, with confidence intervals over tickets.

    ``interval`` names how the intervals were made (``wilson``: continuity-corrected Wilson, the default;
    ``bootstrap``: the cluster bootstrap, kept for comparison). ``settled_early`` counts tickets whose trials
    stopped before k because their pass^k and pass@k were already settled (curtailed replay).
    """

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
    interval: IntervalMethod = "wilson"
    trials: int = 0
    settled_early: int = 0

    @property
    def pass_at_1_half_width(self) -> float:
        return half_width(self.pass_at_1_ci)

    @property
    def pass_at_k_half_width(self) -> float:
        return half_width(self.pass_at_k_ci)

    @property
    def pass_hat_k_half_width(self) -> float:
        return half_width(self.pass_hat_k_ci)

    @property
    def sample_size(self) -> str:
        """What the pass^k interval's width means in tickets ("with 8 tickets ... ±10 needs about 90")."""
        return sample_size_note(f"pass^{self.k}", self.pass_hat_k_ci, self.tickets, self.level)

    def to_dict(self) -> dict[str, object]:
        """The JSON shape passhat prints wherever these metrics appear."""
        return {
            "tickets": self.tickets,
            "trials_per_ticket": self.trials_per_ticket,
            "trials": self.trials,
            "settled_early": self.settled_early,
            "k": self.k,
            "pass_at_1": self.pass_at_1,
            "pass_at_k": self.pass_at_k,
            "pass_hat_k": self.pass_hat_k,
            "pass_at_1_ci": list(self.pass_at_1_ci),
            "pass_at_k_ci": list(self.pass_at_k_ci),
            "pass_hat_k_ci": list(self.pass_hat_k_ci),
            "pass_at_1_half_width": self.pass_at_1_half_width,
            "pass_at_k_half_width": self.pass_at_k_half_width,
            "pass_hat_k_half_width": self.pass_hat_k_half_width,
            "confidence_level": self.level,
            "interval": self.interval,
            "sample_size": self.sample_size,
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
    interval: IntervalMethod = "wilson",
    first_n: ArrayLike | None = None,
    first_c: ArrayLike | None = None,
    resamples: int = 1000,
    seed: int | np.random.Generator = 0,
) -> TaskTypeSummary:
    """Summarise one task type from per-ticket trial counts (n trials, c successes per ticket).

    Tickets with fewer than k trials are accepted when they are settled (one pass and one failure: curtailed
    replay). ``first_n``/``first_c`` are the counts of each ticket's first ``min_trials`` attempts: under
    curtailed replay pass@1 comes from them, because c/n of a ticket whose trials stopped on an outcome is
    biased. ``resamples`` and ``seed`` apply to ``interval="bootstrap"`` only.
    """
    n_arr, c_arr = as_counts(n, c)
    if n_arr.size == 0:
        raise ValueError("a task type needs at least one ticket with trials to summarise")
    k = _check_k(k, n_arr, c_arr)
    _check_level(level, resamples)
    if interval not in ("wilson", "bootstrap"):
        raise ValueError(f"interval must be 'wilson' or 'bootstrap', got {interval!r}")
    if (first_n is None) != (first_c is None):
        raise ValueError("give both first_n and first_c (each ticket's first attempts), or neither")
    at_1_n, at_1_c = (n_arr, c_arr) if first_n is None or first_c is None else as_counts(first_n, first_c)
    if at_1_n.shape != n_arr.shape:
        raise ValueError(f"first_n and first_c need one entry per ticket ({n_arr.size}), got {at_1_n.size}")
    values = np.stack(
        [
            at_1_c / at_1_n,
            pass_at_k_array(n_arr, c_arr, k, curtailed=True),
            pass_hat_k_array(n_arr, c_arr, k, curtailed=True),
        ],
        axis=1,
    )
    point = values.mean(axis=0)
    if interval == "wilson":
        lows, highs = wilson_bounds(values.sum(axis=0), np.full(3, float(n_arr.size)), level)
        bounds = np.stack([lows, highs])
    else:
        bounds = percentile_interval(
            bootstrap_means(values, np.ones(n_arr.size, dtype=np.int64), resamples=resamples, seed=seed), level
        )

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
        interval=interval,
        trials=int(n_arr.sum()),
        settled_early=int(np.count_nonzero(n_arr < k)),
    )
