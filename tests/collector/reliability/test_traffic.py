"""Traffic weighting and the calculator."""

from __future__ import annotations

import pytest

from passhat.collector.reliability import Mixture, TaskTypeTraffic, calculate, traffic_impact


def test_weights_by_daily_volume() -> None:
    rows = [
        TaskTypeTraffic("refund", daily_volume=900, pass_at_1=0.9, pass_hat_k=0.5),
        TaskTypeTraffic("address", daily_volume=100, pass_at_1=0.5, pass_hat_k=0.1),
    ]
    impact = traffic_impact(rows, noticed_share=0.5)
    assert impact.total_daily_volume == 1000
    assert impact.pass_at_1 == pytest.approx(0.86)
    assert impact.pass_hat_k == pytest.approx(0.46)
    assert impact.expected_failed_tickets_per_day == pytest.approx(90 + 50)
    assert impact.noticed_failures_per_day == pytest.approx(70)
    assert impact.share_of_traffic_handled_every_time == pytest.approx(0.46)


def test_no_traffic_is_an_error() -> None:
    with pytest.raises(ValueError, match="zero daily volume"):
        traffic_impact([TaskTypeTraffic("a", 0, 0.5, 0.1)])


def test_calculator_homogeneous() -> None:
    result = calculate(success_rate=0.654, tickets_per_day=2000, noticed_share=0.3, k=20)
    assert result.model == "homogeneous"
    assert result.failed_tickets_per_day == pytest.approx(692)
    assert result.noticed_failures_per_day == pytest.approx(207.6)
    assert result.pass_hat_k == pytest.approx(0.654**20)
    assert result.pass_at_k == pytest.approx(1 - 0.346**20)


def test_calculator_with_the_seed_mixture() -> None:
    mixture = Mixture.of([0.31, 0.60, 0.09], [0.99, 0.58, 0.0])
    result = calculate(mixture=mixture, tickets_per_day=2000, noticed_share=0.3, k=20)
    assert result.pass_at_1 == pytest.approx(0.654, abs=0.002)
    assert result.share_of_task_types_handled_every_time == pytest.approx(0.253, abs=0.002)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"success_rate": 1.2, "tickets_per_day": 1, "noticed_share": 0.1, "k": 2},
        {"success_rate": 0.5, "tickets_per_day": -1, "noticed_share": 0.1, "k": 2},
        {"success_rate": 0.5, "tickets_per_day": 1, "noticed_share": 2.0, "k": 2},
        {"success_rate": 0.5, "tickets_per_day": 1, "noticed_share": 0.1, "k": 0},
        {"tickets_per_day": 1, "noticed_share": 0.1, "k": 2},
    ],
)
def test_calculator_rejects_bad_input(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        calculate(**kwargs)  # type: ignore[arg-type]
