"""The interval of a change between two periods (independent tickets) covers the true change: simulations.

Each period samples its own tickets (per-ticket success probability from a Beta distribution), k trials a ticket;
the change's interval combines the two periods' continuity-corrected Wilson intervals (Newcombe's square-and-add).
Over 2,000 simulated pairs of periods the interval must hold the true change at least 93% of the time, for pass@1
and pass^k, with and without a real change, at 20 and 100 tickets a period.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import betaln

from passhat.collector.reliability import difference_interval, wilson_bounds

SAMPLES = 2000
K = 5


def _pass_hat_k(a: float, b: float, k: int) -> float:
    """E[p^k] for p ~ Beta(a, b)."""
    return float(np.exp(betaln(a + k, b) - betaln(a, b)))


def _period(a: float, b: float, tickets: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Each sample's per-ticket sums of pass@1 (c/k) and pass^k (all k passed) for one period."""
    p = rng.beta(a, b, size=(SAMPLES, tickets))
    c = rng.binomial(K, p)
    return (c / K).sum(axis=1), (c == K).sum(axis=1).astype(np.float64)


@pytest.mark.parametrize("tickets", [20, 100])
@pytest.mark.parametrize(("then", "now"), [((4.0, 1.5), (4.0, 1.5)), ((4.0, 1.5), (2.0, 1.5))])
def test_the_change_interval_covers_the_true_change(
    tickets: int, then: tuple[float, float], now: tuple[float, float]
) -> None:
    rng = np.random.default_rng(tickets)
    before, after = _period(*then, tickets, rng), _period(*now, tickets, rng)
    truths = [
        now[0] / sum(now) - then[0] / sum(then),
        _pass_hat_k(*now, K) - _pass_hat_k(*then, K),
    ]
    for metric, truth in enumerate(truths):
        sums_then, sums_now = before[metric], after[metric]
        low_then, high_then = wilson_bounds(sums_then, np.full(SAMPLES, tickets))
        low_now, high_now = wilson_bounds(sums_now, np.full(SAMPLES, tickets))
        held = 0
        for i in range(SAMPLES):
            low, high = difference_interval(
                sums_now[i] / tickets, (low_now[i], high_now[i]), sums_then[i] / tickets, (low_then[i], high_then[i])
            )
            held += low <= truth <= high
        assert held / SAMPLES >= 0.93, (metric, held / SAMPLES)


def test_the_change_interval_holds_the_change_and_is_never_zero_width() -> None:
    low, high = difference_interval(0.30, (0.20, 0.42), 0.50, (0.38, 0.62))
    assert low < -0.20 < high
    assert high - low > 0
    # Both periods at 100%: the upper end of the change is the distance the earlier period could have been below.
    low, high = difference_interval(1.0, (0.9, 1.0), 1.0, (0.9, 1.0))
    assert low == pytest.approx(-0.1) and high == pytest.approx(0.1)
