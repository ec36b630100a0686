"""The collector's settings: one pydantic model, each field with an environment-variable fallback."""

from __future__ import annotations

import json
import os
import pathlib

from pydantic import BaseModel, Field

from passhat.collector.ingest._normalize import TicketRules
from passhat.collector.store import default_store_url


class SettingsError(ValueError):
    """A PASSHAT_* environment variable the collector cannot use: the message names it and what to write."""


def _env_task_types() -> dict[str, str]:
    raw = os.environ.get("PASSHAT_TASK_TYPES") or ""
    if not raw.strip():
        return {}
    try:
        mapping = json.loads(raw)
    except ValueError as exc:
        raise SettingsError(
            f'PASSHAT_TASK_TYPES must be a JSON object like {{"Agent workflow": "refund"}}: {exc}'
        ) from exc
    if not isinstance(mapping, dict) or not all(isinstance(v, str) for v in mapping.values()):
        raise SettingsError(
            'PASSHAT_TASK_TYPES must be a JSON object of names to task types, like {"triage": "refund"}'
        )
    return {str(k): v for k, v in mapping.items()}


_TRUE, _FALSE = ("1", "true", "yes", "on"), ("", "0", "false", "no", "off")


def _env_flag(name: str) -> bool:
    value = (os.environ.get(name) or "").strip().lower()
    if value not in _TRUE + _FALSE:
        raise SettingsError(f"{name} must be 1 or 0 (true/false, yes/no, on/off), got {os.environ[name]!r}")
    return value in _TRUE


def _default_data_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("PASSHAT_DATA_DIR") or pathlib.Path.home() / ".passhat")


class CollectorSettings(BaseModel):
    """What `create_app` needs. `store_url` defaults to a SQLite file in `data_dir`."""

    data_dir: pathlib.Path = Field(default_factory=_default_data_dir)
    store_url: str | None = Field(default_factory=lambda: os.environ.get("PASSHAT_STORE_URL") or None)
    max_body_bytes: int = Field(default=16 * 1024 * 1024, ge=1024)  # compressed and decompressed
    max_attribute_bytes: int = Field(default=256 * 1024, ge=16)
    max_queued_bytes: int = Field(default=128 * 1024 * 1024, ge=1)  # request bytes; beyond: 429 + Retry-After
    max_commit_spans: int = Field(default=20_000, ge=1)  # spans per group commit
    retry_after_s: int = Field(default=1, ge=1)
    key_cache_s: float = Field(default=5.0, ge=0.0)  # how long a key lookup is reused (revocation delay)
    auth_failures_per_minute: int = Field(default=120, ge=1)  # refused keys per client address; beyond: 429
    # Slow clients: a request's headers must arrive within header_timeout_s of its first byte (or of the
    # connection's opening), its body within body_timeout_s of its headers; else 408 and the connection closes.
    header_timeout_s: float = Field(default=10.0, gt=0.0)
    body_timeout_s: float = Field(default=30.0, gt=0.0)
    # Workflow or agent names (what a ticket would be typed by) to task types: PASSHAT_TASK_TYPES, JSON.
    task_types: dict[str, str] = Field(default_factory=_env_task_types)
    # LLM-only apps: every root span is a ticket (PASSHAT_ROOT_TICKETS=1).
    root_tickets: bool = Field(default_factory=lambda: _env_flag("PASSHAT_ROOT_TICKETS"))
    # A bearer token that lets a scrape of /metrics see every project's gauges (PASSHAT_METRICS_TOKEN); without
    # it a scrape sees its key's project only, and a scrape without any credential aggregates only.
    metrics_token: str | None = Field(default_factory=lambda: os.environ.get("PASSHAT_METRICS_TOKEN") or None)

    def ticket_rules(self) -> TicketRules:
        return TicketRules(task_types=dict(self.task_types), root_tickets=self.root_tickets)

    def resolved_store_url(self) -> str:
        return self.store_url or default_store_url(self.data_dir)
