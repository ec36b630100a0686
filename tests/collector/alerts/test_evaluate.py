"""Rule evaluation as a pure function: thresholds, drops, cooldown, resolve, and quiet on noise."""

from __future__ import annotations

import json

import numpy as np

from passhat.collector.alerts import AlertRule, AlertState, PeriodCounts, TicketCounts, evaluate

K = 5


def tickets(count: int, all_pass: int) -> TicketCounts:
    """``count`` tickets of 5 trials each, ``all_pass`` of them passing every trial (pass^5 = all_pass / count)."""
    c = [K] * all_pass + [K - 2] * (count - all_pass)
    return TicketCounts(n=[K] * count, c=c)


def period(label: str, **task_types: TicketCounts) -> PeriodCounts:
    return PeriodCounts(period=label, task_types=task_types)


THRESHOLD = AlertRule(name="refunds-floor", kind="threshold", task_type="refund", threshold=0.5, min_tickets=10)
DROP = AlertRule(name="refunds-drop", kind="drop", task_type="refund", min_tickets=20, permutations=999)


def test_threshold_fires_below_and_names_the_figures() -> None:
    result = evaluate([THRESHOLD], period("2026-W48", refund=tickets(40, 12)), [], AlertState(), k=K)
    assert [n.alert_id for n in result.fire] == ["refunds-floor/refund:2026-W48"]
    notice = result.fire[0]
    assert notice.kind == "fired" and notice.scope == "refund"
    assert "30.0%" in notice.text and "50.0%" in notice.text and "40 tickets" in notice.text
    assert notice.details["pass_hat_k"] == 0.3
    assert "refunds-floor/refund" in result.state.open


def test_threshold_stays_quiet_above() -> None:
    result = evaluate([THRESHOLD], period("2026-W48", refund=tickets(40, 30)), [], AlertState(), k=K)
    assert result.fire == [] and result.resolve == []
    assert result.decisions[0].outcome == "quiet"


def test_too_few_tickets_neither_fires_nor_resolves() -> None:
    result = evaluate([THRESHOLD], period("2026-W48", refund=tickets(5, 0)), [], AlertState(), k=K)
    assert result.fire == []
    assert result.decisions[0].outcome == "insufficient"
    assert "5 (need 10)" in result.decisions[0].reason


def test_one_regression_is_one_alert_then_a_resolve_then_cooldown() -> None:
    rule = AlertRule(
        name="floor", kind="threshold", task_type="refund", threshold=0.5, min_tickets=10, cooldown_periods=1
    )
    state = AlertState()
    sent: list[tuple[str, str]] = []
    weeks = [("W1", 10), ("W2", 10), ("W3", 12), ("W4", 30), ("W5", 10), ("W6", 10)]
    outcomes = []
    for label, good in weeks:
        result = evaluate([rule], period(label, refund=tickets(40, good)), [], state, k=K)
        state = result.state
        sent += [(n.kind, label) for n in result.notices]
        outcomes.append(result.decisions[0].outcome)
    # Fired once in W1, open through W3, resolved in W4, W5 held back by the cooldown, fired again in W6.
    assert sent == [("fired", "W1"), ("resolved", "W4"), ("fired", "W6")]
    assert outcomes == ["fired", "still_open", "still_open", "resolved", "cooldown", "fired"]


def test_resolve_notice_points_at_the_alert_it_closes() -> None:
    first = evaluate([THRESHOLD], period("W1", refund=tickets(40, 4)), [], AlertState(), k=K)
    second = evaluate([THRESHOLD], period("W2", refund=tickets(40, 36)), [], first.state, k=K)
    assert [n.alert_id for n in second.resolve] == ["refunds-floor/refund:W1:resolved"]
    assert second.resolve[0].details["fired_alert_id"] == "refunds-floor/refund:W1"
    assert "recovered" in second.resolve[0].text
    assert second.state.open == {}


def test_resolve_margin_keeps_a_borderline_recovery_open() -> None:
    rule = AlertRule(name="f", kind="threshold", task_type="refund", threshold=0.5, min_tickets=10, resolve_margin=0.1)
    first = evaluate([rule], period("W1", refund=tickets(40, 4)), [], AlertState(), k=K)
    second = evaluate([rule], period("W2", refund=tickets(40, 22)), [], first.state, k=K)  # 55% < 60%
    assert second.resolve == [] and second.decisions[0].outcome == "still_open"


def test_evaluating_a_period_twice_sends_nothing_new() -> None:
    first = evaluate([THRESHOLD], period("W1", refund=tickets(40, 4)), [], AlertState(), k=K)
    again = evaluate([THRESHOLD], period("W1", refund=tickets(40, 4)), [], first.state, k=K)
    assert again.repeated and again.notices == [] and again.state == first.state


def test_drop_fires_on_a_real_drop_with_the_test_in_the_message() -> None:
    baseline = [period(f"W{i}", refund=tickets(50, 40)) for i in (4, 3, 2, 1)]
    result = evaluate([DROP], period("W5", refund=tickets(50, 20)), baseline, AlertState(), k=K)
    assert len(result.fire) == 1
    notice = result.fire[0]
    assert "80.0%" in notice.text and "40.0%" in notice.text and "permutation test" in notice.text
    assert notice.details["baseline_periods"] == ["W4", "W3", "W2", "W1"]
    assert notice.details["p_value"] <= 0.01


def test_drop_uses_only_the_newest_baseline_periods() -> None:
    rule = AlertRule(name="d", kind="drop", task_type="refund", baseline_periods=2, min_tickets=20, permutations=999)
    baseline = [
        period("W4", refund=tickets(50, 20)),
        period("W3", refund=tickets(50, 20)),
        period("W2", refund=tickets(50, 50)),
    ]
    result = evaluate([rule], period("W5", refund=tickets(50, 20)), baseline, AlertState(), k=K)
    assert result.fire == []
    assert result.decisions[0].outcome == "quiet"


def test_a_continuing_drop_stays_one_alert_because_alert_periods_leave_the_baseline() -> None:
    history = [period(f"W{i}", refund=tickets(50, 40)) for i in (4, 3, 2, 1)]
    state = AlertState()
    outcomes = []
    for label, good in [("W5", 20), ("W6", 20), ("W7", 20), ("W8", 20), ("W9", 40)]:
        result = evaluate([DROP], period(label, refund=tickets(50, good)), history, state, k=K)
        state = result.state
        outcomes.append(result.decisions[0].outcome)
        history = [period(label, refund=tickets(50, good)), *history]
    # Without excluding W5..W8, the baseline would sink to the regressed level and the alert would "resolve".
    assert outcomes == ["fired", "still_open", "still_open", "still_open", "resolved"]
    assert state.excluded["refunds-drop/refund"] == ("W5", "W6", "W7", "W8")


def test_noise_weeks_do_not_alert() -> None:
    # 40 weeks of the same process (each ticket passes all 5 trials with probability 0.6): no real change.
    rng = np.random.default_rng(7)
    rule = AlertRule(name="d", kind="drop", task_type=None, min_tickets=30, confidence=0.99, permutations=999)
    history: list[PeriodCounts] = []
    state = AlertState()
    fired = 0
    for week in range(40):
        good = int(rng.binomial(60, 0.6))
        current = period(f"W{week:02d}", refund=tickets(60, good))
        result = evaluate([rule], current, history, state, k=K, seed=week)
        fired += len(result.fire)
        state = result.state
        history = [current, *history]
    assert fired <= 1  # expected 0.4 at 99% confidence over 40 weeks


def test_every_task_type_rule_alerts_per_task_type() -> None:
    rule = AlertRule(name="floor", kind="threshold", task_type="*", threshold=0.5, min_tickets=10)
    result = evaluate([rule], period("W1", refund=tickets(20, 2), exchange=tickets(20, 18)), [], AlertState(), k=K)
    assert [n.task_type for n in result.fire] == ["refund"]
    assert {d.task_type: d.outcome for d in result.decisions} == {"exchange": "quiet", "refund": "fired"}


def test_overall_threshold_uses_traffic_weights_when_given() -> None:
    rule = AlertRule(name="overall", kind="threshold", threshold=0.5, min_tickets=10)
    counts = {"refund": tickets(20, 2), "exchange": tickets(20, 20)}
    plain = evaluate([rule], PeriodCounts("W1", counts), [], AlertState(), k=K)
    weighted = evaluate(
        [rule], PeriodCounts("W1", counts, weights={"refund": 900.0, "exchange": 100.0}), [], AlertState(), k=K
    )
    assert plain.fire == []  # (2 + 20) / 40 = 55%
    assert len(weighted.fire) == 1  # 0.9 * 10% + 0.1 * 100% = 19%
    assert weighted.fire[0].scope == "overall"


def test_alerts_of_a_removed_rule_resolve() -> None:
    first = evaluate([THRESHOLD], period("W1", refund=tickets(40, 4)), [], AlertState(), k=K)
    second = evaluate([], period("W2", refund=tickets(40, 4)), [], first.state, k=K)
    assert [n.alert_id for n in second.resolve] == ["refunds-floor/refund:W1:resolved"]
    assert "no longer configured" in second.resolve[0].text


def test_state_round_trips_through_json() -> None:
    baseline = [period(f"W{i}", refund=tickets(50, 40)) for i in (4, 3, 2, 1)]
    result = evaluate([DROP, THRESHOLD], period("W5", refund=tickets(50, 10)), baseline, AlertState(), k=K)
    restored = AlertState.from_dict(json.loads(json.dumps(result.state.to_dict())))
    assert restored == result.state


def test_counts_come_from_stored_trials_without_simulator_or_infra_errors() -> None:
    import datetime as dt

    from passhat.collector.alerts import counts_from_trials
    from passhat.collector.store import TrialRow

    at = dt.datetime(2026, 11, 23, tzinfo=dt.UTC)

    def trial(ticket: str, task_type: str, attempt: int, passed: bool, **errors: str) -> TrialRow:
        return TrialRow("run-1", ticket, task_type, attempt, passed, "agent_stop", at, 1.0, **errors)  # type: ignore[arg-type]

    trials = [
        trial("T1", "refund", 0, True),
        trial("T1", "refund", 1, False),
        trial("T1", "refund", 2, True, simulator_error="customer model timed out"),
        trial("T2", "refund", 0, True),
        trial("T3", "exchange", 0, False, infra_error="sandbox crashed"),
    ]
    counts = counts_from_trials("2026-W48", trials)
    assert set(counts.task_types) == {"refund"}
    assert list(counts.task_types["refund"].n) == [2, 1]  # type: ignore[arg-type]
    assert list(counts.task_types["refund"].c) == [1, 1]  # type: ignore[arg-type]


def test_tickets_with_fewer_than_k_usable_trials_are_left_out() -> None:
    # 30 complete tickets (all pass) and 30 tickets cut to 3 trials by simulator errors (cannot estimate pass^5).
    counts = TicketCounts(n=[K] * 30 + [3] * 30, c=[K] * 30 + [0] * 30)
    result = evaluate([THRESHOLD], period("W1", refund=counts), [], AlertState(), k=K)
    assert result.fire == []
    assert result.decisions[0].value == 1.0 and "30 tickets" in result.decisions[0].reason


def test_an_overall_drop_rule_compares_task_types_within_themselves() -> None:
    rule = AlertRule(name="overall", kind="drop", min_tickets=20, permutations=999)
    history = [period(f"W{i}", refund=tickets(40, 32), exchange=tickets(40, 36)) for i in (4, 3, 2, 1)]
    steady = evaluate(
        [rule], period("W5", refund=tickets(40, 31), exchange=tickets(40, 37)), history, AlertState(), k=K
    )
    assert steady.fire == []
    regressed = evaluate(
        [rule], period("W5", refund=tickets(40, 8), exchange=tickets(40, 36)), history, AlertState(), k=K
    )
    [alert] = regressed.fire
    assert alert.scope == "overall" and alert.alert_id == "overall:W5"
    assert alert.details["current_tickets"] == 80 and alert.details["baseline_tickets"] == 320
