"""The stored form of an API key, shared by ingest (Bearer keys) and the web UI (its login and sessions)."""

from __future__ import annotations

import hashlib


def hash_api_key(key: str) -> str:
    """The stored form of a key. Keys carry 192 random bits, so a plain sha256 cannot be brute-forced."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()
