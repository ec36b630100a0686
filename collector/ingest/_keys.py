"""API keys: generated once, shown once, stored as a sha256 hash, identified by a public prefix."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets

from passhat.collector.store import ApiKey, Store

KEY_PREFIX = "phk_"


def key_prefix(key: str) -> str:
    """The public prefix of a key (`phk_` and 8 hex digits): how listings and revocation name it."""
    return key[: len(KEY_PREFIX) + 8]


def hash_api_key(key: str) -> str:
    """The stored form of a key. Keys carry 192 random bits, so a plain sha256 cannot be brute-forced."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


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
