"""Sending a period's report to the channels `[report] send_to` names: email, Slack-compatible and generic webhooks.

Each channel gets the report once per period: a channel it has reached is skipped unless ``resend``. Every try
is retried like an alert (the `[alerts.retry]` policy) and stored beside the alert history (rule
`REPORT_RULE`), so `passhat alerts history` shows how each delivery went. A failure is logged and recorded; it is
never raised to the caller, so the scheduler carries on.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from passhat.collector.alerts import (
    AlertLog,
    Channel,
    DeliveryAttempt,
    DeliveryError,
    EmailChannel,
    RetryPolicy,
    SlackChannel,
    WebhookChannel,
    failure_text,
    outcomes,
    retry_line,
    retrying,
)
from passhat.collector.report import (
    DEFAULT_WEBHOOK_MAX_BYTES,
    OpenAlertLine,
    Report,
    ReportDigest,
    UnreplayedReport,
    report_email,
    slack_report,
    webhook_report,
)
from passhat.collector.store import Store

log = logging.getLogger("passhat.report")


@dataclass(frozen=True)
class ReportDelivery:
    """Where each period's report goes (the channels `[report] send_to` names), retried with ``retry``."""

    channels: Sequence[Channel] = ()
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    ui_url: str | None = None  # the web UI's address: messages link to the run's page there
    webhook_max_bytes: int = DEFAULT_WEBHOOK_MAX_BYTES


@dataclass(frozen=True)
class DeliveryOutcome:
    """What sending one period's report did: each channel's final outcome, the channels skipped, every try."""

    period: str
    delivery_id: str | None
    sent: dict[str, str]  # channel -> "ok" or the last error
    skipped: list[str]  # channels that had this period's report already
    attempts: list[DeliveryAttempt]
    error: str | None = None  # the delivery could not run at all (e.g. the store failed)

    @property
    def ok(self) -> bool:
        return self.error is None and all(outcome == "ok" for outcome in self.sent.values())

    def to_dict(self) -> dict[str, object]:
        return {
            "period": self.period,
            "delivery_id": self.delivery_id,
            "sent": self.sent,
            "skipped": self.skipped,
            "attempts": [a.to_dict() for a in self.attempts],
            "error": self.error,
        }


def report_link(ui_url: str | None, run_id: str) -> str | None:
    """The run's page in the web UI (``<ui_url>runs/<run id>``), the UI's overview without a run, or None."""
    if not ui_url:
        return None
    base = ui_url if ui_url.endswith("/") else ui_url + "/"
    return f"{base}runs/{run_id}" if run_id else base


def open_alert_lines(store: Store, project: str) -> list[OpenAlertLine]:
    """The alerts open now (in the saved evaluation state), each with the latest text sent about it."""
    alerts = AlertLog(store, project)
    state = alerts.load_state()
    if not state.open:
        return []
    latest: dict[str, str] = {}
    for event in alerts.notices(kinds=("fired",), limit=2000):  # newest first
        details = event.payload.get("details") or {}
        latest.setdefault(str(details.get("updates", event.alert_id)), event.message)
    return [
        OpenAlertLine(
            rule=opened.rule,
            scope=opened.task_type or "overall",
            since=opened.fired_period,
            message=latest.get(opened.alert_id, f"{opened.rule} fired in {opened.fired_period}"),
        )
        for opened in sorted(state.open.values(), key=lambda a: (a.fired_period, a.rule, a.task_type or ""))
    ]


def _sender(channel: Channel, digest: ReportDigest, delivery: ReportDelivery) -> Callable[[], None]:
    """One send of the report to ``channel``, its message rendered now (a rendering error fails this channel)."""
    if isinstance(channel, EmailChannel):
        message = report_email(digest, channel.sender, channel.recipients)
        return lambda: channel.send_message(message)
    if isinstance(channel, SlackChannel):
        slack = slack_report(digest)
        return lambda: channel.post(slack)
    if isinstance(channel, WebhookChannel):
        body = webhook_report(digest, max_bytes=delivery.webhook_max_bytes)
        return lambda: channel.post(body)
    raise DeliveryError(
        f"a {channel.type} channel of type {type(channel).__name__} cannot carry a report", retryable=False
    )


def _failed(delivery_id: str, channel: Channel, error: str) -> DeliveryAttempt:
    return DeliveryAttempt(
        alert_id=delivery_id, channel=channel.name, channel_type=channel.type, attempt=1, ok=False, error=error,
        retryable=False, duration_ms=0.0, at=dt.datetime.now(dt.UTC),
    )  # fmt: skip


def send_report(
    store: Store,
    project: str,
    report: Report | UnreplayedReport,
    delivery: ReportDelivery,
    *,
    run_id: str,
    trigger: str,
    resend: bool = False,
    on_attempt: Callable[[DeliveryAttempt], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> DeliveryOutcome:
    """Send a period's report to the delivery's channels (those it has not reached yet, unless ``resend``).

    Never raises for a channel's failure: each try is stored as it happens, then the delivery with every
    channel's outcome; a failed channel is logged. ``trigger`` says what sent it (``run``, ``cli``)."""
    period = report.period
    alerts = AlertLog(store, project)
    reached = set() if resend else alerts.report_delivered_to(period)
    skipped = sorted(c.name for c in delivery.channels if c.name in reached)
    chosen = [c for c in delivery.channels if c.name not in reached]
    if not chosen:
        return DeliveryOutcome(period, None, {}, skipped, [])
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    delivery_id = f"report:{period}:{stamp}:{uuid.uuid4().hex[:8]}"
    digest = ReportDigest(
        report=report,
        project=project,
        open_alerts=open_alert_lines(store, project),
        link=report_link(delivery.ui_url, run_id if isinstance(report, Report) else ""),
    )

    def record(attempt: DeliveryAttempt) -> None:
        alerts.record_report_attempt(delivery_id, period, attempt)
        if on_attempt is not None:  # the caller says how the tries went (`passhat report --send` prints them)
            on_attempt(attempt)
        elif not attempt.ok:
            retry = retry_line(attempt, delivery.retry)
            said = retry if retry is not None else f"{attempt.channel} {failure_text(attempt)}"
            log.warning("passhat: sending the report of %s to %s", period, said)

    attempts: list[DeliveryAttempt] = []
    for channel in chosen:
        try:
            action = _sender(channel, digest, delivery)
        except Exception as exc:  # a message that cannot be rendered fails this channel, not the others
            failed = _failed(delivery_id, channel, f"could not render the report for {channel.type}: {exc}")
            record(failed)
            attempts.append(failed)
            continue
        attempts.extend(retrying(delivery_id, channel, action, delivery.retry, on_attempt=record, sleep=sleep))
    alerts.record_report_delivery(
        delivery_id, period, attempts, run_id=run_id, trigger=trigger, resend=resend, skipped=skipped
    )
    return DeliveryOutcome(period, delivery_id, outcomes(attempts), skipped, attempts)


def send_report_safely(
    store: Store,
    project: str,
    report: Report | UnreplayedReport,
    delivery: ReportDelivery,
    *,
    run_id: str,
    trigger: str,
) -> DeliveryOutcome:
    """`send_report` for the loop: anything that goes wrong is logged and returned, never raised."""
    try:
        return send_report(store, project, report, delivery, run_id=run_id, trigger=trigger)
    except Exception as exc:  # the scheduler must carry on whatever a channel or the store does
        log.exception("passhat: sending the report of %s failed", report.period)
        return DeliveryOutcome(report.period, None, {}, [], [], error=f"{type(exc).__name__}: {exc}")
