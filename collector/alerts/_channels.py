"""Where alerts go: a generic JSON webhook, a Slack-compatible webhook, and email over SMTP.

A channel sends one notice or raises `DeliveryError`, saying whether trying again could help.
"""

from __future__ import annotations

import json
import re
import smtplib
import ssl
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any, Literal, Protocol

import httpx

from passhat.collector.alerts._mail import finish_message, mail_message
from passhat.collector.alerts._types import AlertNotice

ChannelType = Literal["webhook", "slack", "email"]

#: Slack limits a header block's text to 150 characters and a section's to 3000.
_SLACK_HEADER_MAX = 150
_SLACK_SECTION_MAX = 3000


class DeliveryError(Exception):
    """A channel could not deliver a notice. ``retryable`` is false when repeating cannot help (e.g. HTTP 404)."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


class Channel(Protocol):
    """Anything that can deliver a notice."""

    @property
    def name(self) -> str: ...

    @property
    def type(self) -> ChannelType: ...

    def send(self, notice: AlertNotice) -> None:
        """Deliver ``notice`` or raise `DeliveryError`."""


def server_of(url: str) -> str:
    """A webhook's server as a message may name it: scheme, host and port, never the path or query (a Slack
    webhook's path is its secret; another's may hold a token) nor a user and password."""
    parts = urllib.parse.urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{host}" if parts.scheme and host else "(an invalid URL)"


def _reason(exc: BaseException, *, hide: str = "") -> str:
    """What an exception says, as words in a sentence ("[Errno 111] Connection refused" reads "connection
    refused"), with ``hide`` (a secret URL) replaced by its server."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if hide:
        text = text.replace(hide, server_of(hide))
    bracketed = re.match(r"^\[Errno -?\d+\] (.+)$", text)
    text = bracketed[1] if bracketed else text
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def _post_json(url: str, body: Mapping[str, Any], headers: Mapping[str, str], timeout: float, what: str) -> None:
    """POST ``body``; a failure names ``what`` and the server (`server_of`), never the rest of the URL."""
    where = f"{what} {server_of(url)}"
    try:
        response = httpx.post(url, json=dict(body), headers=dict(headers), timeout=timeout)
    except httpx.ConnectTimeout as exc:
        raise DeliveryError(f"cannot connect to {where} (no answer within {timeout:g} s)", retryable=True) from exc
    except httpx.ConnectError as exc:
        raise DeliveryError(f"cannot connect to {where} ({_reason(exc, hide=url)})", retryable=True) from exc
    except httpx.TimeoutException as exc:
        raise DeliveryError(f"{where} did not answer within {timeout:g} s", retryable=True) from exc
    except httpx.HTTPError as exc:
        raise DeliveryError(f"{where} failed: {type(exc).__name__}: {_reason(exc, hide=url)}", retryable=True) from exc
    if response.is_success:
        return
    status = response.status_code
    snippet = " ".join(response.text[:200].split())
    retryable = status in (408, 425, 429) or status >= 500
    raise DeliveryError(f"{where} answered HTTP {status}" + (f": {snippet}" if snippet else ""), retryable=retryable)


@dataclass(frozen=True)
class WebhookChannel:
    """POST the notice's JSON payload (`AlertNotice.payload`) to a URL."""

    name: str
    url: str = field(repr=False)  # may embed a token
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    timeout: float = 10.0

    @property
    def type(self) -> ChannelType:
        return "webhook"

    def send(self, notice: AlertNotice) -> None:
        _post_json(self.url, notice.payload(), self.headers, self.timeout, "webhook")

    def post(self, body: Mapping[str, Any]) -> None:
        """POST any JSON body (e.g. a report's) to the webhook, or raise `DeliveryError`."""
        _post_json(self.url, body, self.headers, self.timeout, "webhook")


def _mrkdwn(text: object) -> str:
    """User text (task types, messages) made safe for Slack's mrkdwn: no mention, no link, shown as typed."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _slack_link(url: str) -> str:
    safe = "".join(ch for ch in url if ch not in "<>| ")
    return f"<{safe}|Open in the passhat web UI>"


def slack_body(notice: AlertNotice) -> dict[str, Any]:
    """A Slack incoming-webhook body: fallback ``text`` plus Block Kit ``blocks`` (user text mrkdwn-escaped), both
    naming the project, and a link to the alert's page in the web UI when there is one."""
    icon = {"fired": ":rotating_light:", "resolved": ":white_check_mark:", "test": ":wave:"}[notice.kind]
    named = f"[{notice.project}] " if notice.project else ""
    header = f"{named}{notice.title}"[:_SLACK_HEADER_MAX]  # plain_text: Slack shows it as it is
    e = _mrkdwn
    project = f"project `{e(notice.project)}` · " if notice.project else ""
    context = (
        f"{project}rule `{e(notice.rule)}` · {e(notice.scope)} · {e(notice.period)} · {e(notice.severity)} · "
        f"`{e(notice.alert_id)}`"
    )
    text = f"{icon} {e(named)}{e(notice.text)}"
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": header}},
        {"type": "section", "text": {"type": "mrkdwn", "text": text[:_SLACK_SECTION_MAX]}},
    ]
    if notice.link:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": _slack_link(notice.link)}})
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": context}]})
    return {"text": text, "blocks": blocks}


@dataclass(frozen=True)
class SlackChannel:
    """POST a Slack-compatible body (`slack_body`) to an incoming-webhook URL."""

    name: str
    url: str = field(repr=False)  # a Slack webhook URL is a secret
    timeout: float = 10.0

    @property
    def type(self) -> ChannelType:
        return "slack"

    def send(self, notice: AlertNotice) -> None:
        _post_json(self.url, slack_body(notice), {}, self.timeout, "Slack webhook")

    def post(self, body: Mapping[str, Any]) -> None:
        """POST a ready Slack body (``text`` and ``blocks``) to the webhook, or raise `DeliveryError`."""
        _post_json(self.url, body, {}, self.timeout, "Slack webhook")


def email_message(notice: AlertNotice, sender: str, recipients: Sequence[str]) -> EmailMessage:
    """The email for a notice: subject and text naming the project, the link to its UI page, its details as JSON."""
    label = {"fired": notice.severity.upper(), "resolved": "RESOLVED", "test": "TEST"}[notice.kind]
    project = f" {notice.project}" if notice.project else ""
    message = mail_message(f"[passhat]{project} {label}: {notice.title}", sender, recipients)
    fields = [f"project: {notice.project}"] if notice.project else []
    fields += [f"rule: {notice.rule}", f"scope: {notice.scope}", f"period: {notice.period}"]
    fields.append(f"alert: {notice.alert_id}")
    link = [f"In the web UI: {notice.link}", ""] if notice.link else []
    details = json.dumps(dict(notice.details), indent=2, sort_keys=True, default=str)
    message.set_content("\n".join([notice.text, "", *fields, "", *link, "details:", details]) + "\n")
    return message


@dataclass(frozen=True)
class EmailChannel:
    """Send the notice as a plain-text email over SMTP (optional SSL or STARTTLS, optional login)."""

    name: str
    host: str
    sender: str
    recipients: tuple[str, ...]
    port: int = 25
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    starttls: bool = False
    use_ssl: bool = False
    ca_file: str | None = None  # trust this CA bundle instead of the system ones (a private CA)
    timeout: float = 10.0

    @property
    def type(self) -> ChannelType:
        return "email"

    def send(self, notice: AlertNotice) -> None:
        self.send_message(email_message(notice, self.sender, self.recipients))

    @property
    def server(self) -> str:
        """The SMTP server as messages name it."""
        return f"SMTP server {self.host}:{self.port}"

    def send_message(self, message: EmailMessage) -> None:
        """Send a ready message (its From and To headers already set) over SMTP, or raise `DeliveryError` naming
        the server. A Date and a Message-ID are added where it lacks them (kept by its retries) and its Subject is
        folded by passhat (`finish_message`)."""
        finish_message(message)
        context = ssl.create_default_context(cafile=self.ca_file) if (self.use_ssl or self.starttls) else None
        server = self.server
        connected = False
        try:
            smtp: smtplib.SMTP
            if context is not None and self.use_ssl:
                smtp = smtplib.SMTP_SSL(self.host, self.port, timeout=self.timeout, context=context)
            else:
                smtp = smtplib.SMTP(self.host, self.port, timeout=self.timeout)
            connected = True
            with smtp:
                smtp.ehlo()
                if context is not None and self.starttls:
                    smtp.starttls(context=context)
                    smtp.ehlo()
                if self.username is not None:
                    smtp.login(self.username, self.password or "")
                refused = smtp.send_message(message)
        except smtplib.SMTPAuthenticationError as exc:
            raise DeliveryError(f"login refused by {server} ({exc.smtp_code})", retryable=False) from exc
        except smtplib.SMTPRecipientsRefused as exc:
            raise DeliveryError(f"{server} refused every recipient: {sorted(exc.recipients)}", retryable=False) from exc
        except smtplib.SMTPResponseException as exc:
            text = exc.smtp_error.decode("utf-8", "replace") if isinstance(exc.smtp_error, bytes) else exc.smtp_error
            retryable = 400 <= exc.smtp_code < 500
            raise DeliveryError(f"{server} answered {exc.smtp_code}: {text}", retryable=retryable) from exc
        except ssl.SSLError as exc:  # a certificate problem does not fix itself on retry
            raise DeliveryError(f"TLS failed with {server}: {exc}", retryable=False) from exc
        except smtplib.SMTPServerDisconnected as exc:
            raise DeliveryError(f"{server} closed the connection ({_reason(exc)})", retryable=True) from exc
        except smtplib.SMTPException as exc:
            raise DeliveryError(f"{server} failed: {type(exc).__name__}: {_reason(exc)}", retryable=True) from exc
        except OSError as exc:  # refused, unreachable, unknown host, timed out (TimeoutError)
            why = f"no answer within {self.timeout:g} s" if isinstance(exc, TimeoutError) else _reason(exc)
            if not connected:
                raise DeliveryError(f"cannot connect to {server} ({why})", retryable=True) from exc
            raise DeliveryError(f"lost the connection to {server} ({why})", retryable=True) from exc
        if refused:
            raise DeliveryError(f"{server} refused some recipients: {sorted(refused)}", retryable=False)
