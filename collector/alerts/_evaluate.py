"""Evaluating alert rules on one period: a pure function of rules, counts and state (no store, no clock)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from passhat.collector.alerts._types import (
    EVERY_TASK_TYPE,
    EXCLUDED_KEPT,
    AlertNotice,
    AlertRule,
    AlertState,
    Evaluation,
    OpenAlert,
    PeriodCounts,
    RuleDecision,
)
from passhat.collector.reliability import (
    FloatArray,
    IntArray,
    adjust_p_values,
    as_counts,
    counted,
    detect_drop,
    pass_hat_k_array,
    settled,
)


@dataclass(frozen=True)
class _Measure:
    """What a rule saw for its scope this period."""

    tickets: int
    value: float | None  # pass^k of the current period
    bad: bool  # the rule's condition holds (below threshold / dropped)
    recovered: bool  # clearly back to normal (resolves an open alert)
    reason: str
    details: dict[str, Any]
    p_value: float | None = None  # drop rules: the test's own p-value, before correction across task types


def _key(rule: str, task_type: str | None) -> str:
    return rule if task_type is None else f"{rule}/{task_type}"


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{100.0 * value:.1f}%"


@dataclass(frozen=True)
class _Gathered:
    """The tickets of one scope in one period whose pass^k is settled, and how many were left out."""

    n: IntArray
    c: IntArray
    labels: list[str]
    unsettled: int


def _gather(period: PeriodCounts, task_type: str | None, k: int) -> _Gathered:
    """The counts of one task type, or of all task types with their labels as strata.

    A ticket counts when its pass^k is settled: k usable trials, or (curtailed replay) one pass and one failure.
    Tickets short of that (e.g. after simulator errors were left out) cannot estimate pass^k: they are left out
    and counted in ``unsettled``, which every decision reports.
    """
    names = sorted(period.task_types) if task_type is None else [task_type]
    ns: list[IntArray] = []
    cs: list[IntArray] = []
    labels: list[str] = []
    unsettled = 0
    for name in names:
        counts = period.task_types.get(name)
        if counts is None:
            continue
        n, c = as_counts(counts.n, counts.c)
        usable = settled(n, c, k) if n.size else np.zeros(0, dtype=bool)
        unsettled += int(np.count_nonzero(~usable))
        n, c = n[usable], c[usable]
        if n.size == 0:
            continue
        ns.append(n)
        cs.append(c)
        labels.extend([name] * n.size)
    if not ns:
        return _Gathered(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), [], unsettled)
    return _Gathered(np.concatenate(ns), np.concatenate(cs), labels, unsettled)


def _weighted_mean(values: FloatArray, labels: list[str], weights: dict[str, float] | None) -> float:
    if weights is None:
        return float(values.mean())
    by_label = np.array(labels)
    total = 0.0
    mass = 0.0
    for name in sorted(set(labels)):
        w = max(float(weights.get(name, 0.0)), 0.0)
        total += w * float(values[by_label == name].mean())
        mass += w
    return total / mass if mass > 0 else float(values.mean())


def _threshold(rule: AlertRule, current: PeriodCounts, task_type: str | None, k: int) -> _Measure:
    assert rule.threshold is not None  # enforced by AlertRule
    got = _gather(current, task_type, k)
    n, c, labels = got.n, got.c, got.labels
    if n.size < rule.min_tickets:
        reason = f"too few tickets to decide: {n.size} (need {rule.min_tickets}){_left_out(got.unsettled)}"
        return _Measure(int(n.size), None, False, False, reason, {"unsettled_tickets": got.unsettled})
    weights = dict(current.weights) if (current.weights is not None and task_type is None) else None
    value = _weighted_mean(pass_hat_k_array(n, c, k, curtailed=True), labels, weights)
    details = {
        "k": k,
        "pass_hat_k": value,
        "threshold": rule.threshold,
        "tickets": int(n.size),
        "unsettled_tickets": got.unsettled,
    }
    bad = value < rule.threshold
    recovered = value >= rule.threshold + rule.resolve_margin
    relation = "below" if bad else "at or above"
    reason = (
        f"pass^{k} {_fmt(value)} is {relation} the threshold {_fmt(rule.threshold)} ({counted(int(n.size), 'ticket')}"
        f"{_left_out(got.unsettled)})"
    )
    return _Measure(int(n.size), value, bad, recovered, reason, details)


def _left_out(unsettled: int) -> str:
    return f"; {counted(unsettled, 'ticket')} left out with too few usable trials" if unsettled else ""


def _pooled(parts: Sequence[_Gathered]) -> _Gathered:
    if not parts:
        return _Gathered(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), [], 0)
    return _Gathered(
        np.concatenate([p.n for p in parts]),
        np.concatenate([p.c for p in parts]),
        [label for p in parts for label in p.labels],
        sum(p.unsettled for p in parts),
    )


def _drop(
    rule: AlertRule,
    current: PeriodCounts,
    baseline: Sequence[PeriodCounts],
    excluded: tuple[str, ...],
    task_type: str | None,
    k: int,
    seed: int,
    *,
    is_open: bool,
    family: int = 1,
) -> _Measure:
    earlier = [p for p in baseline if p.period != current.period]
    periods = [p for p in earlier if p.period not in excluded][: rule.baseline_periods]
    now = _gather(current, task_type, k)
    base = _pooled([_gather(p, task_type, k) for p in periods])
    weights = dict(current.weights) if (current.weights is not None and task_type is None) else None
    permutations = _permutations(rule, family)
    test = detect_drop(
        now.n, now.c, base.n, base.c, k, confidence=rule.confidence, min_tickets=rule.min_tickets,
        min_drop=rule.min_drop, permutations=permutations, current_strata=now.labels,
        baseline_strata=base.labels, weights=weights, seed=seed,
    )  # fmt: skip
    details = {
        **test.to_dict(),
        "baseline_periods": [p.period for p in periods],
        "unsettled_tickets": now.unsettled,
        "baseline_unsettled_tickets": base.unsettled,
    }
    recovered = False
    if is_open and test.p_value is not None and not test.dropped:
        # Evidence of recovery: this period is above the periods in alert, beyond noise at resolve_confidence.
        # "No longer significant" is not enough: at small samples a real, persistent drop often looks like that.
        alerting = _pooled([_gather(p, task_type, k) for p in earlier if p.period in excluded])
        if alerting.n.size:
            back = detect_drop(
                alerting.n, alerting.c, now.n, now.c, k, confidence=rule.resolve_confidence, min_tickets=1,
                permutations=permutations, current_strata=alerting.labels, baseline_strata=now.labels,
                weights=weights, seed=seed,
            )  # fmt: skip
            recovered = back.dropped
            details["recovery_p_value"] = back.p_value
    reason = test.reason + _left_out(now.unsettled)
    return _Measure(
        test.current_tickets, test.current_pass_hat_k, test.dropped, recovered, reason, details, test.p_value
    )


def _permutations(rule: AlertRule, family: int) -> int:
    """Permutations enough for a corrected family: Holm's smallest p-value must reach α / (task types)."""
    if rule.correction == "none" or family < 2:
        return rule.permutations
    return max(rule.permutations, math.ceil(2.0 * family / (1.0 - rule.confidence)) - 1)


def _corrected(rule: AlertRule, measures: dict[str | None, _Measure]) -> dict[str | None, _Measure]:
    """Drop decisions of one rule's task types, corrected as one family (Holm by default)."""
    tested = {scope: m for scope, m in measures.items() if m.p_value is not None}
    if rule.kind != "drop" or rule.correction == "none" or len(tested) < 2:
        return measures
    adjusted = adjust_p_values([float(m.p_value or 0.0) for m in tested.values()], rule.correction)
    alpha = 1.0 - rule.confidence
    out = dict(measures)
    for (scope, m), p in zip(tested.items(), adjusted, strict=True):
        drop = m.details.get("drop")
        bad = bool(p <= alpha + 1e-12) and drop is not None and drop >= rule.min_drop
        family = f"{rule.correction} across {len(tested)} task types: adjusted p = {p:.3g}"
        details = {**m.details, "adjusted_p_value": float(p), "correction": rule.correction, "family": len(tested)}
        out[scope] = _Measure(m.tickets, m.value, bad, m.recovered, f"{m.reason} ({family})", details, m.p_value)
    return out


def _fired_text(rule: AlertRule, task_type: str | None, period: str, m: _Measure, k: int) -> tuple[str, str]:
    scope = task_type if task_type is not None else "overall"
    if rule.kind == "threshold":
        title = f"pass^{k} of {scope} {_fmt(m.value)} ({counted(m.tickets, 'ticket')}), below {_fmt(rule.threshold)}"
        text = (
            f"pass^{k} of {scope} is {_fmt(m.value)} in {period}, below the {_fmt(rule.threshold)} threshold "
            f"({counted(m.tickets, 'ticket')}; rule {rule.name})."
        )
        return title, text
    d = m.details
    title = (
        f"pass^{k} of {scope} dropped to {_fmt(d['current_pass_hat_k'])} ({counted(d['current_tickets'], 'ticket')}) "
        f"from {_fmt(d['baseline_pass_hat_k'])} ({counted(d['baseline_tickets'], 'ticket')})"
    )
    corrected = (
        f", {d['correction']}-adjusted across {d['family']} task types p = {d['adjusted_p_value']:.3g}"
        if "adjusted_p_value" in d
        else ""
    )
    text = (
        f"pass^{k} of {scope} dropped from {_fmt(d['baseline_pass_hat_k'])} to {_fmt(d['current_pass_hat_k'])} "
        f"in {period} (permutation test p = {d['p_value']:.3g}{corrected}, {100 * rule.confidence:g}% confidence; "
        f"{counted(d['current_tickets'], 'ticket')} vs {d['baseline_tickets']} in "
        f"{counted(len(d['baseline_periods']), 'baseline period')}; rule {rule.name})."
    )
    return title, text


def _scopes(rule: AlertRule, current: PeriodCounts, state: AlertState) -> list[str | None]:
    if rule.task_type is None:
        return [None]
    if rule.task_type != EVERY_TASK_TYPE:
        return [rule.task_type]
    seen = set(current.task_types)
    seen |= {a.task_type for a in state.open.values() if a.rule == rule.name and a.task_type is not None}
    return [*sorted(seen)]


def evaluate(
    rules: Sequence[AlertRule],
    current: PeriodCounts,
    baseline: Sequence[PeriodCounts],
    state: AlertState,
    *,
    k: int,
    seed: int = 0,
) -> Evaluation:
    """Decide which alerts fire and which resolve in ``current``, given the earlier periods and the state.

    ``baseline`` lists earlier periods, newest first; a drop rule uses the newest ``baseline_periods`` of them
    that were not in alert for its scope, so pass more than ``baseline_periods`` (e.g. the last year) to keep a
    long regression measured against the weeks before it. Evaluating a period already evaluated returns
    nothing new.
    """
    if state.last_period == current.period:
        return Evaluation(fire=[], resolve=[], state=state, decisions=[], repeated=True)
    open_alerts = dict(state.open)
    cooldown = dict(state.cooldown)
    excluded = {key: tuple(v) for key, v in state.excluded.items()}
    fire: list[AlertNotice] = []
    resolve: list[AlertNotice] = []
    decisions: list[RuleDecision] = []
    just_resolved: set[str] = set()

    for rule in rules:
        measures: dict[str | None, _Measure] = {}
        scopes = _scopes(rule, current, state)
        for task_type in scopes:
            key = _key(rule.name, task_type)
            if rule.kind == "threshold":
                measures[task_type] = _threshold(rule, current, task_type, k)
            else:
                measures[task_type] = _drop(
                    rule, current, baseline, excluded.get(key, ()), task_type, k, seed,
                    is_open=key in open_alerts, family=len(scopes),
                )  # fmt: skip
        for task_type, m in _corrected(rule, measures).items():
            key = _key(rule.name, task_type)
            is_open = key in open_alerts
            if m.value is None:
                decisions.append(RuleDecision(rule.name, task_type, "insufficient", m.reason))
                continue
            if is_open and m.recovered:
                opened = open_alerts.pop(key)
                scope = task_type if task_type is not None else "overall"
                resolve.append(
                    AlertNotice(
                        alert_id=f"{opened.alert_id}:resolved",
                        kind="resolved",
                        rule=rule.name,
                        task_type=task_type,
                        period=current.period,
                        severity=rule.severity,
                        title=f"pass^{k} of {scope} recovered: {_fmt(m.value)} ({counted(m.tickets, 'ticket')})",
                        text=(
                            f"pass^{k} of {scope} recovered in {current.period}: {_fmt(m.value)} "
                            f"(alert {opened.alert_id} fired in {opened.fired_period}). {m.reason}."
                        ),
                        details={**m.details, "fired_alert_id": opened.alert_id},
                        channels=rule.channels,
                    )
                )
                if rule.cooldown_periods > 0:
                    cooldown[key] = rule.cooldown_periods
                    just_resolved.add(key)
                decisions.append(RuleDecision(rule.name, task_type, "resolved", m.reason, m.value))
                continue
            if is_open or m.bad:
                excluded[key] = (*excluded.get(key, ()), current.period)[-EXCLUDED_KEPT:]
            if is_open:
                decisions.append(RuleDecision(rule.name, task_type, "still_open", m.reason, m.value))
            elif m.bad and cooldown.get(key, 0) > 0:
                reason = f"{m.reason}; in cooldown for {counted(cooldown[key], 'more period', 'more periods')}"
                decisions.append(RuleDecision(rule.name, task_type, "cooldown", reason, m.value))
            elif m.bad:
                alert_id = f"{key}:{current.period}"
                title, text = _fired_text(rule, task_type, current.period, m, k)
                notice = AlertNotice(
                    alert_id, "fired", rule.name, task_type, current.period, rule.severity, title, text,
                    m.details, rule.channels,
                )  # fmt: skip
                fire.append(notice)
                open_alerts[key] = OpenAlert(alert_id, rule.name, task_type, current.period, m.details)
                decisions.append(RuleDecision(rule.name, task_type, "fired", m.reason, m.value))
            else:
                decisions.append(RuleDecision(rule.name, task_type, "quiet", m.reason, m.value))

    # Alerts of rules no longer configured resolve, so none stays open forever.
    names = {rule.name for rule in rules}
    for key, opened in list(open_alerts.items()):
        if opened.rule not in names:
            del open_alerts[key]
            resolve.append(
                AlertNotice(
                    f"{opened.alert_id}:resolved", "resolved", opened.rule, opened.task_type, current.period,
                    "info", f"alert rule {opened.rule} removed",
                    f"Alert {opened.alert_id} is closed: its rule {opened.rule} is no longer configured.",
                )
            )  # fmt: skip

    # A cooldown counts periods after the one that resolved the alert.
    cooldown = {
        key: (left if key in just_resolved else left - 1)
        for key, left in cooldown.items()
        if key in just_resolved or left > 1
    }
    new_state = AlertState(last_period=current.period, open=open_alerts, cooldown=cooldown, excluded=excluded)
    return Evaluation(fire=fire, resolve=resolve, state=new_state, decisions=decisions)
