"""The binomial mixture: EM recovers planted mixtures, BIC picks the number of groups, predictions extrapolate."""

from __future__ import annotations

import numpy as np
import pytest

from passhat.collector.reliability import (
    Mixture,
    fit_mixture,
    pass_at_k_array,
    pass_hat_k_array,
    reliability_curve,
)


def planted(seed: int, tickets: int = 300, trials: int = 20) -> tuple[np.ndarray, np.ndarray]:
    # Exactly 31% / 60% / 9% of the tickets in each group, so the test measures EM, not sampling noise.
    rng = np.random.default_rng(seed)
    sizes = [round(0.31 * tickets), round(0.60 * tickets)]
    sizes.append(tickets - sum(sizes))
    p = rng.permutation(np.repeat([0.99, 0.58, 0.0], sizes))
    return np.full(tickets, trials), rng.binomial(trials, p)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_em_recovers_a_planted_three_component_mixture(seed: int) -> None:
    n, c = planted(seed)
    fit = fit_mixture(n, c)
    assert len(fit.components) == 3
    for comp, (w, p) in zip(fit.components, [(0.31, 0.99), (0.60, 0.58), (0.09, 0.0)], strict=True):
        assert comp.weight == pytest.approx(w, abs=0.05)
        assert comp.p == pytest.approx(p, abs=0.05)


def test_bic_prefers_one_component_for_a_homogeneous_agent() -> None:
    rng = np.random.default_rng(9)
    c = rng.binomial(20, 0.7, size=400)
    fit = fit_mixture(np.full(400, 20), c)
    assert len(fit.components) == 1
    assert fit.components[0].p == pytest.approx(0.7, abs=0.02)
    assert fit.bic_by_components[1] < fit.bic_by_components[2]


def test_fit_is_deterministic() -> None:
    n, c = planted(4)
    assert fit_mixture(n, c) == fit_mixture(n, c)


def test_predictions_match_the_estimators_inside_the_data() -> None:
    n, c = planted(5, tickets=2000)
    fit = fit_mixture(n, c)
    for k in (1, 5, 20):
        assert fit.pass_hat_k(k)[0] == pytest.approx(pass_hat_k_array(n, c, k).mean(), abs=0.02)
        assert fit.pass_at_k(k)[0] == pytest.approx(pass_at_k_array(n, c, k).mean(), abs=0.02)


def test_mixture_formulas() -> None:
    mixture = Mixture.of([0.5, 0.5], [1.0, 0.5])
    assert mixture.pass_hat_k(2)[0] == pytest.approx(0.5 + 0.5 * 0.25)
    assert mixture.pass_at_k(2)[0] == pytest.approx(1 - 0.5 * 0.25)
    assert [c.p for c in mixture.components] == [1.0, 0.5]


def test_curve_marks_extrapolation_beyond_the_trials_run() -> None:
    n, c = planted(6, trials=10)
    curve = reliability_curve(n, c, 30)
    assert list(curve.k) == list(range(1, 31))
    assert not curve.extrapolated[:10].any() and curve.extrapolated[10:].all()
    assert curve.pass_hat_k[9] == pytest.approx(pass_hat_k_array(n, c, 10).mean())
    assert np.all(np.diff(curve.pass_hat_k[10:]) <= 1e-12)
    assert np.all(np.diff(curve.pass_at_k[10:]) >= -1e-12)


def test_invalid_mixture_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        Mixture.of([1.0], [1.2])
