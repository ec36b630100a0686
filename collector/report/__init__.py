"""The weekly reliability report: build its figures from a period's trials and traffic, render HTML, JSON, Markdown."""

from passhat.collector.report._build import MIN_EXTRAPOLATION_TICKETS, build_report
from passhat.collector.report._digest import (
    DEFAULT_WEBHOOK_MAX_BYTES,
    OpenAlertLine,
    ReportDigest,
    least_reliable,
)
from passhat.collector.report._email import email_html, email_subject, email_text, report_email, report_html
from passhat.collector.report._fidelity import ProductionGrade, TaskTypeFidelity
from passhat.collector.report._hooks import mrkdwn_escape, report_summary, slack_report, webhook_report
from passhat.collector.report._html import render_html
from passhat.collector.report._input import (
    AlertFired,
    BackendChange,
    DailyTraffic,
    PeriodFigures,
    ReportInput,
    ReportInputError,
    TrialResult,
    period_days,
)
from passhat.collector.report._markdown import render_markdown
from passhat.collector.report._model import Report
from passhat.collector.report._schema import report_schema
from passhat.collector.report._unreplayed import UnreplayedReport, reason_counts, write_unreplayed_report
from passhat.collector.report._write import ReportWriteError, render_json, write_report
from passhat.collector.store import NotReplayable

__all__ = [
    "DEFAULT_WEBHOOK_MAX_BYTES",
    "MIN_EXTRAPOLATION_TICKETS",
    "AlertFired",
    "BackendChange",
    "DailyTraffic",
    "NotReplayable",
    "OpenAlertLine",
    "PeriodFigures",
    "ProductionGrade",
    "Report",
    "ReportDigest",
    "ReportInput",
    "ReportInputError",
    "ReportWriteError",
    "TaskTypeFidelity",
    "TrialResult",
    "UnreplayedReport",
    "build_report",
    "email_html",
    "email_subject",
    "email_text",
    "least_reliable",
    "mrkdwn_escape",
    "period_days",
    "reason_counts",
    "render_html",
    "render_json",
    "render_markdown",
    "report_email",
    "report_html",
    "report_schema",
    "report_summary",
    "slack_report",
    "webhook_report",
    "write_report",
    "write_unreplayed_report",
]
