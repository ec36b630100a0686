"""A period's report as messages: the email's HTML and text, the Slack summary, the webhook body; user text escaped."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser

from passhat.collector.report import (
    ReportDigest,
    ReportInput,
    TrialResult,
    UnreplayedReport,
    build_report,
    email_html,
    email_subject,
    email_text,
    least_reliable,
    mrkdwn_escape,
    render_html,
    report_email,
    slack_report,
    webhook_report,
)
from passhat.collector.report._format import ci, pct
from passhat.collector.store import NotReplayable

from .report_hostile import AMP_TASK, EVIL_AGENT, EVIL_ALERT, EVIL_TASK, hostile_digest, hostile_report


class _Tags(HTMLParser):
    """Every start tag and its attributes, as a mail client's sanitiser would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags(text: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(text)
    return parser.tags


def test_the_email_body_escapes_user_text_and_has_no_script_or_remote_resource() -> None:
    body = email_html(hostile_digest(hostile_report()))
    tags = _tags(body)
    names = {tag for tag, _ in tags}
    assert "script" not in names and "img" not in names and "style" not in names and "link" not in names
    assert not any(name.startswith("on") for _, attrs in tags for name in attrs)  # no event handler anywhere
    assert html.escape(f"retail/{EVIL_TASK}") in body and html.escape(EVIL_AGENT) in body
    assert html.escape(EVIL_ALERT) in body and "&lt;!channel&gt;" in body
    assert html.escape(f"retail/{AMP_TASK}") in body  # & becomes &amp;
    hrefs = [attrs["href"] for tag, attrs in tags if tag == "a"]
    assert hrefs == ["https://passhat.example.test/ui/runs/run-123"]
    assert not any("src" in attrs for _, attrs in tags)  # nothing is fetched: no image, frame or script source
    assert not re.search(r"<img\b", body)  # the agent's <img ...> is text, never a tag


def test_the_email_leads_with_the_headline_figures_intervals_and_tickets() -> None:
    report = hostile_report()
    digest = hostile_digest(report)
    body, text = email_html(digest), email_text(digest)
    weighted = report.overall.weighted
    for value, interval in (
        (weighted.pass_hat_k, weighted.pass_hat_k_ci),
        (weighted.pass_at_1, weighted.pass_at_1_ci),
        (weighted.pass_at_k, weighted.pass_at_k_ci),
    ):
        assert f"{pct(value)} {ci(interval)}" in text
        assert html.escape(pct(value)) in body and html.escape(ci(interval)) in body
    assert f"{report.overall.tickets_sampled} tickets sampled over 3 task types, traffic-weighted" in text
    worst = least_reliable(report, 5)
    assert next(t.task_type for t in worst) == EVIL_TASK  # the least reliable first
    assert f"retail/{EVIL_TASK}: pass^4 {pct(worst[0].figures.pass_hat_k)} {ci(worst[0].figures.pass_hat_k_ci)}" in text
    assert f"{worst[0].tickets_sampled} tickets" in text
    change = report.trend[-1].pass_hat_k_change
    assert change is not None and f"{100 * change:+.1f} pts since 2026-W47" in text
    assert f"refund-drop ({EVIL_TASK}, since 2026-W47): {EVIL_ALERT}" in text
    assert "https://passhat.example.test/ui/runs/run-123" in text
    assert email_subject(digest).startswith("[passhat] shop report 2026-W48: pass^4 ")
    assert "Simulated agent" not in body and "simulated" not in text.lower()


def test_the_simulated_agent_banner_appears_when_the_figures_are_simulated() -> None:
    digest = hostile_digest(hostile_report(simulated=True))
    assert "<strong>Simulated agent.</strong>" in email_html(digest)
    assert "*** Simulated agent: these figures come from a simulated agent" in email_text(digest)
    assert email_subject(digest).endswith("(simulated agent)")
    slack = slack_report(digest)
    assert any(b["type"] == "context" and "Simulated agent" in b["elements"][0]["text"] for b in slack["blocks"])


def test_without_an_earlier_period_or_a_ui_the_email_says_so_and_has_no_link() -> None:
    digest = hostile_digest(hostile_report(with_previous=False), link=None)
    assert "No earlier period to compare with." in email_text(digest)
    assert not any(tag == "a" for tag, _ in _tags(email_html(digest)))
    assert "web UI" not in email_text(digest)


def test_the_email_has_text_and_html_parts_and_the_report_attached() -> None:
    report = hostile_report()
    message = report_email(hostile_digest(report), "passhat@example.test", ["team@example.test", "b@example.test"])
    assert message["To"] == "team@example.test, b@example.test"
    assert message.get_content_type() == "multipart/mixed"
    body, attachment = message.iter_parts()
    assert body.get_content_type() == "multipart/alternative"
    assert [p.get_content_type() for p in body.iter_parts()] == ["text/plain", "text/html"]
    assert attachment.get_filename() == "passhat-report-2026-W48.html"
    assert attachment.get_content_disposition() == "attachment"
    assert attachment.get_payload(decode=True) == render_html(report).encode("utf-8")


def test_slack_gets_a_compact_summary_with_mrkdwn_escaped() -> None:
    report = hostile_report()
    body = slack_report(hostile_digest(report))
    texts = [body["text"]] + [b["text"]["text"] for b in body["blocks"] if b["type"] == "section"]  # every mrkdwn field
    joined = "\n".join(texts)
    # No raw markup of the user's survives: Slack would read <!channel> as a mention and <...|...> as a link.
    assert "<script>" not in joined and "<!channel>" not in joined and "<b>" not in joined
    assert mrkdwn_escape(f"retail/{EVIL_TASK}") in joined and "exchange&amp;swap" in joined
    assert mrkdwn_escape(EVIL_ALERT) in joined and "&lt;!channel&gt;" in joined
    assert "<https://passhat.example.test/ui/runs/run-123|Open in the passhat web UI>" in joined
    worst = body["blocks"][2]["text"]["text"]
    assert worst.startswith("*Least reliable task types*") and worst.count("\n• ") == 3
    top = least_reliable(report, 1)[0]
    assert (
        f"pass^4 {pct(top.figures.pass_hat_k)} {ci(top.figures.pass_hat_k_ci)}, {top.tickets_sampled} tickets" in worst
    )
    assert body["blocks"][0]["type"] == "header" and len(body["blocks"][0]["text"]["text"]) <= 150


def test_mrkdwn_escape_covers_the_three_control_characters() -> None:
    assert mrkdwn_escape("a & b < c > d") == "a &amp; b &lt; c &gt; d"
    assert mrkdwn_escape("&lt;") == "&amp;lt;"  # already-escaped text is escaped again, shown as typed


def test_the_webhook_gets_the_report_json_or_its_summary_over_the_size_limit() -> None:
    report = hostile_report()
    digest = hostile_digest(report)
    whole = webhook_report(digest)
    assert whole["event"] == "report.ready" and whole["truncated"] is False
    assert whole["report"] == report.to_json()
    assert whole["summary"]["headline"]["pass_hat_k"] == report.overall.weighted.pass_hat_k
    assert whole["summary"]["headline"]["tickets"] == report.overall.tickets_sampled
    size = len(json.dumps(whole, ensure_ascii=False).encode("utf-8"))
    small = webhook_report(digest, max_bytes=size - 1)
    assert small["report"] is None and small["truncated"] is True and small["report_bytes"] == size
    assert small["link"] == "https://passhat.example.test/ui/runs/run-123"
    assert [t["task_type"] for t in small["summary"]["least_reliable"]] == [
        t.task_type for t in least_reliable(report, 3)
    ]
    assert small["summary"]["least_reliable"][0]["pass_hat_k_ci"] is not None
    assert webhook_report(digest, max_bytes=size)["truncated"] is False


def test_a_period_with_nothing_measured_is_sent_with_its_reasons() -> None:
    report = UnreplayedReport(
        period="2026-W48", k=4, agent="bot", why="None of the 3 sampled tickets of 2026-W48 could be measured",
        not_replayable=[NotReplayable("T-1", "refund", "no <before-image>", "capture state reads")],
    )  # fmt: skip
    digest = ReportDigest(report, "shop")
    assert email_subject(digest) == "[passhat] shop report 2026-W48: nothing measured"
    assert "1 ticket: no &lt;before-image&gt;. Fix: capture state reads" in email_html(digest)
    assert "- 1 ticket: no <before-image>. Fix: capture state reads" in email_text(digest)
    assert "no <before-image>" in email_text(digest)
    assert webhook_report(digest)["summary"]["measured"] is False
    slack = slack_report(digest)
    assert slack["blocks"][0]["text"]["text"] == "passhat shop report 2026-W48: nothing measured"
    assert slack["text"] == "passhat shop report 2026-W48: nothing measured"
    message = report_email(digest, "a@example.test", ["b@example.test"])
    attachment = next(iter(message.iter_attachments()))
    assert attachment.get_payload(decode=True) == report.html().encode("utf-8")


def test_the_slack_summary_names_the_project() -> None:
    report = hostile_report()
    body = slack_report(hostile_digest(report))
    header = f"passhat shop report 2026-W48: pass^4 {pct(report.overall.weighted.pass_hat_k)}"
    assert body["blocks"][0]["text"]["text"] == header
    assert body["text"] == f"{header} {ci(report.overall.weighted.pass_hat_k_ci)}"


def test_one_ticket_of_one_task_type_is_counted_in_the_singular() -> None:
    trials = [
        TrialResult(
            domain="retail", task_type="update_phone", ticket_id="T-1", attempt=attempt, passed=ok,
            signature=None if ok else "wrong_entity", termination_reason="customer_stop", changes=[],
            final_response="done",
        )
        for attempt, ok in enumerate([True, False, True, True], start=1)
    ]  # fmt: skip
    report = build_report(
        ReportInput(period="2026-W49", k=4, trials=trials, agent="bot", run_id="run-1", run_role="official")
    )
    digest = ReportDigest(report, "shop")
    subject, text, body = email_subject(digest), email_text(digest), email_html(digest)
    slack = "\n".join(b["text"]["text"] for b in slack_report(digest)["blocks"] if b["type"] == "section")
    assert subject.endswith(", 1 ticket") and "1 ticket sampled over 1 task type, " in text
    assert "1 ticket sampled over 1 task type, " in body and "· 1 ticket</div>" in body
    [line] = [line for line in text.splitlines() if line.startswith("  retail/update_phone: pass^4 ")]
    assert line.endswith(", 1 ticket")
    assert " · 1 ticket (" in slack and slack.count(", 1 ticket") == 1
    for message in (subject, text, body, slack):
        assert "1 tickets" not in message and "1 task types" not in message and "(s)" not in message
