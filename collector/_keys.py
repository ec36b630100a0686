"""API keys: generated once, shown once, stored as a sha256 hash, identified by a public prefix."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets

from passhat.collector.store import ApiKey, Store

KEY_PREFIX = "phk_"


def hash_api_key(key: str) -> str:
    """The stored form of a key. Keys carry 192 random bits, so a plain sha256 cannot be brute-forced."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def create_api_key(store: Store, project: str, *, label: str | None = None) -> tuple[str, ApiKey]:
    """Make a key for `project` (created if needed); return the key (never stored) and its stored record."""
    store.ensure_project(project)
    prefix = KEY_PREFIX + secrets.token_hex(4)
    key = f"{prefix}_{secrets.token_urlsafe(24)}"
    record = ApiKey(
        prefix=prefix,
        project=project,
        key_hash=hash_api_key(key),
        created_at=dt.datetime.now(dt.UTC).replace(microsecond=0),
        label=label,
    )
    store.add_api_key(record)
    return key, record
