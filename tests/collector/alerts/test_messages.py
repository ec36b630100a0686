"""What a collector serving two projects sends: every alert names its project and links to its page in the web UI;
its title carries the figure and its sample; emails have Date and Message-ID and subjects that unfold as written."""

from __future__ import annotations

import datetime as dt
import email
import email.policy
import email.utils
import re
from email.message import EmailMessage

from passhat.collector.alerts import (
    AlertLog,
    AlertNotice,
    AlertRule,
    AlertState,
    EmailChannel,
    RetryPolicy,
    SlackChannel,
    WebhookChannel,
    deliver_to,
    evaluate,
)
from passhat.collector.store import Store

from .receivers import Mailbox, Receiver
from .test_evaluate import K, period, tickets

UI = "https://passhat.example.test/ui/"
FLOOR = AlertRule(name="floor", kind="threshold", task_type="refund/partial", threshold=0.5, min_tickets=10)
OVERALL = AlertRule(name="overall-floor", kind="threshold", threshold=0.5, min_tickets=10)
FAST = RetryPolicy(attempts=3, backoff_seconds=0.01)


def _received(box: Mailbox) -> list[EmailMessage]:
    out = []
    for envelope in box.messages:
        assert isinstance(envelope.content, bytes)
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        out.append(parsed)
    return out


def _text(message: EmailMessage) -> str:
    body = message.get_body(("plain",))
    assert body is not None
    return str(body.get_content()).replace("\r\n", "\n")


def test_every_channel_names_the_project_of_each_of_two_projects_and_links_to_the_ui(
    store: Store, receiver: Receiver, mailbox: Mailbox
) -> None:
    store.ensure_project("bank")
    base = receiver.url.removesuffix("/hook")
    channels = [
        WebhookChannel("hook", f"{base}/hook"),
        SlackChannel("slack", f"{base}/slack"),
        EmailChannel("mail", mailbox.host, "passhat@example.test", ("oncall@example.test",), port=mailbox.port),
    ]
    for project in ("shop", "bank"):
        log = AlertLog(store, project, ui_url=UI)
        log.run_period([FLOOR], channels, FAST, period("2026-W49", **{"refund/partial": tickets(40, 4)}), [], k=K)

    link = "https://passhat.example.test/ui/task-types/refund%2Fpartial?period=2026-W49"
    hooks = [r["json"] for r in receiver.requests if r["path"] == "/hook"]
    assert [(h["project"], h["link"]) for h in hooks] == [("shop", link), ("bank", link)]
    slack = [r["json"] for r in receiver.requests if r["path"] == "/slack"]
    title = "pass^5 of refund/partial 10.0% (40 tickets), below 50.0%"
    for body, project in zip(slack, ("shop", "bank"), strict=True):
        assert body["text"].startswith(f":rotating_light: [{project}] pass^5 of refund/partial is 10.0% in 2026-W49")
        assert body["blocks"][0]["text"]["text"] == f"[{project}] {title}"
        assert {"type": "mrkdwn", "text": f"<{link}|Open in the passhat web UI>"} in [
            b.get("text") for b in body["blocks"]
        ]
        assert body["blocks"][-1]["elements"][0]["text"].startswith(f"project `{project}` · rule `floor`")
    mails = _received(mailbox)
    assert [m["Subject"] for m in mails] == [f"[passhat] {p} WARNING: {title}" for p in ("shop", "bank")]
    for message, project in zip(mails, ("shop", "bank"), strict=True):
        text = _text(message)
        assert f"\nproject: {project}\nrule: floor\n" in text and f"In the web UI: {link}\n" in text
    stored = [e.payload for e in AlertLog(store, "bank").notices()]
    assert [(p["project"], p["link"]) for p in stored] == [("bank", link)]


def test_an_overall_alert_links_to_the_alerts_page_and_without_a_ui_there_is_no_link(
    store: Store, receiver: Receiver
) -> None:
    hook = [WebhookChannel("hook", receiver.url)]
    AlertLog(store, "shop", ui_url=UI).run_period([OVERALL], hook, FAST, period("W1", refund=tickets(40, 4)), [], k=K)
    store.ensure_project("bank")
    AlertLog(store, "bank").run_period([OVERALL], hook, FAST, period("W1", refund=tickets(40, 4)), [], k=K)
    first, second = (r["json"] for r in receiver.requests)
    assert (first["project"], first["link"]) == ("shop", "https://passhat.example.test/ui/alerts")
    assert (second["project"], second["link"]) == ("bank", None)


def test_an_alert_title_carries_its_figure_and_sample_sizes_and_counts_read_right() -> None:
    drop = AlertRule(name="drop", kind="drop", task_type="refund", min_tickets=1, baseline_periods=1, permutations=999)
    history = [period("W1", refund=tickets(60, 50))]
    fired = evaluate([drop], period("W2", refund=tickets(60, 10)), history, AlertState(), k=K)
    [notice] = fired.fire
    assert notice.title == "pass^5 of refund dropped to 16.7% (60 tickets) from 83.3% (60 tickets)"
    assert "60 tickets vs 60 in 1 baseline period; rule drop)" in notice.text  # it said "1 baseline periods"
    history = [period("W2", refund=tickets(60, 10)), *history]
    [recovered] = evaluate([drop], period("W3", refund=tickets(60, 55)), history, fired.state, k=K).resolve
    assert recovered.title == "pass^5 of refund recovered: 91.7% (60 tickets)"
    one = AlertRule(name="one", kind="threshold", task_type="refund", threshold=0.5, min_tickets=1)
    [single] = evaluate([one], period("W1", refund=tickets(1, 0)), [], AlertState(), k=K).fire
    assert single.title == "pass^5 of refund 0.0% (1 ticket), below 50.0%"
    assert "(1 ticket; rule one)" in single.text


def test_an_email_has_date_and_message_id_and_its_retry_is_the_same_message(mailbox: Mailbox) -> None:
    mailbox.defer_first = 1  # the first try gets "451 try again later"
    sender = "passhat <alerts@example.test>"
    channel = EmailChannel("mail", mailbox.host, sender, ("b@example.test",), port=mailbox.port)
    notice = AlertNotice("a:W1", "fired", "a", None, "W1", "critical", "pass^5 of overall dropped", "text")
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    attempts = deliver_to(notice, channel, FAST)
    assert [(a.ok, a.retryable) for a in attempts] == [(False, True), (True, False)]
    assert "answered 451" in (attempts[0].error or "")
    [deferred] = mailbox.deferred
    assert isinstance(deferred.content, bytes)
    tried = email.message_from_bytes(deferred.content, policy=email.policy.default)
    [message] = _received(mailbox)
    sent = email.utils.parsedate_to_datetime(str(message["Date"]))
    assert sent.utcoffset() == dt.timedelta(0) and before <= sent <= dt.datetime.now(dt.UTC)
    assert re.fullmatch(r"<[^@<>\s]+@example\.test>", str(message["Message-ID"]))
    assert (tried["Message-ID"], tried["Date"]) == (message["Message-ID"], message["Date"])


def test_a_subject_with_non_ascii_text_unfolds_as_it_was_written(mailbox: Mailbox) -> None:
    """Python's own folding ended a line with a space before an encoded word: readers showed two spaces."""
    channel = EmailChannel("mail", mailbox.host, "passhat@example.test", ("b@example.test",), port=mailbox.port)
    titles = [f"pass^4 of {'x' * n} 5.3% [4.7, 44.2] ±20 (17 tickets), below 90.0% — été" for n in range(1, 60, 3)]
    for title in titles:
        notice = AlertNotice("a:W1", "fired", "a", "t", "W1", "critical", title, "text")
        assert deliver_to(notice, channel, FAST)[-1].ok
    subjects = [m["Subject"] for m in _received(mailbox)]
    assert subjects == [f"[passhat] CRITICAL: {t}" for t in titles]
    for envelope in mailbox.messages:
        assert isinstance(envelope.content, bytes)
        head = envelope.content.split(b"\r\n\r\n")[0]
        assert head.isascii()
        assert not any(line.endswith(b" ") for line in head.split(b"\r\n"))  # no space left before a fold


def test_the_loop_links_its_alerts_to_the_configured_ui() -> None:
    from passhat.collector.config import PasshatConfig
    from passhat.collector.loop import alert_setup

    config = PasshatConfig.model_validate({"project": "bank", "report": {"ui_url": UI}})
    assert alert_setup(config).ui_url == UI
    assert alert_setup(PasshatConfig.model_validate({})).ui_url is None
