"""The config and store the commands reading production data open, and the period they are given."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import TYPE_CHECKING

from passhat.collector.cli._console import fail
from passhat.collector.store import Period, parse_period

if TYPE_CHECKING:  # imported where used: `passhat --help` should not load pydantic, numpy or SQLAlchemy
    from passhat.collector.config import PasshatConfig
    from passhat.collector.store import Store


def load_loop_config(path: Path | None) -> PasshatConfig:
    """The config named, or $PASSHAT_CONFIG, or ./passhat.toml when present, else the defaults."""
    from passhat.collector.config import ConfigError, PasshatConfig, load_config

    chosen = path or (Path(os.environ["PASSHAT_CONFIG"]) if os.environ.get("PASSHAT_CONFIG") else None)
    if chosen is None and Path("passhat.toml").exists():
        chosen = Path("passhat.toml")
    if chosen is None:
        return PasshatConfig()
    try:
        return load_config(chosen)
    except ConfigError as exc:
        fail(f"{exc.source}: " + "; ".join(exc.problems))


def open_loop_store(config: PasshatConfig, store_url: str | None) -> Store:
    """The store named on the command line, or $PASSHAT_STORE_URL, or the config's."""
    from passhat.collector.store import StoreError, open_store

    url = store_url or os.environ.get("PASSHAT_STORE_URL") or config.store_url()
    try:
        return open_store(url)
    except StoreError as exc:
        fail(str(exc))


def period_from(period: str | None, since: str | None, *, missing: str = "give one of --period or --since") -> Period:
    """`--period 2026-W48` or `--since 2026-11-20` (up to now)."""
    if (period is None) == (since is None):
        fail(missing)
    try:
        if period is not None:
            return parse_period(period)
    except ValueError as exc:
        fail(str(exc))
    assert since is not None
    try:
        start = dt.date.fromisoformat(since[:10])
    except ValueError as exc:
        fail(f"--since {since!r} is not a calendar date ({exc}): write a day like 2026-11-20")
    end = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)
    if start >= end:
        fail(f"--since {since} is in the future")
    return Period(f"since-{start.isoformat()}", start, end)
