"""Each channel delivers to a real local receiver; failures are retried with backoff and every attempt reported."""

from __future__ import annotations

import email
import email.policy

from passhat.collector.alerts import (
    AlertNotice,
    EmailChannel,
    RetryPolicy,
    SlackChannel,
    WebhookChannel,
    deliver,
    deliver_to,
)

from .receivers import Certificate, Mailbox, Receiver, free_port

NOTICE = AlertNotice(
    alert_id="refunds-drop/refund:2026-W48",
    kind="fired",
    rule="refunds-drop",
    task_type="refund",
    period="2026-W48",
    severity="critical",
    title="pass^5 of refund dropped",
    text="pass^5 of refund dropped from 61.0% to 40.0% in 2026-W48.",
    details={"p_value": 0.0005, "drop": 0.21},
)
FAST = RetryPolicy(attempts=3, backoff_seconds=0.01, multiplier=2.0, max_backoff_seconds=0.05)


def test_webhook_posts_the_documented_payload(receiver: Receiver) -> None:
    channel = WebhookChannel("ops", receiver.url, headers={"Authorization": "Bearer t0k3n"})
    attempts = deliver_to(NOTICE, channel, FAST)
    assert [a.ok for a in attempts] == [True]
    [request] = receiver.requests
    assert request["headers"]["Authorization"] == "Bearer t0k3n"
    body = request["json"]
    assert body["event"] == "alert.fired" and body["source"] == "passhat"
    assert body["alert_id"] == NOTICE.alert_id and body["scope"] == "refund" and body["period"] == "2026-W48"
    assert body["details"] == {"p_value": 0.0005, "drop": 0.21}


def test_slack_posts_text_and_blocks(receiver: Receiver) -> None:
    attempts = deliver_to(NOTICE, SlackChannel("slack", receiver.url), FAST)
    assert attempts[-1].ok
    body = receiver.requests[0]["json"]
    assert set(body) == {"text", "blocks"}
    assert "dropped from 61.0% to 40.0%" in body["text"]
    assert [b["type"] for b in body["blocks"]] == ["header", "section", "context"]
    assert body["blocks"][0]["text"] == {"type": "plain_text", "text": "pass^5 of refund dropped"}


def test_slack_text_is_mrkdwn_escaped(receiver: Receiver) -> None:
    hostile = AlertNotice(
        **{**NOTICE.__dict__, "task_type": "refund<!channel>", "text": "pass^5 of refund<!channel> & co dropped"}
    )
    assert deliver_to(hostile, SlackChannel("slack", receiver.url), FAST)[-1].ok
    body = receiver.requests[0]["json"]
    fields = [body["text"], body["blocks"][1]["text"]["text"], body["blocks"][2]["elements"][0]["text"]]
    assert all("<!channel>" not in field for field in fields)  # never a mention of the whole channel
    assert "refund&lt;!channel&gt; &amp; co dropped" in fields[1] and "refund&lt;!channel&gt;" in fields[2]


def test_a_failing_receiver_is_retried_until_it_succeeds(receiver: Receiver) -> None:
    receiver.fail_first = 2
    attempts = deliver_to(NOTICE, WebhookChannel("ops", receiver.url), FAST)
    assert [(a.attempt, a.ok) for a in attempts] == [(1, False), (2, False), (3, True)]
    server = receiver.url.removesuffix("/hook")
    assert attempts[0].error == f"webhook {server} answered HTTP 503: receiver failing on purpose"
    assert len(receiver.requests) == 1


def test_retries_are_bounded(receiver: Receiver) -> None:
    receiver.fail_first = 10
    attempts = deliver_to(NOTICE, WebhookChannel("ops", receiver.url), FAST)
    assert [a.ok for a in attempts] == [False, False, False]
    assert receiver.seen == 3


def test_a_client_error_is_not_retried(receiver: Receiver) -> None:
    receiver.fail_first, receiver.fail_status = 10, 404
    attempts = deliver_to(NOTICE, WebhookChannel("ops", receiver.url), FAST)
    assert len(attempts) == 1 and not attempts[0].retryable and "HTTP 404" in (attempts[0].error or "")


def test_an_unreachable_webhook_is_retried_then_reported_naming_its_server_only() -> None:
    port = free_port()  # nothing listens there
    url = f"http://127.0.0.1:{port}/hook/t0k3n?key=s3cret"
    attempts = deliver_to(NOTICE, WebhookChannel("ops", url, timeout=2.0), FAST)
    assert len(attempts) == 3 and all(a.retryable and not a.ok for a in attempts)
    assert attempts[-1].error == f"cannot connect to webhook http://127.0.0.1:{port} (connection refused)"


def test_a_slack_failure_names_the_host_never_the_secret_path(receiver: Receiver) -> None:
    receiver.fail_first, receiver.fail_status = 1, 404
    server = receiver.url.removesuffix("/hook")
    secret = f"{server}/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX"
    [attempt] = deliver_to(NOTICE, SlackChannel("slack", secret), FAST)
    assert attempt.error == f"Slack webhook {server} answered HTTP 404: receiver failing on purpose"
    assert not attempt.retryable
    port = free_port()
    down = deliver_to(NOTICE, SlackChannel("slack", f"http://127.0.0.1:{port}/services/T0/B0/SECRET"), FAST)
    assert {a.error for a in down} == {f"cannot connect to Slack webhook http://127.0.0.1:{port} (connection refused)"}
    assert not any("SECRET" in (a.error or "") or "services" in (a.error or "") for a in down)


def test_backoff_grows_and_is_capped() -> None:
    policy = RetryPolicy(attempts=6, backoff_seconds=1.0, multiplier=2.0, max_backoff_seconds=5.0)
    assert [policy.wait_before(i) for i in range(1, 7)] == [0.0, 1.0, 2.0, 4.0, 5.0, 5.0]


def test_email_arrives_with_subject_and_details(mailbox: Mailbox) -> None:
    channel = EmailChannel("mail", mailbox.host, "passhat@example.test", ("oncall@example.test",), port=mailbox.port)
    attempts = deliver_to(NOTICE, channel, FAST)
    assert [a.ok for a in attempts] == [True]
    [envelope] = mailbox.messages
    assert envelope.rcpt_tos == ["oncall@example.test"]
    assert isinstance(envelope.content, bytes)
    message = email.message_from_bytes(envelope.content, policy=email.policy.default)
    assert message["Subject"] == "[passhat] CRITICAL: pass^5 of refund dropped"
    body = message.get_body()
    assert body is not None
    text = body.get_content()
    assert "dropped from 61.0% to 40.0%" in text and '"p_value": 0.0005' in text


def test_email_logs_in_when_credentials_are_given(auth_mailbox: Mailbox) -> None:
    good = EmailChannel(
        "mail", auth_mailbox.host, "a@example.test", ("b@example.test",), port=auth_mailbox.port,
        username="alerts", password="s3cret",
    )  # fmt: skip
    bad = EmailChannel(
        "mail", auth_mailbox.host, "a@example.test", ("b@example.test",), port=auth_mailbox.port,
        username="alerts", password="wrong",
    )  # fmt: skip
    assert deliver_to(NOTICE, good, FAST)[-1].ok
    refused = deliver_to(NOTICE, bad, FAST)
    assert len(refused) == 1 and not refused[0].retryable
    assert refused[0].error == f"login refused by SMTP server {auth_mailbox.host}:{auth_mailbox.port} (535)"
    assert len(auth_mailbox.messages) == 1


def test_refused_recipients_fail_without_retry(mailbox: Mailbox) -> None:
    mailbox.refuse_recipients = True
    channel = EmailChannel("mail", mailbox.host, "a@example.test", ("nobody@example.test",), port=mailbox.port)
    attempts = deliver_to(NOTICE, channel, FAST)
    assert len(attempts) == 1 and not attempts[0].ok
    server = f"SMTP server {mailbox.host}:{mailbox.port}"
    assert attempts[0].error == f"{server} refused every recipient: ['nobody@example.test']"


def test_an_unreachable_smtp_server_is_retried_and_named() -> None:
    port = free_port()
    channel = EmailChannel("mail", "127.0.0.1", "a@example.test", ("b@example.test",), port=port, timeout=2.0)
    attempts = deliver_to(NOTICE, channel, FAST)
    assert len(attempts) == 3 and all(a.retryable for a in attempts)
    assert {a.error for a in attempts} == {f"cannot connect to SMTP server 127.0.0.1:{port} (connection refused)"}


def test_a_notice_goes_only_to_the_channels_its_rule_names(receiver: Receiver, mailbox: Mailbox) -> None:
    webhook = WebhookChannel("ops", receiver.url)
    mail = EmailChannel("mail", mailbox.host, "a@example.test", ("b@example.test",), port=mailbox.port)
    targeted = AlertNotice(**{**NOTICE.__dict__, "channels": ("mail",)})
    attempts = deliver(targeted, [webhook, mail], FAST)
    assert [a.channel for a in attempts] == ["mail"]
    assert receiver.requests == [] and len(mailbox.messages) == 1
    everywhere = deliver(NOTICE, [webhook, mail], FAST)
    assert sorted(a.channel for a in everywhere) == ["mail", "ops"]


def test_email_over_starttls_with_login(tls_mailbox: Mailbox, certificate: Certificate) -> None:
    channel = EmailChannel(
        "mail", tls_mailbox.host, "a@example.test", ("b@example.test",), port=tls_mailbox.port,
        username="alerts", password="s3cret", starttls=True, ca_file=str(certificate.cert),
    )  # fmt: skip
    attempts = deliver_to(NOTICE, channel, FAST)
    assert [a.ok for a in attempts] == [True], attempts
    assert len(tls_mailbox.messages) == 1


def test_an_untrusted_certificate_fails_without_retry(tls_mailbox: Mailbox) -> None:
    channel = EmailChannel(
        "mail", tls_mailbox.host, "a@example.test", ("b@example.test",), port=tls_mailbox.port,
        username="alerts", password="s3cret", starttls=True,
    )  # fmt: skip
    attempts = deliver_to(NOTICE, channel, FAST)
    assert len(attempts) == 1 and not attempts[0].retryable
    error = attempts[0].error or ""
    assert error.startswith(f"TLS failed with SMTP server 127.0.0.1:{tls_mailbox.port}: ")
    assert "CERTIFICATE_VERIFY_FAILED" in error
    assert tls_mailbox.messages == []


def test_a_server_requiring_starttls_refuses_a_plain_session(tls_mailbox: Mailbox) -> None:
    channel = EmailChannel("mail", tls_mailbox.host, "a@example.test", ("b@example.test",), port=tls_mailbox.port)
    attempts = deliver_to(NOTICE, channel, FAST)
    assert not attempts[-1].ok
    assert (attempts[-1].error or "").startswith(f"SMTP server 127.0.0.1:{tls_mailbox.port} answered 530")
    assert tls_mailbox.messages == []
