"""The report's input model rejects inconsistent input with one message that names the item."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from passhat.collector.report import (
    BackendChange,
    DailyTraffic,
    PeriodFigures,
    Report,
    ReportInput,
    ReportInputError,
    TrialResult,
    build_report,
    period_days,
)
from tests.collector.report.report_synthetic import synthetic_input


def _trials(
    ticket: str, outcomes: list[bool], *, task_type: str = "refund", domain: str = "retail"
) -> list[TrialResult]:
    return [
        TrialResult(domain, task_type, ticket, i, ok, None if ok else "no_write") for i, ok in enumerate(outcomes, 1)
    ]


def _input(trials: list[TrialResult], **changes: object) -> ReportInput:
    base = ReportInput(period="2026-W48", k=2, trials=trials)
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_period_is_an_iso_week() -> None:
    assert period_days("2026-W48") == (dt.date(2026, 11, 23), dt.date(2026, 11, 29))
    assert period_days("2026-W53") == (dt.date(2026, 12, 28), dt.date(2027, 1, 3))


def test_a_period_can_be_one_day_and_week_numbers_are_normalised() -> None:
    assert period_days("2026-11-24") == (dt.date(2026, 11, 24), dt.date(2026, 11, 24))
    report = build_report(_input(_trials("t1", [True, False]), period="2026-W7", resamples=10))
    assert report.period == "2026-W07"


@pytest.mark.parametrize("period", ["2026-48", "W48", "", "2026-w48", "last week"])
def test_malformed_period_is_rejected(period: str) -> None:
    with pytest.raises(ReportInputError, match="write an ISO week like 2026-W48 or a day like 2026-11-23"):
        build_report(_input(_trials("t1", [True, False]), period=period))


def test_a_week_the_year_does_not_have_is_rejected() -> None:
    with pytest.raises(ReportInputError, match="is not a week of 2025"):
        period_days("2025-W53")


def test_no_trials_is_an_error_not_an_empty_report() -> None:
    with pytest.raises(ReportInputError, match="has no trials"):
        build_report(_input([]))


def test_k_must_be_a_positive_whole_number() -> None:
    with pytest.raises(ReportInputError, match="k must be a whole number"):
        build_report(_input(_trials("t1", [True, False]), k=0))


def test_a_ticket_with_fewer_than_k_trials_is_named() -> None:
    trials = _trials("t1", [True, False]) + _trials("t2", [True])
    with pytest.raises(ReportInputError, match="ticket 't2' has 1 trials but the report's k is 2"):
        build_report(_input(trials))


def test_the_same_attempt_twice_is_rejected() -> None:
    trials = _trials("t1", [True, False]) + _trials("t1", [True])
    with pytest.raises(ReportInputError, match="same attempt number twice"):
        build_report(_input(trials))


def test_a_ticket_belongs_to_one_task_type() -> None:
    trials = [*_trials("t1", [True, False]), TrialResult("retail", "exchange", "t1", 3, True)]
    with pytest.raises(ReportInputError, match="appears under both retail/refund and retail/exchange"):
        build_report(_input(trials))


def test_a_passed_trial_has_no_failure_signature() -> None:
    trials = [*_trials("t1", [True]), TrialResult("retail", "refund", "t1", 2, True, "wrong_entity")]
    with pytest.raises(ReportInputError, match="passed but carries the failure signature 'wrong_entity'"):
        build_report(_input(trials))


def test_backend_change_ops_are_the_state_write_ops() -> None:
    change = BackendChange("orders", {"id": 1}, "upsert", None, {"status": "x"})
    trials = [
        TrialResult("retail", "refund", "t1", 1, True, changes=[change]),
        TrialResult("retail", "refund", "t1", 2, True),
    ]
    with pytest.raises(ReportInputError, match="op 'upsert'"):
        build_report(_input(trials))


def test_traffic_outside_the_period_is_rejected() -> None:
    traffic = [DailyTraffic("retail", "refund", dt.date(2026, 11, 30), 10)]
    with pytest.raises(ReportInputError, match=r"2026-11-30 lies outside period 2026-W48 \(2026-11-23 to 2026-11-29\)"):
        build_report(_input(_trials("t1", [True, False]), traffic=traffic))


def test_traffic_given_twice_for_a_day_is_rejected() -> None:
    row = DailyTraffic("retail", "refund", dt.date(2026, 11, 24), 10)
    with pytest.raises(ReportInputError, match="given twice"):
        build_report(_input(_trials("t1", [True, False]), traffic=[row, row]))


def test_negative_traffic_is_rejected() -> None:
    row = DailyTraffic("retail", "refund", dt.date(2026, 11, 24), -1)
    with pytest.raises(ReportInputError, match="must be a count >= 0"):
        build_report(_input(_trials("t1", [True, False]), traffic=[row]))


def test_previous_periods_must_be_earlier() -> None:
    later = PeriodFigures("2026-W49", 2, 0.5, 0.2)
    with pytest.raises(ReportInputError, match="2026-W49 is not earlier than the report's period 2026-W48"):
        build_report(_input(_trials("t1", [True, False]), previous=[later]))


def test_previous_figures_must_be_probabilities() -> None:
    odd = PeriodFigures("2026-W47", 2, 1.5, 0.2)
    with pytest.raises(ReportInputError, match="pass_at_1 must lie in"):
        build_report(_input(_trials("t1", [True, False]), previous=[odd]))


def test_previous_figures_read_back_from_an_earlier_report(synthetic_report: Report) -> None:
    figures = PeriodFigures.from_report_json(synthetic_report.to_json())
    assert figures.period == "2026-W48"
    assert figures.k == 20
    assert figures.pass_hat_k == synthetic_report.overall.weighted.pass_hat_k
    assert figures.expected_failed_tickets_per_day == synthetic_report.overall.expected_failed_tickets_per_day


def test_an_earlier_report_without_figures_is_a_clear_error() -> None:
    with pytest.raises(ReportInputError, match="lacks its period, k or overall figures"):
        PeriodFigures.from_report_json({"period": "2026-W47"})


def test_the_synthetic_period_is_valid() -> None:
    report = build_report(synthetic_input(k=3, resamples=50))
    assert report.k == 3


def test_alert_times_carry_a_time_zone() -> None:
    from passhat.collector.report import AlertFired

    naive = AlertFired("drop", "refund", "dropped", dt.datetime(2026, 11, 24, 6, 0))
    with pytest.raises(ReportInputError, match="without a time zone"):
        build_report(_input(_trials("t1", [True, False]), alerts=[naive]))


def test_a_previous_period_given_twice_is_rejected() -> None:
    twice = [PeriodFigures("2026-W47", 2, 0.5, 0.2), PeriodFigures("2026-W47", 2, 0.6, 0.3)]
    with pytest.raises(ReportInputError, match="same period twice"):
        build_report(_input(_trials("t1", [True, False]), previous=twice))


def test_backend_changes_read_from_mappings() -> None:
    change = BackendChange.from_dict(
        {"table": "orders", "key": {"order_id": "W1"}, "op": "update", "before": {"s": "a"}, "after": {"s": "b"}}
    )
    assert change == BackendChange("orders", {"order_id": "W1"}, "update", {"s": "a"}, {"s": "b"})
    with pytest.raises(ReportInputError, match="needs table, key"):
        BackendChange.from_dict({"table": "orders", "op": "insert"})


def test_a_mapping_in_place_of_a_backend_change_is_named() -> None:
    odd = TrialResult("retail", "refund", "t1", 1, True, changes=[{"table": "orders"}])  # type: ignore[list-item]
    with pytest.raises(ReportInputError, match="changes must be BackendChange items"):
        build_report(_input([odd, TrialResult("retail", "refund", "t1", 2, True)]))


def test_a_stored_trial_is_read_with_its_typed_details() -> None:
    import datetime as dt

    from passhat.checks import RowChange
    from passhat.collector.store import TrialRow
    from passhat.sandbox import TrialDetails

    change = RowChange("orders", {"id": "O-2"}, "update", {"s": "a"}, {"s": "b"})
    details = TrialDetails(changes=(change,), final_response="Done.", simulated=True)
    row = TrialRow("r", "T-1", "refund", 0, False, "agent_stop", dt.datetime.now(dt.UTC), 1.0, "retail",
                   failure_label="wrong_entity", details=details)  # fmt: skip
    assert TrialResult.from_row(row) == TrialResult(
        "retail", "refund", "T-1", 1, False, "wrong_entity", "agent_stop",
        [BackendChange("orders", {"id": "O-2"}, "update", {"s": "a"}, {"s": "b"})], "Done.", simulated=True,
    )  # fmt: skip
