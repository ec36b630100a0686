"""A mixture fitted to a paper's aggregate points: the seed's figures give the seed's mixture."""

from __future__ import annotations

import pytest

from passhat.collector.reliability import AggregatePoint, fit_mixture_to_points

SEED_POINTS = ["pass@1=0.654", "pass@20=0.911", "pass^20=0.253"]


def test_the_seed_points_give_the_seed_mixture() -> None:
    fit = fit_mixture_to_points([AggregatePoint.parse(p) for p in SEED_POINTS], components=3)
    top, middle, never = fit.mixture.components
    assert fit.max_abs_error < 1e-6
    assert top.weight == pytest.approx(0.31, abs=0.01) and top.p == pytest.approx(0.99, abs=0.005)
    assert middle.weight == pytest.approx(0.60, abs=0.01) and middle.p == pytest.approx(0.58, abs=0.01)
    assert never.weight == pytest.approx(0.09, abs=0.01) and never.p == pytest.approx(0.0, abs=1e-6)


def test_the_fit_reproduces_every_point() -> None:
    points = [AggregatePoint.parse(p) for p in SEED_POINTS]
    fit = fit_mixture_to_points(points, components=3)
    for point in points:
        assert point.predicted(fit.mixture) == pytest.approx(point.value, abs=1e-6)


def test_two_components_are_determined_by_three_points_without_anchors() -> None:
    fit = fit_mixture_to_points([AggregatePoint.parse(p) for p in SEED_POINTS], components=2)
    assert fit.anchors == ()
    assert len(fit.mixture.components) == 2


def test_another_top_anchor_moves_the_decomposition() -> None:
    points = [AggregatePoint.parse(p) for p in SEED_POINTS]
    fit = fit_mixture_to_points(points, components=3, top_p=1.0)
    assert fit.max_abs_error < 1e-6
    assert fit.mixture.components[0].weight == pytest.approx(0.253, abs=0.005)


def test_underdetermined_fit_is_an_error() -> None:
    with pytest.raises(ValueError, match="cannot determine a 4-component"):
        fit_mixture_to_points([AggregatePoint.parse(p) for p in SEED_POINTS], components=4)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("pass@1", "pass@K=VALUE"),
        ("pass@1=1.5", r"\[0, 1\]"),
        ("pass#3=0.2", "pass@K=VALUE"),
        ("pass@0=0.1", "k"),
    ],
)
def test_malformed_points_are_named(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AggregatePoint.parse(text)


def test_pass_at_1_and_pass_hat_1_are_one_quantity() -> None:
    with pytest.raises(ValueError, match="same quantity"):
        fit_mixture_to_points([AggregatePoint.parse("pass@1=0.5"), AggregatePoint.parse("pass^1=0.6")], components=1)
