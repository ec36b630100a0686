"""The config and store the commands reading production data open, and the period they are given."""

from __future__ import annotations

import datetime as dt
import os
import re
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


def chosen_store(config: PasshatConfig, store_url: str | None) -> tuple[str, str]:
    """The store URL named on the command line, or $PASSHAT_STORE_URL, or the config's, and which named it."""
    if store_url:
        return store_url, "--store"
    if os.environ.get("PASSHAT_STORE_URL"):
        return os.environ["PASSHAT_STORE_URL"], "$PASSHAT_STORE_URL"
    if config.store.url:
        return config.store_url(), "the config's store.url"
    return config.store_url(), "passhat's default (no --store, $PASSHAT_STORE_URL or store.url given)"


def open_loop_store(
    config: PasshatConfig, store_url: str | None, *, reads: str | None = None, project: str | None = None
) -> Store:
    """The store named on the command line, or $PASSHAT_STORE_URL, or the config's.

    ``reads``: the command only reads what is stored (production tickets, replay runs) of ``project``, and this is
    what it says when there is none. A SQLite store that holds nothing yet is then refused with it, saying why,
    before anything is created: a file that does not exist (a mistyped path, which opening would have created
    empty, folders and all) or an in-memory store (empty in every new process). So is a project the store has
    never heard of (a mistyped name: no ticket, no run) while it holds others, which the error lists."""
    from passhat.collector.store import StoreError, open_store

    url, named_by = chosen_store(config, store_url)
    if reads is not None:
        missing = missing_sqlite_store(url, named_by)
        if missing is not None:
            fail(f"{reads}: {missing}")
    try:
        store = open_store(url)
    except StoreError as exc:
        fail(str(exc))
    if reads is not None and project is not None:
        others = unknown_project(store, project)
        if others:
            store.close()
            fail(
                f"{reads}: the store has no project {project!r}, only {', '.join(repr(name) for name in others)}; "
                "check --project (or the config's project)"
            )
    return store


def unknown_project(store: Store, project: str) -> list[str]:
    """The store's other projects when it knows nothing of ``project`` (never registered, no ticket, no run)."""
    if store.get_project(project) is not None:
        return []
    others = sorted(each.name for each in store.list_projects())
    if not others or store.list_tickets(project, limit=1) or store.list_replay_runs(project, limit=1):
        return []
    return others


def missing_sqlite_store(url: str, named_by: str) -> str | None:
    """Why a SQLite URL names no store there is to read (an in-memory one, or a file that does not exist), with what
    to do; None for a SQLite file that exists and for every other store."""
    match = re.match(r"^sqlite(?:\+\w+)?://(?P<rest>.*)$", url, re.IGNORECASE)
    if match is None:
        return None
    rest = match["rest"]
    path, _, query = rest.removeprefix("/").partition("?")
    if path.startswith("file:"):  # a SQLite URI (`uri=true`): its own query may say it lives in memory
        path, _, more = path.removeprefix("file:").partition("?")
        query = f"{query}&{more}"
    if not rest.startswith("/") or path in ("", ":memory:") or "mode=memory" in query:
        return (
            f"{named_by} names an in-memory store ({url}), empty in every new process: name the collector's store "
            "file (sqlite:///path/to/passhat.db)"
        )
    if not Path(path).exists():
        return (
            f"there is no store at {path} (no such file), which {named_by} names: check the path (the collector, "
            "`passhat serve`, creates its store as it starts)"
        )
    return None


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
