"""What every email says beyond its text: a Date and a Message-ID (the same on a retry), and a subject that unfolds
as it was written."""

from __future__ import annotations

import datetime as dt
import email
import email.policy
import email.utils
import re
from email.message import EmailMessage

from passhat.collector.alerts import AlertNotice, EmailChannel, RetryPolicy, deliver_to

from .receivers import Mailbox

FAST = RetryPolicy(attempts=3, backoff_seconds=0.01)


def _received(box: Mailbox) -> list[EmailMessage]:
    out = []
    for envelope in box.messages:
        assert isinstance(envelope.content, bytes)
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        out.append(parsed)
    return out


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
