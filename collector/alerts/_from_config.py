"""Turning the validated [alerts] configuration into rules, channels and a retry policy."""

from __future__ import annotations

import pathlib

from passhat.collector.alerts._channels import Channel, EmailChannel, SlackChannel, WebhookChannel
from passhat.collector.alerts._delivery import RetryPolicy
from passhat.collector.alerts._types import AlertRule
from passhat.collector.config import AlertsConfig, EmailChannelConfig, SlackChannelConfig


def rules_from_config(config: AlertsConfig) -> list[AlertRule]:
    """The configured rules, in file order."""
    return [
        AlertRule(
            name=r.name,
            kind=r.kind,
            task_type=r.task_type,
            threshold=r.threshold,
            baseline_periods=r.baseline_periods,
            min_tickets=r.min_tickets,
            confidence=r.confidence,
            min_drop=r.min_drop,
            permutations=r.permutations,
            cooldown_periods=r.cooldown_periods,
            resolve_margin=r.resolve_margin,
            resolve_confidence=r.resolve_confidence,
            correction=r.correction,
            severity=r.severity,
            channels=tuple(r.channels),
        )
        for r in config.rules
    ]


def channels_from_config(config: AlertsConfig, *, base_dir: pathlib.Path | None = None) -> list[Channel]:
    """The configured channels, by name; relative `ca_file` paths are taken from ``base_dir`` (the config's folder)."""
    base = base_dir if base_dir is not None else pathlib.Path.cwd()
    timeout = config.retry.timeout_seconds
    channels: list[Channel] = []
    for name, ch in sorted(config.channels.items()):
        if isinstance(ch, EmailChannelConfig):
            channels.append(
                EmailChannel(
                    name=name,
                    host=ch.host,
                    sender=ch.sender,
                    recipients=tuple(ch.to),
                    port=ch.port,
                    username=ch.username,
                    password=ch.password,
                    starttls=ch.starttls,
                    use_ssl=ch.ssl,
                    ca_file=None if ch.ca_file is None else str(base / pathlib.Path(ch.ca_file).expanduser()),
                    timeout=timeout,
                )
            )
        elif isinstance(ch, SlackChannelConfig):
            channels.append(SlackChannel(name=name, url=ch.url, timeout=timeout))
        else:
            channels.append(WebhookChannel(name=name, url=ch.url, headers=dict(ch.headers), timeout=timeout))
    return channels


def retry_from_config(config: AlertsConfig) -> RetryPolicy:
    """The configured delivery retry policy."""
    r = config.retry
    return RetryPolicy(
        attempts=r.attempts,
        backoff_seconds=r.backoff_seconds,
        multiplier=r.multiplier,
        max_backoff_seconds=r.max_backoff_seconds,
    )
