"""A period's report reaches real local receivers: email over STARTTLS (aiosmtpd), Slack-compatible and generic
webhooks on 127.0.0.1; once per period and channel, retried like alerts, recorded beside the alert history, and
never in the way of the loop: run_period and the scheduler carry on when a receiver is down."""

from __future__ import annotations

import asyncio
import datetime as dt
import email
import email.policy
import email.utils
import html
import logging
import pathlib
import re
import time
from email.message import EmailMessage

import pytest

from passhat.collector.alerts import (
    AlertLog,
    AlertNotice,
    AlertState,
    EmailChannel,
    OpenAlert,
    RetryPolicy,
    SlackChannel,
    WebhookChannel,
)
from passhat.collector.config import PasshatConfig
from passhat.collector.loop import ReportDelivery, Scheduler, agent_spec, run_period, send_report
from passhat.collector.replay import ReplaySettings
from passhat.collector.report import ReportDigest, email_subject, render_html
from passhat.collector.store import Store, open_store, parse_period
from tests.collector.alerts.receivers import (
    Certificate,
    Mailbox,
    Receiver,
    certificate,
    free_port,
    mailbox,
    receiver,
    store,
    tls_mailbox,
)
from tests.collector.report.report_hostile import EVIL_AGENT, EVIL_ALERT, EVIL_TASK, hostile_report

from .report_traffic import copy_store, production_traffic

__all__ = ["certificate", "mailbox", "receiver", "store", "tls_mailbox"]

FAST = RetryPolicy(attempts=3, backoff_seconds=0.01, multiplier=2.0, max_backoff_seconds=0.05)
W40 = parse_period("2026-W40")
DAY = parse_period("2026-11-29")


def _dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}/nobody"


def _message(box: Mailbox, index: int = 0) -> EmailMessage:
    content = box.messages[index].content
    assert isinstance(content, bytes)
    parsed = email.message_from_bytes(content, policy=email.policy.default)
    assert isinstance(parsed, EmailMessage)
    return parsed


def test_the_email_arrives_over_starttls_with_html_text_and_the_report_attached(
    tls_mailbox: Mailbox, certificate: Certificate, store: Store
) -> None:
    report = hostile_report()
    mail = EmailChannel(
        "team", tls_mailbox.host, "passhat@example.test", ("team@example.test",), port=tls_mailbox.port,
        username="alerts", password="s3cret", starttls=True, ca_file=str(certificate.cert),
    )  # fmt: skip
    delivery = ReportDelivery([mail], FAST, ui_url="https://passhat.example.test/ui")
    outcome = send_report(store, "shop", report, delivery, run_id="run-123", trigger="run")
    assert outcome.sent == {"team": "ok"} and outcome.ok
    [envelope] = tls_mailbox.messages
    assert envelope.rcpt_tos == ["team@example.test"]
    message = _message(tls_mailbox)
    assert message["Subject"].startswith("[passhat] shop report 2026-W48: pass^4 ")
    assert message.get_content_type() == "multipart/mixed"
    text = message.get_body(preferencelist=("plain",))
    body = message.get_body(preferencelist=("html",))
    assert text is not None and body is not None
    plain, rich = text.get_content(), body.get_content()
    assert f"retail/{EVIL_TASK}" in plain and "https://passhat.example.test/ui/runs/run-123" in plain
    assert html.escape(f"retail/{EVIL_TASK}") in rich and html.escape(EVIL_AGENT) in rich
    assert "<script>" not in rich and "<img" not in rich
    assert 'href="https://passhat.example.test/ui/runs/run-123"' in rich
    [attachment] = list(message.iter_attachments())
    assert attachment.get_filename() == "passhat-report-2026-W48.html"
    assert attachment.get_content_type() == "text/html"
    assert attachment.get_payload(decode=True) == render_html(report).encode("utf-8")


def test_the_email_has_date_and_message_id_and_its_subject_unfolds_as_written(mailbox: Mailbox, store: Store) -> None:
    """At some lengths Python's folding left "[a, b]  ±h" (two spaces) in the subject: each project name moves the
    fold."""
    mail = EmailChannel("team", mailbox.host, "passhat <reports@example.test>", ("t@example.test",), port=mailbox.port)
    report = hostile_report()
    projects = [f"shop{'-' * n}x" for n in range(12)]
    for project in projects:
        store.ensure_project(project)
        assert send_report(store, project, report, ReportDelivery([mail], FAST), run_id="r", trigger="cli").ok
    sent = [_message(mailbox, i) for i in range(len(projects))]
    assert [m["Subject"] for m in sent] == [email_subject(ReportDigest(report, project=p)) for p in projects]
    assert not any("  " in m["Subject"] for m in sent)
    for message in sent:
        assert email.utils.parsedate_to_datetime(message["Date"]).utcoffset() == dt.timedelta(0)
        assert message["Message-ID"].endswith("@example.test>")
    assert len({m["Message-ID"] for m in sent}) == len(sent)


def test_slack_gets_the_escaped_summary_and_the_webhook_the_report_json(receiver: Receiver, store: Store) -> None:
    report = hostile_report()
    slack = SlackChannel("chat", receiver.url.replace("/hook", "/slack"))
    hook = WebhookChannel("ops", receiver.url, headers={"Authorization": "Bearer t0k3n"})
    outcome = send_report(store, "shop", report, ReportDelivery([slack, hook], FAST), run_id="run-123", trigger="run")
    assert outcome.sent == {"chat": "ok", "ops": "ok"}
    by_path = {r["path"]: r for r in receiver.requests}
    blocks = by_path["/slack"]["json"]["blocks"]
    mrkdwn = "\n".join(b["text"]["text"] for b in blocks if b["type"] == "section")
    assert "<script>" not in mrkdwn and "&lt;script&gt;" in mrkdwn
    assert mrkdwn.count("\n• ") == 3  # the three least reliable task types
    posted = by_path["/hook"]
    assert posted["headers"]["Authorization"] == "Bearer t0k3n"
    assert posted["json"]["event"] == "report.ready" and posted["json"]["report"] == report.to_json()


def test_the_webhook_gets_the_summary_and_link_when_the_report_is_over_the_limit(
    receiver: Receiver, store: Store
) -> None:
    delivery = ReportDelivery(
        [WebhookChannel("ops", receiver.url)], FAST, ui_url="https://passhat.example.test/ui/", webhook_max_bytes=2048
    )
    assert send_report(store, "shop", hostile_report(), delivery, run_id="run-123", trigger="run").ok
    body = receiver.requests[0]["json"]
    assert body["report"] is None and body["truncated"] is True and body["report_bytes"] > 2048
    assert body["link"] == "https://passhat.example.test/ui/runs/run-123"
    assert body["summary"]["least_reliable"][0]["task_type"] == EVIL_TASK


def test_each_channel_gets_a_period_report_once_unless_resent(
    receiver: Receiver, mailbox: Mailbox, store: Store
) -> None:
    hook = WebhookChannel("ops", receiver.url)
    mail = EmailChannel("team", mailbox.host, "passhat@example.test", ("team@example.test",), port=mailbox.port)
    report = hostile_report()
    first = send_report(store, "shop", report, ReportDelivery([hook], FAST), run_id="r", trigger="run")
    assert first.sent == {"ops": "ok"} and first.skipped == []
    both = ReportDelivery([hook, mail], FAST)
    second = send_report(store, "shop", report, both, run_id="r", trigger="cli")
    assert second.sent == {"team": "ok"} and second.skipped == ["ops"]  # only the channel that lacked it
    third = send_report(store, "shop", report, both, run_id="r", trigger="cli")
    assert third.sent == {} and third.skipped == ["ops", "team"] and third.delivery_id is None
    assert len(receiver.requests) == 1 and len(mailbox.messages) == 1
    again = send_report(store, "shop", report, both, run_id="r", trigger="cli", resend=True)
    assert again.sent == {"ops": "ok", "team": "ok"}
    assert len(receiver.requests) == 2 and len(mailbox.messages) == 2
    history = AlertLog(store, "shop").report_deliveries("2026-W48")
    assert [(e.payload["trigger"], e.payload["resend"], e.deliveries) for e in history] == [
        ("cli", True, {"ops": "ok", "team": "ok"}),
        ("cli", False, {"team": "ok"}),
        ("run", False, {"ops": "ok"}),
    ]
    assert AlertLog(store, "shop").notices() == []  # deliveries are not alert notices: evaluation never sees them


def test_a_failing_receiver_is_retried_and_every_attempt_is_recorded(receiver: Receiver, store: Store) -> None:
    receiver.fail_first = 1
    outcome = send_report(
        store, "shop", hostile_report(), ReportDelivery([WebhookChannel("ops", receiver.url)], FAST),
        run_id="r", trigger="run",
    )  # fmt: skip
    assert [(a.attempt, a.ok) for a in outcome.attempts] == [(1, False), (2, True)]
    assert outcome.sent == {"ops": "ok"} and len(receiver.requests) == 1
    log = AlertLog(store, "shop")
    assert outcome.delivery_id is not None
    stored = log.attempts(outcome.delivery_id)
    assert [(e.payload["attempt"], e.payload["ok"]) for e in stored] == [(1, False), (2, True)]
    server = receiver.url.removesuffix("/hook")
    assert (stored[0].payload["error"] or "").startswith(f"webhook {server} answered HTTP 503")
    assert log.report_delivered_to("2026-W48") == {"ops"}


def test_a_receiver_that_is_down_fails_its_channel_only_and_is_tried_again_next_time(
    receiver: Receiver, store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    dead = WebhookChannel("dead", _dead_url(), timeout=2.0)
    server = dead.url.removesuffix("/nobody")
    delivery = ReportDelivery([dead, WebhookChannel("ops", receiver.url)], FAST)
    with caplog.at_level("WARNING", logger="passhat.report"):
        outcome = send_report(store, "shop", hostile_report(), delivery, run_id="r", trigger="run")
    refused = f"cannot connect to webhook {server} (connection refused)"
    assert not outcome.ok and outcome.sent == {"dead": refused, "ops": "ok"}
    assert len([a for a in outcome.attempts if a.channel == "dead"]) == 3
    # One line a try, the last one with the outcome.
    assert caplog.messages == [
        f"passhat: sending the report of 2026-W48 to dead: attempt 1 of 3 failed: {refused}; trying again in 0.01 s",
        f"passhat: sending the report of 2026-W48 to dead: attempt 2 of 3 failed: {refused}; trying again in 0.02 s",
        f"passhat: sending the report of 2026-W48 to dead failed after 3 attempts: {refused}",
    ]
    [recorded] = AlertLog(store, "shop").report_deliveries("2026-W48")
    assert recorded.deliveries["dead"] == refused
    retry = send_report(store, "shop", hostile_report(), delivery, run_id="r", trigger="cli")
    assert retry.skipped == ["ops"] and list(retry.sent) == ["dead"]  # the failed channel has not had it yet


def test_open_alerts_are_in_the_message_with_the_text_that_was_sent(receiver: Receiver, store: Store) -> None:
    log = AlertLog(store, "shop")
    notice = AlertNotice(
        alert_id="refund-drop/x:2026-W47", kind="fired", rule="refund-drop", task_type=EVIL_TASK, period="2026-W47",
        severity="warning", title="dropped", text=EVIL_ALERT,
    )  # fmt: skip
    log.record_notice(notice, [])
    opened = OpenAlert(notice.alert_id, "refund-drop", EVIL_TASK, "2026-W47")
    log.save_state(AlertState(last_period="2026-W47", open={f"refund-drop/{EVIL_TASK}": opened}))
    hook = WebhookChannel("ops", receiver.url)
    assert send_report(store, "shop", hostile_report(), ReportDelivery([hook], FAST), run_id="r", trigger="run").ok
    [line] = receiver.requests[0]["json"]["summary"]["open_alerts"]
    assert line == {"rule": "refund-drop", "scope": EVIL_TASK, "since": "2026-W47", "message": EVIL_ALERT}


@pytest.fixture(scope="module")
def week_traffic(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return production_traffic(tmp_path_factory.mktemp("traffic") / "week.db", W40)


@pytest.mark.slow
def test_run_period_sends_the_official_report_and_a_dead_receiver_does_not_stop_it(
    week_traffic: pathlib.Path, tmp_path: pathlib.Path, receiver: Receiver
) -> None:
    loop_store = open_store(copy_store(week_traffic, tmp_path))
    receiver.fail_first = 1  # the webhook fails once, then takes the report
    delivery = ReportDelivery(
        [WebhookChannel("ops", receiver.url), WebhookChannel("dead", _dead_url(), timeout=2.0)], FAST,
        ui_url="http://127.0.0.1:4318/ui/",
    )  # fmt: skip
    settings = ReplaySettings(k=2, tickets_per_task_type=2)
    agent = agent_spec(PasshatConfig())
    try:

        def run(**extra: object) -> object:
            return asyncio.run(
                run_period(
                    loop_store, "shop", W40, agent, settings=extra.pop("settings", settings),  # type: ignore[arg-type]
                    report_dir=tmp_path / "reports", delivery=delivery, **extra,  # type: ignore[arg-type]
                )
            )  # fmt: skip

        result = run()
        assert result.official and result.delivery is not None  # type: ignore[attr-defined]
        outcome = result.delivery  # type: ignore[attr-defined]
        assert outcome.sent["ops"] == "ok" and "cannot connect to webhook http://127.0.0.1:" in outcome.sent["dead"]
        assert [a.ok for a in outcome.attempts if a.channel == "ops"] == [False, True]
        run_id = result.outcome.run.run_id  # type: ignore[attr-defined]
        assert loop_store.get_replay_run("shop", run_id).status == "finished"  # type: ignore[union-attr]
        [posted] = receiver.requests
        assert posted["json"]["report"]["run"] == {"run_id": run_id, "role": "official"}
        assert posted["json"]["link"] == f"http://127.0.0.1:4318/ui/runs/{run_id}"
        assert posted["json"]["summary"]["simulated"] is True  # the ReferenceAgent simulation says so

        again = run()  # the same period again: its finished run is reused, the report is not resent
        assert again.delivery.skipped == ["ops"] and list(again.delivery.sent) == ["dead"]  # type: ignore[attr-defined]
        assert len(receiver.requests) == 1

        # A one-off run (exploratory, as `passhat replay` marks runs off the configured settings) sends nothing.
        one_off = run(settings=ReplaySettings(k=2, tickets_per_task_type=1), exploratory=["1 ticket per task type"])
        assert not one_off.official and one_off.delivery is None  # type: ignore[attr-defined]
        assert len(receiver.requests) == 1
    finally:
        loop_store.close()


@pytest.mark.slow
def test_the_scheduler_sends_each_period_report_and_keeps_going_when_a_receiver_is_down(
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: pathlib.Path,
    receiver: Receiver,
    caplog: pytest.LogCaptureFixture,
) -> None:
    template = production_traffic(tmp_path_factory.mktemp("day") / "day.db", DAY)
    loop_store = open_store(copy_store(template, tmp_path))
    config = PasshatConfig.model_validate(
        {
            "project": "shop",
            "schedule": {"every": "daily", "time": "00:00"},
            "replay": {"k": 2, "tickets_per_task_type": 2},
            "report": {"out_dir": str(tmp_path / "reports"), "send_to": ["dead", "ops"]},
            "alerts": {
                "retry": {"attempts": 2, "backoff_seconds": 0.01, "max_backoff_seconds": 0.02, "timeout_seconds": 2},
                "channels": {
                    "ops": {"type": "webhook", "url": receiver.url},
                    "dead": {"type": "webhook", "url": _dead_url()},
                },
            },
        }
    )
    start = dt.datetime(2026, 11, 29, 23, 59, 59, tzinfo=dt.UTC)
    readings = iter([start, start])

    def clock() -> dt.datetime:  # the first two readings before midnight, then always just past it
        return next(readings, dt.datetime(2026, 11, 30, 0, 0, 1, tzinfo=dt.UTC))

    scheduler = Scheduler(config, loop_store, clock=clock)
    caplog.set_level(logging.WARNING, logger="passhat.scheduler")
    try:
        scheduler.start()
        deadline = time.monotonic() + 120
        while not scheduler.runs and time.monotonic() < deadline:
            time.sleep(0.05)
        assert scheduler.runs and scheduler.runs[0] == ("2026-11-29", "ok")
        assert scheduler._thread.is_alive()
        [posted] = receiver.requests
        assert posted["json"]["period"] == "2026-11-29" and posted["json"]["report"]["k"] == 2
        [recorded] = AlertLog(loop_store, "shop").report_deliveries("2026-11-29")
        assert recorded.deliveries["ops"] == "ok" and "(connection refused)" in recorded.deliveries["dead"]
        assert recorded.payload["trigger"] == "run"
        # The run's log line said only "passhat scheduler: replayed 2026-11-29": what it measured and did.
        [line] = [r.getMessage() for r in caplog.records if r.name == "passhat.scheduler"]
        assert line.startswith("passhat scheduler: replayed 2026-11-29 of project 'shop': run "), line
        assert re.search(r"; pass\^2 \d+\.\d% \[\d+\.\d, \d+\.\d\] over \d+ tickets;", line), line
        assert f"report in {tmp_path / 'reports' / '2026-11-29'}" in line and "alerts fired" not in line
        assert "report sent: dead failed, ops ok; next run at 2026-12-01 00:00 UTC" in line, line
    finally:
        scheduler.stop()
        loop_store.close()
