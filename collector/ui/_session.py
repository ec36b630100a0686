"""Who is looking: a project API key (Bearer, for tools) or a session cookie made from one (for browsers).

The cookie never holds the key. It holds the key's public prefix, an expiry, and an HMAC of both keyed by the
key's stored hash, so it is verified with what the store already has (no session table, and every worker of
`passhat serve --workers N` accepts it), it stops working when the key is revoked, and a stolen cookie is not
an ingest credential.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
from dataclasses import dataclass

from passhat.collector.store import ApiKey, Store, hash_api_key

COOKIE_NAME = "passhat_session"
SESSION_SECONDS = 12 * 3600
#: How long a key lookup is trusted: a revoked key stops opening pages within this many seconds.
_CACHE_SECONDS = 5.0


@dataclass(frozen=True)
class Viewer:
    """A signed-in viewer: the project every page and fragment is scoped to."""

    project: str
    key_prefix: str


def _signature(key: ApiKey, payload: str) -> str:
    return hmac.new(key.key_hash.encode("ascii"), payload.encode("utf-8"), hashlib.sha256).hexdigest()


class Sessions:
    """Turns keys into session cookies and cookies or Bearer keys back into a `Viewer`."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._by_hash: dict[str, tuple[float, ApiKey | None]] = {}
        self._by_prefix: tuple[float, dict[str, ApiKey]] = (-_CACHE_SECONDS, {})

    def _key_by_hash(self, key_hash: str) -> ApiKey | None:
        now = time.monotonic()
        with self._lock:
            hit = self._by_hash.get(key_hash)
            if hit is not None and now - hit[0] < _CACHE_SECONDS:
                return hit[1]
        record = self._store.find_api_key(key_hash)
        with self._lock:
            if len(self._by_hash) > 10_000:
                self._by_hash.clear()
            self._by_hash[key_hash] = (now, record)
        return record

    def _key_by_prefix(self, prefix: str) -> ApiKey | None:
        now = time.monotonic()
        with self._lock:
            loaded, keys = self._by_prefix
        if now - loaded >= _CACHE_SECONDS:
            keys = {k.prefix: k for k in self._store.list_api_keys()}
            with self._lock:
                self._by_prefix = (now, keys)
        return keys.get(prefix)

    def viewer_for_key(self, key: str) -> Viewer | None:
        """The viewer of a project API key, or None when the key is unknown or revoked."""
        record = self._key_by_hash(hash_api_key(key.strip()))
        if record is None or not record.active:
            return None
        return Viewer(record.project, record.prefix)

    def cookie_for_key(self, key: str, *, now: float | None = None) -> str | None:
        """A session cookie value for a valid key (None for an unknown or revoked one)."""
        record = self._key_by_hash(hash_api_key(key.strip()))
        if record is None or not record.active:
            return None
        expires = int(now if now is not None else time.time()) + SESSION_SECONDS
        payload = f"{record.prefix}.{expires}"
        return f"{payload}.{_signature(record, payload)}"

    def viewer_for_cookie(self, value: str, *, now: float | None = None) -> Viewer | None:
        """The viewer of a session cookie: None when forged, expired, or its key was revoked."""
        prefix, _, rest = value.partition(".")
        expires, _, signature = rest.partition(".")
        if not expires.isdigit() or int(expires) < (now if now is not None else time.time()):
            return None
        record = self._key_by_prefix(prefix)
        if record is None or not record.active:
            return None
        if not hmac.compare_digest(signature, _signature(record, f"{prefix}.{expires}")):
            return None
        return Viewer(record.project, record.prefix)
