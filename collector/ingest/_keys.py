"""API keys: generated once, shown once, stored as a sha256 hash, identified by a public prefix."""

from __future__ import annotations

import datetime as dt
import secrets

from passhat.collector.store import ApiKey, Store
from passhat.collector.store import hash_api_key as hash_api_key  # re-exported: ingest code and tests use it from here

KEY_PREFIX = "phk_"


def key_prefix(key: str) -> str:
    """The public prefix of a key (`phk_` and 8 hex digits): how listings and revocation name it."""
    return key[: len(KEY_PREFIX) + 8]


def create_api_key(store: Store, project: str, *, label: str | None = None) -> tuple[str, ApiKey]:
    """Make a key for `project` (created if needed); return the key (never stored) and its stored record."""
    store.ensure_project(project)
    key = f"{KEY_PREFIX}{secrets.token_hex(4)}_{secrets.token_urlsafe(24)}"
    prefix = key_prefix(key)
    record = ApiKey(
        prefix=prefix,
        project=project,
        key_hash=hash_api_key(key),
        created_at=dt.datetime.now(dt.UTC).replace(microsecond=0),
        label=label,
    )
    store.add_api_key(record)
    return key, record
