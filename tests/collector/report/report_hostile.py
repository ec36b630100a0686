"""A small period whose user text is hostile: task types and the agent's name carry markup, for escaping tests."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools

from passhat.collector.report import (
    DailyTraffic,
    PeriodFigures,
    Report,
    ReportDigest,
    ReportInput,
    TrialResult,
    build_report,
)

EVIL_TASK = "refund<script>alert('task')</script>"
AMP_TASK = "exchange&swap"
EVIL_AGENT = '<img src=x onerror="alert(1)">bot'
EVIL_ALERT = "pass^4 of refund <b>dropped</b> & <!channel> was paged"
MONDAY = dt.date(2026, 11, 23)


def _ticket(task_type: str, ticket: str, outcomes: list[bool]) -> list[TrialResult]:
    return [
        TrialResult(
            domain="retail", task_type=task_type, ticket_id=ticket, attempt=attempt, passed=ok,
            signature=None if ok else "wrong_entity", termination_reason="customer_stop", changes=[],
            final_response="done",
        )
        for attempt, ok in enumerate(outcomes, start=1)
    ]  # fmt: skip


def hostile_report(*, simulated: bool = False, with_previous: bool = True) -> Report:
    """Three task types (two with markup in their names), k = 4, a week of traffic, one earlier period."""
    report = _hostile_report()
    if not with_previous:  # as if the period had no earlier one: the trend is this period alone
        first = dataclasses.replace(report.trend[-1], pass_at_1_change=None, pass_hat_k_change=None)
        report = dataclasses.replace(report, trend=[first])
    return dataclasses.replace(report, simulated=simulated)


@functools.cache
def _hostile_report() -> Report:
    trials: list[TrialResult] = []
    for i in range(6):
        trials += _ticket(EVIL_TASK, f"T-r{i}", [True, i % 2 == 0, True, i % 3 != 0])
        trials += _ticket(AMP_TASK, f"T-e{i}", [True, True, i != 1, True])
        trials += _ticket("address_change", f"T-a{i}", [True, True, True, True])
    traffic = [
        DailyTraffic("retail", name, MONDAY + dt.timedelta(days=day), tickets)
        for day in range(7)
        for name, tickets in ((EVIL_TASK, 120), (AMP_TASK, 60), ("address_change", 30))
    ]
    previous = [PeriodFigures("2026-W47", k=4, pass_at_1=0.9, pass_hat_k=0.6, agent=EVIL_AGENT)]
    return build_report(
        ReportInput(
            period="2026-W48",
            k=4,
            trials=trials,
            traffic=traffic,
            previous=previous,
            agent=EVIL_AGENT,
            run_id="run-123",
            run_role="official",
        )
    )


def hostile_digest(
    report: Report, *, link: str | None = "https://passhat.example.test/ui/runs/run-123"
) -> ReportDigest:
    from passhat.collector.report import OpenAlertLine

    return ReportDigest(
        report=report,
        project="shop",
        open_alerts=[OpenAlertLine("refund-drop", EVIL_TASK, "2026-W47", EVIL_ALERT)],
        link=link,
    )
