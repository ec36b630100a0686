"""A period's report as a message: what every message says (headline, least reliable task types, what changed,
open alerts, the simulated-agent note), shared by the email (`_email`) and the webhooks (`_hooks`).

Pure rendering: the loop decides when to send, and the alert channels carry it. Every figure keeps its interval
and sample size; every piece of user text is escaped by the renderer for where it goes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from passhat.collector.reliability import counted
from passhat.collector.report._format import agent_text, ci, paired_interval, pct, points, volume, volume_interval
from passhat.collector.report._model import Figures, Report, TaskTypeReport
from passhat.collector.report._unreplayed import UnreplayedReport

#: The generic webhook sends the whole report.json up to this size, else its summary and a link.
DEFAULT_WEBHOOK_MAX_BYTES = 256 * 1024


@dataclass(frozen=True)
class OpenAlertLine:
    """An alert still open when the report is sent: its rule, scope, the period it fired in, its message."""

    rule: str
    scope: str
    since: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "scope": self.scope, "since": self.since, "message": self.message}


@dataclass(frozen=True)
class ReportDigest:
    """What a report message says beyond the report itself: the project, open alerts, a link to the web UI."""

    report: Report | UnreplayedReport
    project: str = ""
    open_alerts: Sequence[OpenAlertLine] = ()
    link: str | None = None  # the run's page in the web UI, when one is configured

    @property
    def period(self) -> str:
        return self.report.period


def attachment_name(period: str) -> str:
    """The file name of the attached report.html."""
    return f"passhat-report-{period}.html"


def least_reliable(report: Report, count: int) -> list[TaskTypeReport]:
    """The ``count`` task types with the lowest pass^k (then pass@1, then the busier one)."""
    return sorted(
        report.task_types,
        key=lambda t: (t.figures.pass_hat_k or 0.0, t.figures.pass_at_1 or 0.0, -t.daily_volume, t.name),
    )[:count]


def headline_figures(report: Report) -> tuple[Figures, str]:
    """The figures to lead with, and what they are: traffic-weighted when there is traffic, else per ticket."""
    if report.overall.weighted.pass_hat_k is not None:
        return report.overall.weighted, "traffic-weighted"
    return report.overall.unweighted, "mean over sampled tickets (no traffic recorded)"


def headline_lines(report: Report) -> list[str]:
    """The headline as lines of text: pass^k, pass@1, pass@k with intervals, tickets, failed tickets a day."""
    figures, how = headline_figures(report)
    k = report.k
    lines = [
        f"pass^{k} {pct(figures.pass_hat_k)} {ci(figures.pass_hat_k_ci)}",
        f"pass@1 {pct(figures.pass_at_1)} {ci(figures.pass_at_1_ci)}",
        f"pass@{k} {pct(figures.pass_at_k)} {ci(figures.pass_at_k_ci)}",
    ]
    tickets, task_types = (
        counted(report.overall.tickets_sampled, "ticket"),
        counted(len(report.task_types), "task type"),
    )
    sample = f"{tickets} sampled over {task_types}, {how}"
    failed = report.overall.expected_failed_tickets_per_day
    if failed is not None:
        lines.append(
            f"expected failed tickets per day {volume(failed)} "
            f"{volume_interval(report.overall.expected_failed_tickets_per_day_ci)}"
        )
    return [*lines, sample]


def _within(interval: tuple[float, float] | None) -> str:
    """A change's interval, right after the change ("" when an earlier period recorded none)."""
    return "" if interval is None else f", change interval {paired_interval(list(interval))}"


def change_lines(report: Report) -> list[str]:
    """What changed since the period before (from the report's trend), as short lines."""
    if len(report.trend) < 2:
        return ["No earlier period to compare with."]
    before, now = report.trend[-2], report.trend[-1]
    lines = [
        f"pass@1 {pct(now.pass_at_1)}, {points(now.pass_at_1_change)} since {before.period} ({pct(before.pass_at_1)})"
        f"{_within(now.pass_at_1_change_ci)}"
    ]
    if now.pass_hat_k_change is not None:
        lines.append(
            f"pass^{now.k} {pct(now.pass_hat_k)}, {points(now.pass_hat_k_change)} since {before.period} "
            f"({pct(before.pass_hat_k)}){_within(now.pass_hat_k_change_ci)}"
        )
    else:
        lines.append(f"pass^{now.k} not compared: {before.period} measured pass^{before.k}")
    if now.expected_failed_tickets_per_day is not None and before.expected_failed_tickets_per_day is not None:
        lines.append(
            f"expected failed tickets per day {volume(now.expected_failed_tickets_per_day)} "
            f"(was {volume(before.expected_failed_tickets_per_day)})"
        )
    then, current = agent_text(before.agent, before.agent_version), agent_text(now.agent, now.agent_version)
    if before.agent and now.agent and then != current:
        lines.append(f"agent changed: {then} -> {current}")
    if report.alerts:
        lines.append(f"{counted(len(report.alerts), 'alert notice')} in {report.period}")
    return lines


def simulated_text(report: Report | UnreplayedReport) -> str:
    if isinstance(report, UnreplayedReport) or not report.simulated:
        return ""
    agent = f" ({report.agent})" if report.agent else ""
    return (
        f"Simulated agent: these figures come from a simulated agent{agent}, not from your production agent. "
        "They show how the report reads, not how your agent performs."
    )
