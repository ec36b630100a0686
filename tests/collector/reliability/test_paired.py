"""Paired comparison of two agents on the same tickets: a planted regression is flagged on its task type only,
an identical candidate on none, at the stated confidence, over repeated simulated comparisons."""

from __future__ import annotations

import numpy as np
import pytest

from passhat.collector.reliability import paired_difference

K, TRIALS, TICKETS, RUNS, LEVEL = 3, 6, 60, 300, 0.95


def _side(rng: np.random.Generator, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.full(p.size, TRIALS), rng.binomial(TRIALS, p)


def _flag_rate(drop: float, seed: int) -> float:
    """How often the candidate is credibly lower, when its per-ticket success is ``drop`` below the baseline's."""
    rng = np.random.default_rng(seed)
    flagged = 0
    for _ in range(RUNS):
        p = rng.beta(6.0, 1.5, TICKETS)  # each ticket's own difficulty, shared by both agents
        base = _side(rng, p)
        cand = _side(rng, np.clip(p - drop, 0.0, 1.0))
        _, hat_k = paired_difference(*base, *cand, K, level=LEVEL)
        flagged += hat_k.credibly_lower
    return flagged / RUNS


def test_a_planted_regression_is_flagged_almost_always() -> None:
    assert _flag_rate(0.25, seed=1) >= 0.95


def test_an_identical_candidate_is_flagged_at_most_at_the_stated_rate() -> None:
    # One-sided: "credibly lower" happens with probability about (1 - LEVEL) / 2; allow sampling noise.
    assert _flag_rate(0.0, seed=2) <= (1.0 - LEVEL) / 2 + 0.03


def test_the_paired_interval_is_tighter_than_comparing_independent_samples() -> None:
    rng = np.random.default_rng(3)
    p = rng.beta(2.0, 1.0, TICKETS)  # tickets of very different difficulty
    base, cand = _side(rng, p), _side(rng, p)
    _, paired = paired_difference(*base, *cand, K, level=LEVEL)
    assert paired.interval is not None
    # The unpaired standard error of a difference of two means of these per-ticket values.
    from passhat.collector.reliability import pass_hat_k_array

    a, b = pass_hat_k_array(*base, K), pass_hat_k_array(*cand, K)
    unpaired = 1.96 * float(np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size))
    assert paired.interval[1] - paired.interval[0] < 2 * unpaired


def test_tickets_must_be_paired() -> None:
    with pytest.raises(ValueError, match="paired tickets"):
        paired_difference([3, 3], [1, 2], [3], [1], 2)
