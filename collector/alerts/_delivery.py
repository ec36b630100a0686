"""Delivering a notice to its channels, each retried with bounded exponential backoff; every attempt reported."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from passhat.collector.alerts._channels import Channel, DeliveryError, EmailChannel, email_message
from passhat.collector.alerts._types import AlertNotice


@dataclass(frozen=True)
class RetryPolicy:
    """At most ``attempts`` tries per channel; waits backoff, backoff * multiplier, ... capped at max_backoff."""

    attempts: int = 3
    backoff_seconds: float = 1.0
    multiplier: float = 2.0
    max_backoff_seconds: float = 30.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"attempts must be at least 1, got {self.attempts}")
        if self.backoff_seconds < 0 or self.max_backoff_seconds < 0 or self.multiplier < 1:
            raise ValueError("backoff times must be >= 0 and the multiplier >= 1")

    def wait_before(self, attempt: int) -> float:
        """Seconds to wait before attempt number ``attempt`` (1-based; no wait before the first)."""
        if attempt <= 1:
            return 0.0
        return float(min(self.backoff_seconds * self.multiplier ** (attempt - 2), self.max_backoff_seconds))


@dataclass(frozen=True)
class DeliveryAttempt:
    """One try of delivering one notice to one channel."""

    alert_id: str
    channel: str
    channel_type: str
    attempt: int
    ok: bool
    error: str | None
    retryable: bool
    duration_ms: float
    at: dt.datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "alert_id": self.alert_id,
            "channel": self.channel,
            "channel_type": self.channel_type,
            "attempt": self.attempt,
            "ok": self.ok,
            "error": self.error,
            "retryable": self.retryable,
            "duration_ms": round(self.duration_ms, 3),
            "at": self.at.isoformat(),
        }


def retrying(
    delivery_id: str,
    channel: Channel,
    action: Callable[[], None],
    policy: RetryPolicy,
    *,
    on_attempt: Callable[[DeliveryAttempt], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> list[DeliveryAttempt]:
    """Run ``action`` (one send to ``channel``) until it succeeds, fails for good, or the attempts run out.

    ``action`` raises `DeliveryError` to fail; each try is reported under ``delivery_id`` (a notice's alert id,
    or a report delivery's id)."""
    attempts: list[DeliveryAttempt] = []
    for number in range(1, policy.attempts + 1):
        wait = policy.wait_before(number)
        if wait > 0:
            sleep(wait)
        at = dt.datetime.now(dt.UTC)
        started = time.perf_counter()
        error: str | None = None
        retryable = False
        try:
            action()
        except DeliveryError as exc:
            error, retryable = str(exc), exc.retryable
        attempt = DeliveryAttempt(
            alert_id=delivery_id,
            channel=channel.name,
            channel_type=channel.type,
            attempt=number,
            ok=error is None,
            error=error,
            retryable=retryable,
            duration_ms=1000.0 * (time.perf_counter() - started),
            at=at,
        )
        attempts.append(attempt)
        if on_attempt is not None:
            on_attempt(attempt)
        if attempt.ok or not retryable:
            break
    return attempts


def deliver_to(
    notice: AlertNotice,
    channel: Channel,
    policy: RetryPolicy,
    *,
    on_attempt: Callable[[DeliveryAttempt], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> list[DeliveryAttempt]:
    """Try one channel until it succeeds, fails for good, or the attempts run out."""
    return retrying(notice.alert_id, channel, _sending(notice, channel), policy, on_attempt=on_attempt, sleep=sleep)


def _sending(notice: AlertNotice, channel: Channel) -> Callable[[], None]:
    """One send of ``notice`` to ``channel``. An email is rendered once, so that its retries are the same message
    (one Date, one Message-ID: a reader's client shows a message that got through twice once)."""
    if not isinstance(channel, EmailChannel):
        return lambda: channel.send(notice)
    try:
        message = email_message(notice, channel.sender, channel.recipients)
    except Exception as exc:  # a message that cannot be rendered fails this channel only
        error = DeliveryError(f"could not render the email: {type(exc).__name__}: {exc}", retryable=False)

        def fail() -> None:
            raise error

        return fail
    return lambda: channel.send_message(message)


def deliver(
    notice: AlertNotice,
    channels: Sequence[Channel],
    policy: RetryPolicy,
    *,
    on_attempt: Callable[[DeliveryAttempt], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> list[DeliveryAttempt]:
    """Deliver ``notice`` to the channels it names (all of ``channels`` when it names none), one after another."""
    chosen = [ch for ch in channels if not notice.channels or ch.name in notice.channels]
    attempts: list[DeliveryAttempt] = []
    for channel in chosen:
        attempts.extend(deliver_to(notice, channel, policy, on_attempt=on_attempt, sleep=sleep))
    return attempts


def outcomes(attempts: Sequence[DeliveryAttempt]) -> dict[str, str]:
    """Each channel's final outcome: ``ok`` or the last error."""
    final: dict[str, str] = {}
    for attempt in attempts:
        final[attempt.channel] = "ok" if attempt.ok else (attempt.error or "failed")
    return final


def retry_line(attempt: DeliveryAttempt, policy: RetryPolicy) -> str | None:
    """What to say of a failed try that will be tried again, as it happens; None for a success and for a
    channel's last try, whose failure `failure_text` says with the final outcome (each failure said once)."""
    if attempt.ok or not attempt.retryable or attempt.attempt >= policy.attempts:
        return None
    wait = policy.wait_before(attempt.attempt + 1)
    return (
        f"{attempt.channel}: attempt {attempt.attempt} of {policy.attempts} failed: {attempt.error}; "
        f"trying again in {wait:g} s"
    )


def failure_text(last: DeliveryAttempt) -> str:
    """A channel's final failure, from its last try: how many tries it had, whether trying again could help, and
    the last error."""
    count = f"{last.attempt} attempt{'' if last.attempt == 1 else 's'}"
    why = "" if last.retryable else " (trying again cannot help)"
    return f"failed after {count}{why}: {last.error or 'failed'}"
