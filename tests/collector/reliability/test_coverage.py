"""The intervals cover the true value at the sample sizes teams run: simulations with known truth.

Each cell of the grid is a population of tickets (per-ticket success probability from a Beta distribution or a
three-component mixture), a number of tickets (8, 30, 100) and k (5, 20), with k trials a ticket. Thousands of
samples are drawn at once (vectorised), and the share of samples whose interval holds the population's true
pass^k, pass@k and pass@1 must be at least 92% in every cell.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import betaln

from passhat.collector.reliability import curve_band, stratified_interval, summarize_task_type, wilson_bounds

BETAS = [(0.5, 0.5), (2.0, 2.0), (8.0, 1.0), (1.0, 4.0), (20.0, 1.5)]
MIXTURES = [
    ((0.31, 0.60, 0.09), (0.99, 0.58, 0.0)),  # the seed's figures
    ((0.5, 0.3, 0.2), (1.0, 0.9, 0.4)),
    ((0.1, 0.3, 0.6), (0.95, 0.5, 0.05)),
]
SAMPLES = 2000


def _population(index: int) -> tuple[str, object]:
    return ("beta", BETAS[index]) if index < len(BETAS) else ("mixture", MIXTURES[index - len(BETAS)])


def _draw_p(kind: str, params: object, shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    if kind == "beta":
        a, b = params  # type: ignore[misc]
        return rng.beta(a, b, size=shape)
    weights, ps = params  # type: ignore[misc]
    return np.asarray(ps)[rng.choice(len(ps), p=weights, size=shape)]


def _truth(kind: str, params: object, k: int) -> tuple[float, float, float]:
    """True pass@1, pass@k and pass^k of the population."""
    if kind == "beta":
        a, b = params  # type: ignore[misc]
        return (
            a / (a + b),
            1.0 - float(np.exp(betaln(a, b + k) - betaln(a, b))),
            float(np.exp(betaln(a + k, b) - betaln(a, b))),
        )
    w, p = (np.asarray(v) for v in params)  # type: ignore[misc]
    return float(w @ p), float(1.0 - w @ (1.0 - p) ** k), float(w @ p**k)


@pytest.mark.slow
@pytest.mark.parametrize("k", [5, 20])
@pytest.mark.parametrize("tickets", [8, 30, 100])
@pytest.mark.parametrize("population", range(len(BETAS) + len(MIXTURES)))
def test_intervals_cover_the_true_value_in_every_cell(population: int, tickets: int, k: int) -> None:
    kind, params = _population(population)
    rng = np.random.default_rng(1000 * population + 10 * tickets + k)
    c = rng.binomial(k, _draw_p(kind, params, (SAMPLES, tickets), rng))
    # With k trials a ticket, per-ticket pass^k and pass@k are 0/1 and pass@1 is c/k.
    sums = {"pass@1": (c / k).sum(axis=1), "pass@k": (c > 0).sum(axis=1), "pass^k": (c == k).sum(axis=1)}
    for name, truth in zip(sums, _truth(kind, params, k), strict=True):
        low, high = wilson_bounds(sums[name], np.full(SAMPLES, tickets), 0.95)
        coverage = float(np.mean((low <= truth) & (truth <= high)))
        assert coverage >= 0.92, f"{name} covered {coverage:.3f} of {SAMPLES} samples (truth {truth:.3f})"
        assert np.all(high > low), f"{name} had a zero-width interval"


def test_summary_intervals_are_the_wilson_bounds_of_the_per_ticket_sums() -> None:
    n = np.full(8, 20)
    c = np.array([20, 20, 13, 0, 20, 5, 19, 20])
    summary = summarize_task_type(n, c, 20)
    low, high = wilson_bounds([4.0], [8.0], 0.95)
    assert summary.pass_hat_k == pytest.approx(0.5)
    assert summary.pass_hat_k_ci == pytest.approx((float(low[0]), float(high[0])))


def test_no_interval_has_zero_width_even_when_every_ticket_agrees() -> None:
    summary = summarize_task_type(np.full(8, 20), np.full(8, 20), 20)
    assert summary.pass_hat_k == 1.0
    assert summary.pass_hat_k_ci[1] == 1.0 and summary.pass_hat_k_ci[0] < 0.8
    failing = summarize_task_type(np.full(8, 20), np.zeros(8, dtype=int), 20)
    assert failing.pass_at_k_ci[0] == 0.0 and failing.pass_at_k_ci[1] > 0.2


@pytest.mark.slow
def test_the_traffic_weighted_interval_covers_across_fifteen_task_types() -> None:
    rng = np.random.default_rng(7)
    types, tickets, k, samples = 15, 8, 20, 2000
    a, b = rng.uniform(0.5, 6.0, types), rng.uniform(0.3, 2.0, types)
    volumes = rng.lognormal(4.0, 1.0, types)
    truth = float(volumes @ np.exp(betaln(a + k, b) - betaln(a, b)) / volumes.sum())
    p = rng.beta(a[None, None, :], b[None, None, :], size=(samples, tickets, types))
    means = (rng.binomial(k, p) == k).mean(axis=1)  # (samples, types)
    covered = 0
    for row in means:
        _, (low, high), _ = stratified_interval(row, np.full(types, tickets), volumes)
        covered += low <= truth <= high
    assert covered / samples >= 0.92


@pytest.mark.slow
@pytest.mark.parametrize("tickets", [8, 30, 150])
def test_the_extrapolation_band_holds_the_true_curve_beyond_the_trials(tickets: int) -> None:
    # The seed's mixture observed at k = 5 and extrapolated to 20, 50 and 100.
    weights, ps = np.array([0.31, 0.60, 0.09]), np.array([0.99, 0.58, 0.0])
    rng = np.random.default_rng(tickets)
    held = []
    for _ in range(10):
        c = rng.binomial(5, ps[rng.choice(3, p=weights, size=tickets)])
        band = curve_band(np.full(tickets, 5), c, 100)
        for k in (20, 50, 100):
            truth = float(weights @ ps**k)
            held.append(band.pass_hat_k_low[k - 1] <= truth <= band.pass_hat_k_high[k - 1])
    assert np.mean(held) >= 0.9
