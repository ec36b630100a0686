"""The headline curve: pass@j and pass^j for j = 1..k from the headline's own estimator and interval, so the curve
at the run's k is the headline (the weekly report showed a band 7.0-50.7% beside a headline 17.0-32.5%)."""

from __future__ import annotations

import numpy as np
import pytest

from passhat.collector.reliability import (
    curve_band,
    headline_curve,
    mixture_spread,
    project_failures,
    signature_shares,
    summarize_task_type,
    unpaired_difference,
)


def _curtailed(rng: np.random.Generator, tickets: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Curtailed replay: a ticket stops once one trial passed and one failed (after at least 2)."""
    p = rng.choice([0.99, 0.6, 0.0], size=tickets, p=[0.3, 0.6, 0.1])
    n, c = np.zeros(tickets, dtype=np.int64), np.zeros(tickets, dtype=np.int64)
    for i, chance in enumerate(p):
        while n[i] < k and not (n[i] >= 2 and 0 < c[i] < n[i]):
            c[i] += rng.random() < chance
            n[i] += 1
    return n, c


def test_the_curve_at_k_is_the_headline_value_and_interval_under_curtailed_replay() -> None:
    n, c = _curtailed(np.random.default_rng(3), 120, 20)
    first_n, first_c = np.minimum(n, 2), np.minimum(c, 2)  # stand-in first attempts, same for both
    curve = headline_curve(n, c, 20, first_n=first_n, first_c=first_c)
    summary = summarize_task_type(n, c, 20, first_n=first_n, first_c=first_c)
    (at, at_low, at_high), (hat, hat_low, hat_high) = curve.at(20)
    assert (at, at_low, at_high) == pytest.approx((summary.pass_at_k, *summary.pass_at_k_ci), abs=1e-12)
    assert (hat, hat_low, hat_high) == pytest.approx((summary.pass_hat_k, *summary.pass_hat_k_ci), abs=1e-12)
    assert (curve.pass_at_1, *curve.pass_at_1_ci) == pytest.approx(
        (summary.pass_at_1, *summary.pass_at_1_ci), abs=1e-12
    )
    # The extrapolating band disagrees with the headline at the same k: why the UI does not draw it.
    band = curve_band(n, c, 20)
    assert band.pass_hat_k_high[-1] - band.pass_hat_k_low[-1] > 1.5 * (hat_high - hat_low)


def test_every_point_of_the_curve_is_the_headline_at_that_k() -> None:
    rng = np.random.default_rng(4)
    n = np.full(60, 8)
    c = rng.binomial(8, rng.beta(3, 1, 60))
    curve = headline_curve(n, c, 8)
    for j in range(2, 9):
        s = summarize_task_type(n, c, j)
        assert curve.at(j)[1] == pytest.approx((s.pass_hat_k, *s.pass_hat_k_ci), abs=1e-12)
        assert curve.at(j)[0] == pytest.approx((s.pass_at_k, *s.pass_at_k_ci), abs=1e-12)
    assert np.all(np.diff(curve.pass_hat_k) <= 1e-12) and np.all(np.diff(curve.pass_at_k) >= -1e-12)


def test_the_curves_band_covers_the_true_pass_hat_k_at_its_level() -> None:
    rng = np.random.default_rng(5)
    weights, rates, k = np.array([0.3, 0.6, 0.1]), np.array([0.97, 0.6, 0.05]), 10
    truth = float(weights @ rates**k)
    runs, covered = 300, 0
    for _ in range(runs):
        p = rng.choice(rates, size=80, p=weights)
        c = rng.binomial(k, p)
        _, (_, low, high) = headline_curve(np.full(80, k), c, k).at(k)
        covered += low <= truth <= high
    assert covered / runs >= 0.93


def test_a_ticket_whose_pass_hat_k_is_not_settled_is_refused_with_what_to_do() -> None:
    with pytest.raises(ValueError, match="not settled"):
        headline_curve([2, 20], [2, 15], 20)


def test_the_mixture_spread_recovers_planted_groups_within_its_intervals() -> None:
    rng = np.random.default_rng(6)
    p = rng.choice([0.99, 0.6, 0.0], size=1500, p=[0.3, 0.6, 0.1])
    spread = mixture_spread(np.full(1500, 20), rng.binomial(20, p))
    shares = [g.share for g in spread.groups]
    assert len(spread.groups) == 3 and not spread.few_tickets
    for group, (share, rate) in zip(spread.groups, [(0.3, 0.99), (0.6, 0.6), (0.1, 0.0)], strict=True):
        assert group.share_ci[0] - 0.02 <= share <= group.share_ci[1] + 0.02
        assert group.rate_ci[0] - 0.01 <= rate <= group.rate_ci[1] + 0.01
        assert group.share_ci[0] <= group.share <= group.share_ci[1]
    assert sum(shares) == pytest.approx(1.0)


def test_failures_a_day_carry_the_figures_intervals() -> None:
    projection = project_failures(
        daily_tickets=1000, share=0.2, k=20, pass_at_1=(0.65, 0.6, 0.7), pass_hat_k=(0.25, 0.2, 0.3)
    )
    assert projection.failing == pytest.approx(70.0) and projection.failing_ci == pytest.approx((60.0, 80.0))
    assert projection.repeat_affected == pytest.approx(150.0)
    assert projection.repeat_affected_ci == pytest.approx((140.0, 160.0))
    with pytest.raises(ValueError, match="traffic share"):
        project_failures(daily_tickets=10, share=1.5, k=2, pass_at_1=(0.5, 0.4, 0.6), pass_hat_k=(0.2, 0.1, 0.3))


def test_signature_shares_sum_to_one_and_each_carries_its_count_and_interval() -> None:
    shares = signature_shares({"tool_usage": 90, "wrong_entity": 9, "no_write": 1, "never": 0})
    assert [s.signature for s in shares] == ["tool_usage", "wrong_entity", "no_write"]
    assert sum(s.share for s in shares) == pytest.approx(1.0)
    assert all(s.total == 100 and s.share_ci[0] <= s.share <= s.share_ci[1] for s in shares)
    assert signature_shares({}) == []


def test_an_unpaired_difference_covers_the_true_difference_of_two_independent_samples() -> None:
    rng = np.random.default_rng(7)
    runs, covered = 400, 0
    for _ in range(runs):
        a = headline_curve(np.full(60, 5), rng.binomial(5, rng.beta(4, 1, 60)), 5).at(5)[1]
        b = headline_curve(np.full(60, 5), rng.binomial(5, rng.beta(4, 1, 60)), 5).at(5)[1]
        _, (low, high) = unpaired_difference(a, b)
        covered += low <= 0.0 <= high  # the same population on both sides
    assert covered / runs >= 0.93
