"""The week-over-week trend: earlier periods' figures and this one's, each change with its interval."""

from __future__ import annotations

from dataclasses import replace

from passhat.collector.reliability import difference_interval
from passhat.collector.report._input import ReportInput, report_period
from passhat.collector.report._model import Figures, Interval, TrendPoint


def _change(
    now: float | None, now_ci: Interval | None, then: float | None, then_ci: Interval | None
) -> tuple[float | None, Interval | None]:
    """A change between two periods and its interval (None where either period lacks the figure or its interval)."""
    if now is None or then is None:
        return None, None
    if now_ci is None or then_ci is None:
        return now - then, None
    return now - then, difference_interval(now, now_ci, then, then_ci)


def period_trend(report_input: ReportInput, current: Figures, failed: float | None, tickets: int) -> list[TrendPoint]:
    """Earlier periods (oldest first) then this one; each change against the period before, with its interval."""
    rows = sorted(report_input.previous, key=lambda p: report_period(p.period).start)
    points: list[TrendPoint] = [
        TrendPoint(
            period=report_period(p.period).name, k=p.k, pass_at_1=p.pass_at_1, pass_at_k=p.pass_at_k,
            pass_hat_k=p.pass_hat_k, expected_failed_tickets_per_day=p.expected_failed_tickets_per_day,
            pass_at_1_change=None, pass_hat_k_change=None, agent=p.agent, agent_version=p.agent_version,
            pass_at_1_ci=p.pass_at_1_ci, pass_hat_k_ci=p.pass_hat_k_ci, tickets=p.tickets,
        )
        for p in rows
    ]  # fmt: skip
    points.append(
        TrendPoint(
            period=report_period(report_input.period).name, k=report_input.k, pass_at_1=current.pass_at_1,
            pass_at_k=current.pass_at_k, pass_hat_k=current.pass_hat_k, expected_failed_tickets_per_day=failed,
            pass_at_1_change=None, pass_hat_k_change=None, agent=report_input.agent,
            agent_version=report_input.agent_version, pass_at_1_ci=current.pass_at_1_ci,
            pass_hat_k_ci=current.pass_hat_k_ci, tickets=tickets,
        )
    )  # fmt: skip
    for index in range(1, len(points)):
        now, before = points[index], points[index - 1]
        at_1, at_1_ci = _change(now.pass_at_1, now.pass_at_1_ci, before.pass_at_1, before.pass_at_1_ci)
        # pass^k of a different k is a different quantity: no change is shown across a change of k.
        hat, hat_ci = (
            _change(now.pass_hat_k, now.pass_hat_k_ci, before.pass_hat_k, before.pass_hat_k_ci)
            if now.k == before.k
            else (None, None)
        )
        points[index] = replace(
            now, pass_at_1_change=at_1, pass_at_1_change_ci=at_1_ci, pass_hat_k_change=hat, pass_hat_k_change_ci=hat_ci
        )
    return points
