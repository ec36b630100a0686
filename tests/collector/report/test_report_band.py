"""The curve's band at k is the headline's interval at k: both come from `weighted_curve`.

The issue this guards against: at k = 20 the band read 7.0-50.7% while the headline card said 17.0-32.5% (the band
averaged the task types' bands, the headline stratified their intervals).
"""

from __future__ import annotations

import numpy as np
import pytest

from passhat.collector.reliability import Stratum, curve_band, reliability_curve, weighted_curve
from passhat.collector.report import Report, build_report
from tests.collector.report.report_synthetic import synthetic_input


def _assert_band_is_headline(report: Report) -> None:
    k, w, curve = report.k, report.overall.weighted, report.curve
    assert curve.pass_hat_k_band is not None and curve.pass_at_k_band is not None
    assert curve.pass_hat_k_band[k - 1] == pytest.approx(w.pass_hat_k_ci, abs=1e-12)
    assert curve.pass_at_k_band[k - 1] == pytest.approx(w.pass_at_k_ci, abs=1e-12)
    assert curve.pass_hat_k[k - 1] == pytest.approx(w.pass_hat_k, abs=1e-12)
    assert curve.pass_at_k[k - 1] == pytest.approx(w.pass_at_k, abs=1e-12)


def test_the_band_at_k_is_the_headline_interval(synthetic_report: Report) -> None:
    _assert_band_is_headline(synthetic_report)
    # and it is the stratified interval, not the much wider average of the task types' bands
    k = synthetic_report.k
    low, high = synthetic_report.overall.weighted.pass_hat_k_ci or (0.0, 1.0)
    volumes = np.array([t.daily_volume for t in synthetic_report.task_types])
    bands = [c.pass_hat_k_band[k - 1] for c in synthetic_report.task_type_curves if c.pass_hat_k_band]
    averaged = (volumes @ [b[0] for b in bands] / volumes.sum(), volumes @ [b[1] for b in bands] / volumes.sum())
    assert high - low < 0.75 * (averaged[1] - averaged[0])


def test_each_task_type_band_at_k_is_its_interval(synthetic_report: Report) -> None:
    k = synthetic_report.k
    for task_type, curve in zip(synthetic_report.task_types, synthetic_report.task_type_curves, strict=True):
        assert curve.pass_hat_k_band is not None
        assert curve.pass_hat_k_band[k - 1] == pytest.approx(task_type.figures.pass_hat_k_ci, abs=1e-12)


def test_the_band_is_the_headline_at_another_k_and_for_the_plain_mean() -> None:
    report = build_report(synthetic_input(k=6))
    _assert_band_is_headline(report)
    # Without traffic the report draws the plain mean's curve: its band at k is the plain mean's interval.
    plain = report.unweighted_curve
    assert plain.pass_hat_k_band is not None and plain.pass_at_k_band is not None
    assert plain.pass_hat_k_band[5] == pytest.approx(report.overall.unweighted.pass_hat_k_ci, abs=1e-12)
    assert plain.pass_at_k_band[5] == pytest.approx(report.overall.unweighted.pass_at_k_ci, abs=1e-12)


def _stratum(seed: int, tickets: int, weight: float, trials: int = 6, max_k: int = 12) -> Stratum:
    """A task type of ``tickets`` tickets; beyond ``trials`` its curve and band come from fitted mixtures."""
    rng = np.random.default_rng(seed)
    n = np.full(tickets, trials)
    c = rng.binomial(trials, rng.choice([0.98, 0.6, 0.05], p=[0.3, 0.6, 0.1], size=tickets))
    return Stratum(reliability_curve(n, c, max_k), curve_band(n, c, max_k), tickets, weight)


def test_one_stratum_gives_its_own_band_where_trials_reach_and_the_band_holds_the_curve() -> None:
    alone = _stratum(1, 40, 3.0)
    curve = weighted_curve([alone])
    for i in range(6):  # measured: the stratum's own continuity-corrected Wilson interval
        assert curve.band.pass_hat_k_low[i] == pytest.approx(alone.band.pass_hat_k_low[i], abs=1e-9)
        assert curve.band.pass_hat_k_high[i] == pytest.approx(alone.band.pass_hat_k_high[i], abs=1e-9)
        assert curve.band.pass_at_k_low[i] == pytest.approx(alone.band.pass_at_k_low[i], abs=1e-9)
    mixed = weighted_curve([_stratum(2, 20, 500.0), _stratum(3, 12, 80.0), alone])
    c, b = mixed.curve, mixed.band
    assert np.all(b.pass_hat_k_low <= c.pass_hat_k) and np.all(c.pass_hat_k <= b.pass_hat_k_high)
    assert np.all(b.pass_at_k_low <= c.pass_at_k) and np.all(c.pass_at_k <= b.pass_at_k_high)
    point = mixed.at(12)
    assert point.extrapolated and point.tickets == 72
    assert point.pass_hat_k_ci == (b.pass_hat_k_low[11], b.pass_hat_k_high[11])


def test_bad_strata_are_refused_with_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="at least one stratum"):
        weighted_curve([])
    with pytest.raises(ValueError, match="same k"):
        weighted_curve([_stratum(1, 10, 1.0, max_k=6), _stratum(2, 10, 1.0, max_k=4)])
    with pytest.raises(ValueError, match="not all zero"):
        weighted_curve([_stratum(1, 10, 0.0, max_k=6)])
    with pytest.raises(ValueError, match="k must lie between 1 and 6"):
        weighted_curve([_stratum(1, 10, 1.0, max_k=6)]).at(7)
