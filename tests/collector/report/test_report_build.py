"""build_report: the figures are the reliability statistics, weighted by live traffic where the issue says so."""

from __future__ import annotations

import dataclasses
import datetime as dt

import numpy as np
import pytest

from passhat.collector.reliability import pass_hat_k, summarize_task_type
from passhat.collector.report import (
    MIN_EXTRAPOLATION_TICKETS,
    AlertFired,
    BackendChange,
    DailyTraffic,
    NotReplayable,
    PeriodFigures,
    Report,
    ReportInput,
    TrialResult,
    build_report,
)
from tests.collector.report.report_synthetic import synthetic_input

MONDAY = dt.date(2026, 11, 23)


def _ticket(domain: str, task_type: str, ticket: str, outcomes: list[bool]) -> list[TrialResult]:
    return [
        TrialResult(domain, task_type, ticket, i, ok, None if ok else "tool_usage.precondition")
        for i, ok in enumerate(outcomes, 1)
    ]


def _traffic(domain: str, task_type: str, per_day: list[int]) -> list[DailyTraffic]:
    return [DailyTraffic(domain, task_type, MONDAY + dt.timedelta(days=i), n) for i, n in enumerate(per_day)]


def _two_task_types(**changes: object) -> ReportInput:
    """refund: one ticket always right, one never (pass@1 0.5, pass^2 0.5); exchange: two tickets 2 of 4."""
    trials = (
        _ticket("retail", "refund", "r1", [True] * 4)
        + _ticket("retail", "refund", "r2", [False] * 4)
        + _ticket("retail", "exchange", "e1", [True, False, True, False])
        + _ticket("retail", "exchange", "e2", [False, True, False, True])
    )
    traffic = _traffic("retail", "refund", [20, 40]) + _traffic("retail", "exchange", [10, 10])
    base = ReportInput(period="2026-W48", k=2, trials=trials, traffic=traffic, resamples=200)
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_task_type_figures_are_the_reliability_summary(synthetic_report: Report) -> None:
    refund_input = synthetic_input()
    counts: dict[str, tuple[int, int]] = {}
    for trial in refund_input.trials:
        if trial.task_type == "refund":
            n, c = counts.get(trial.ticket_id, (0, 0))
            counts[trial.ticket_id] = (n + 1, c + trial.passed)
    n_arr, c_arr = np.array(list(counts.values())).T
    expected = summarize_task_type(n_arr, c_arr, 20, resamples=10)
    refund = next(t for t in synthetic_report.task_types if t.task_type == "refund")
    assert refund.tickets_sampled == expected.tickets == 20
    assert refund.trials_per_ticket == 20
    assert refund.figures.pass_at_1 == pytest.approx(expected.pass_at_1)
    assert refund.figures.pass_at_k == pytest.approx(expected.pass_at_k)
    assert refund.figures.pass_hat_k == pytest.approx(expected.pass_hat_k)


def test_overall_is_weighted_by_daily_volume_and_unweighted_is_the_plain_ticket_mean() -> None:
    report = build_report(_two_task_types())
    refund_hat, exchange_hat = 0.5, float(pass_hat_k(4, 2, 2))  # 1/6
    # refund averages 30 tickets a day over the two days with traffic, exchange 10.
    assert [t.daily_volume for t in report.task_types] == [10.0, 30.0]
    weighted = report.overall.weighted
    assert weighted.pass_at_1 == pytest.approx(0.5)
    assert weighted.pass_hat_k == pytest.approx((30 * refund_hat + 10 * exchange_hat) / 40)
    assert report.overall.expected_failed_tickets_per_day == pytest.approx(40 * 0.5)
    assert report.overall.unweighted.pass_hat_k == pytest.approx((1 + 0 + 2 * exchange_hat) / 4)
    json = report.to_json()
    assert json["overall"]["pass_hat_k"] == pytest.approx(weighted.pass_hat_k)
    assert json["unweighted"]["pass_hat_k"] == pytest.approx((1 + 2 * exchange_hat) / 4)


def test_weighted_intervals_contain_their_point_and_are_reproducible(synthetic_report: Report) -> None:
    w = synthetic_report.overall.weighted
    for value, interval in (
        (w.pass_at_1, w.pass_at_1_ci),
        (w.pass_at_k, w.pass_at_k_ci),
        (w.pass_hat_k, w.pass_hat_k_ci),
    ):
        assert interval is not None and value is not None
        assert interval[0] <= value <= interval[1]
        assert interval[1] - interval[0] > 0.01  # 98 tickets cannot pin pass^k down to a point
    again = build_report(synthetic_input())
    assert again.overall.weighted == synthetic_report.overall.weighted


def test_domain_figures_weight_their_own_task_types(synthetic_report: Report) -> None:
    for domain in synthetic_report.domains:
        own = [t for t in synthetic_report.task_types if t.domain == domain.domain]
        volume = sum(t.daily_volume for t in own)
        assert domain.daily_volume == pytest.approx(volume)
        assert domain.tickets_sampled == sum(t.tickets_sampled for t in own)
        expected = sum(t.daily_volume * (t.figures.pass_hat_k or 0) for t in own) / volume
        assert domain.weighted.pass_hat_k == pytest.approx(expected)


def test_traffic_of_task_types_without_trials_is_reported_not_weighted() -> None:
    extra = _traffic("retail", "address_change", [100, 100])
    base = _two_task_types()
    report = build_report(dataclasses.replace(base, traffic=[*base.traffic, *extra]))
    assert report.overall.unmeasured_task_types == [("retail", "address_change", 100.0)]
    assert report.overall.daily_volume == 140.0
    assert report.overall.measured_daily_volume == 40.0
    assert report.overall.weighted.pass_at_1 == pytest.approx(0.5)


def test_without_traffic_the_weighted_figures_are_blank_and_the_curve_is_per_ticket() -> None:
    report = build_report(_two_task_types(traffic=[]))
    assert report.overall.weighted.pass_at_1 is None
    assert report.overall.expected_failed_tickets_per_day is None
    assert report.curve_weighting == "tickets"
    assert report.curve == report.unweighted_curve
    assert report.overall.unweighted.pass_at_1 == pytest.approx(0.5)


def test_curve_runs_to_fifty_and_marks_extrapolation(synthetic_report: Report) -> None:
    curve = synthetic_report.curve
    assert curve.k == list(range(1, 51))
    assert curve.extrapolated == [k > 20 for k in curve.k]
    assert curve.pass_hat_k[19] == pytest.approx(synthetic_report.overall.weighted.pass_hat_k)
    assert curve.pass_at_k[0] == pytest.approx(synthetic_report.overall.weighted.pass_at_1)
    assert all(a >= b for a, b in zip(curve.pass_hat_k, curve.pass_hat_k[1:], strict=False))
    assert all(a <= b + 1e-12 for a, b in zip(curve.pass_at_k, curve.pass_at_k[1:], strict=False))


def test_curve_reaches_k_when_k_is_above_fifty() -> None:
    assert len(build_report(_two_task_types()).curve.k) == 50
    big = build_report(synthetic_input(k=60, resamples=20))
    assert big.curve.k == list(range(1, 61))
    assert not any(big.curve.extrapolated)


def test_extrapolated_curve_meets_the_measured_one_without_a_step(synthetic_report: Report) -> None:
    curves = [synthetic_report.curve, synthetic_report.unweighted_curve, *synthetic_report.task_type_curves]
    for curve in [c for c in curves if len(c.k) > 20]:
        last, first = curve.pass_hat_k[19], curve.pass_hat_k[20]
        assert first <= last + 1e-12  # pass^k never rises with k
        assert last - first <= max(3 * (curve.pass_hat_k[18] - last), 0.005)  # no cliff at the seam either
        assert all(a >= b - 1e-12 for a, b in zip(curve.pass_hat_k, curve.pass_hat_k[1:], strict=False))
        assert all(a <= b + 1e-12 for a, b in zip(curve.pass_at_k, curve.pass_at_k[1:], strict=False))


def test_a_task_type_with_few_tickets_is_not_extrapolated_beyond_its_trials(synthetic_report: Report) -> None:
    for t, curve in zip(synthetic_report.task_types, synthetic_report.task_type_curves, strict=True):
        if t.tickets_sampled < MIN_EXTRAPOLATION_TICKETS:
            assert not t.extrapolated and curve.k == list(range(1, t.trials_per_ticket + 1))
            assert not any(curve.extrapolated)


def test_the_headline_curve_beyond_the_trials_is_a_band_around_the_line(synthetic_report: Report) -> None:
    curve = synthetic_report.curve
    assert curve.pass_hat_k_band is not None and len(curve.pass_hat_k_band) == len(curve.k)
    for value, (low, high) in zip(curve.pass_hat_k, curve.pass_hat_k_band, strict=True):
        assert low <= value + 1e-9 and value <= high + 1e-9
        assert high > low
    seam = curve.extrapolated.index(True)
    # Beyond the trials the band widens: the model is not identified there.
    widths = [high - low for low, high in curve.pass_hat_k_band]
    assert widths[-1] >= widths[seam - 1]


def test_every_figure_has_its_interval_and_the_failed_tickets_a_day_too(synthetic_report: Report) -> None:
    o = synthetic_report.overall
    assert o.expected_failed_tickets_per_day_ci is not None and o.expected_failed_tickets_per_day is not None
    low, high = o.expected_failed_tickets_per_day_ci
    assert low < o.expected_failed_tickets_per_day < high
    for t in synthetic_report.task_types:
        assert t.expected_failed_tickets_per_day_ci is not None
        assert t.sample_size.startswith(f"with {t.tickets_sampled} tickets the pass^{synthetic_report.k} interval")
    data = synthetic_report.to_json()
    assert data["task_types"][0]["pass_hat_k_half_width"] > 0 and data["sample_size"]
    assert data["design"]["name"] == "fixed"


def test_signatures_count_failed_trials_and_unlabelled_failures() -> None:
    trials = [
        TrialResult("retail", "refund", "r1", 1, False, "wrong_entity"),
        TrialResult("retail", "refund", "r1", 2, False, None),
        TrialResult("retail", "refund", "r1", 3, False, "wrong_entity"),
        TrialResult("retail", "refund", "r1", 4, True),
    ]
    report = build_report(ReportInput(period="2026-W48", k=2, trials=trials, resamples=20))
    (refund,) = report.task_types
    assert refund.signatures == {"wrong_entity": 2, "unclassified": 1}
    assert refund.failed_trials == 3


def test_least_reliable_task_type_shows_its_most_split_ticket_attempt_by_attempt() -> None:
    change = BackendChange("orders", {"order_id": "#W1"}, "update", {"status": "delivered"}, {"status": "refunded"})
    trials = _ticket("retail", "refund", "r1", [True] * 4) + _ticket("retail", "refund", "r2", [False] * 4)
    trials += [
        TrialResult("retail", "exchange", "e1", 1, True, None, "customer_stop", [change], "Done."),
        TrialResult("retail", "exchange", "e1", 2, False, "wrong_entity", "agent_stop", [], "Done!"),
        TrialResult("retail", "exchange", "e1", 3, True),
        TrialResult("retail", "exchange", "e1", 4, False, "no_write"),
        *_ticket("retail", "exchange", "e2", [True, True, True, False]),
    ]
    report = build_report(ReportInput(period="2026-W48", k=2, trials=trials, resamples=20))
    side = report.least_reliable
    assert side is not None
    assert (side.task_type, side.ticket_id) == ("exchange", "e1")
    assert [a.attempt for a in side.attempts] == [1, 2]  # its k attempts
    assert side.attempts[0].changes == [change]
    assert side.attempts[1].signature == "wrong_entity"
    assert "1 of its 2 attempts passed" in side.why


def test_trend_lists_earlier_periods_then_this_one_with_changes() -> None:
    previous = [PeriodFigures("2026-W47", 2, 0.6, 0.4), PeriodFigures("2026-W45", 3, 0.7, 0.3)]
    report = build_report(_two_task_types(previous=previous))
    assert [p.period for p in report.trend] == ["2026-W45", "2026-W47", "2026-W48"]
    w45, w47, w48 = report.trend
    assert w45.pass_at_1_change is None
    assert w47.pass_at_1_change == pytest.approx(-0.1)
    assert w47.pass_hat_k_change is None  # k changed from 3 to 2: not comparable
    assert w48.pass_hat_k_change == pytest.approx((report.overall.weighted.pass_hat_k or 0) - 0.4)


def test_simulated_when_flagged_or_when_any_trial_was_simulated() -> None:
    assert not build_report(_two_task_types()).simulated
    assert build_report(_two_task_types(simulated=True)).simulated
    base = _two_task_types()
    trials = [dataclasses.replace(t, simulated=t.ticket_id == "r1") for t in base.trials]
    report = build_report(dataclasses.replace(base, trials=trials))
    assert report.simulated and report.simulated_trials == 4


def test_not_replayable_and_alerts_are_carried_sorted() -> None:
    late = AlertFired("below_threshold", None, "pass^2 overall 20% < 30%", dt.datetime(2026, 11, 29, tzinfo=dt.UTC))
    early = AlertFired("drop", "refund", "dropped", dt.datetime(2026, 11, 24, tzinfo=dt.UTC))
    skipped = [NotReplayable("z9", "refund", "no intent"), NotReplayable("a1", "exchange", "no before-image")]
    report = build_report(_two_task_types(alerts=[late, early], not_replayable=skipped))
    assert [a.rule for a in report.alerts] == ["drop", "below_threshold"]
    assert [r.ticket_id for r in report.not_replayable] == ["a1", "z9"]
    json = report.to_json()
    assert json["alerts"][1] == {
        "rule": "below_threshold",
        "task_type": None,
        "message": "pass^2 overall 20% < 30%",
        "fired_at": "2026-11-29T00:00:00+00:00",
    }
    assert json["not_replayable"][0] == {"ticket_id": "a1", "task_type": "exchange", "reason": "no before-image"}
