"""What a running collector app holds (settings, store, writer, key cache, metrics, business gauges), and the
dependency to reach it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Annotated, TypeVar

from fastapi import Depends, Request

from passhat.collector.ingest._business import BusinessGauges
from passhat.collector.ingest._keys import hash_api_key
from passhat.collector.ingest._metrics import CollectorMetrics
from passhat.collector.ingest._settings import CollectorSettings
from passhat.collector.ingest._writer import GroupCommitWriter
from passhat.collector.store import Store

_V = TypeVar("_V")


class KeyCache:
    """Key hash -> project, so ingest does not read the keys table on every request.

    A valid key is reused for `ttl` seconds (so a revoked key is refused within `ttl`, 5 s by default); an
    unknown or revoked one for at most `UNKNOWN_TTL` seconds, in a table of its own: a flood of random keys
    evicts only other random keys, never the valid ones. Both tables are bounded and drop their oldest entry
    first."""

    MAX_KEYS = 10_000
    MAX_UNKNOWN = 4_096
    UNKNOWN_TTL = 1.0

    def __init__(self, store: Store, ttl: float) -> None:
        self._store = store
        self._ttl = ttl
        self._unknown_ttl = min(ttl, self.UNKNOWN_TTL)
        self._known: dict[str, tuple[float, str]] = {}
        self._unknown: dict[str, float] = {}

    def project_for(self, key: str, *, look_up: bool = True) -> str | None:
        """The key's project, or None; with `look_up=False`, only what the cache already knows is valid."""
        digest = hash_api_key(key)
        now = time.monotonic()
        hit = self._known.get(digest)
        if hit is not None and now - hit[0] < self._ttl:
            return hit[1]
        if not look_up:
            return None
        refused = self._unknown.get(digest)
        if refused is not None and now - refused < self._unknown_ttl:
            return None
        record = self._store.find_api_key(digest)
        if record is not None and record.active:
            self._unknown.pop(digest, None)
            _remember(self._known, digest, (now, record.project), self.MAX_KEYS)
            return record.project
        self._known.pop(digest, None)
        _remember(self._unknown, digest, now, self.MAX_UNKNOWN)
        return None


def _remember(table: dict[str, _V], digest: str, value: _V, bound: int) -> None:
    table.pop(digest, None)  # re-inserted last: dicts keep insertion order, the first entry is the oldest
    table[digest] = value
    while len(table) > bound:
        del table[next(iter(table))]


class FailedAuthLimiter:
    """At most `per_minute` refused keys per client address per minute; past that, the address's requests are
    answered 429 without a key lookup, except with a key the cache already knows is valid (a client behind
    the same address as a scanner keeps working). Bounded in addresses, oldest window dropped first."""

    MAX_ADDRESSES = 10_000
    WINDOW_S = 60.0

    def __init__(self, per_minute: int) -> None:
        self._limit = per_minute
        self._windows: dict[str, tuple[float, int]] = {}

    def wait_s(self, address: str) -> float:
        """Seconds until `address` may try unknown keys again; 0 when it may now."""
        window = self._windows.get(address)
        if window is None:
            return 0.0
        elapsed = time.monotonic() - window[0]
        if elapsed >= self.WINDOW_S or window[1] < self._limit:
            return 0.0
        return self.WINDOW_S - elapsed

    def refused(self, address: str) -> None:
        now = time.monotonic()
        window = self._windows.get(address)
        if window is None or now - window[0] >= self.WINDOW_S:
            _remember(self._windows, address, (now, 1), self.MAX_ADDRESSES)
        else:
            self._windows[address] = (window[0], window[1] + 1)


@dataclass(slots=True)
class AppState:
    """One app's running parts, made by its lifespan (the store may be the caller's, the rest is the app's)."""

    settings: CollectorSettings
    store: Store
    writer: GroupCommitWriter
    metrics: CollectorMetrics
    keys: KeyCache = field(init=False)
    auth_failures: FailedAuthLimiter = field(init=False)
    business: BusinessGauges = field(init=False)

    def __post_init__(self) -> None:
        self.business = BusinessGauges(self.store)
        self.keys = KeyCache(self.store, self.settings.key_cache_s)
        self.auth_failures = FailedAuthLimiter(self.settings.auth_failures_per_minute)


async def app_state(request: Request) -> AppState:
    """The request's app state. Async so FastAPI calls it on the event loop, not through its thread pool."""
    state = request.app.state.passhat
    if not isinstance(state, AppState):
        raise RuntimeError("the collector app has no state: run it under its lifespan (uvicorn, or `with TestClient`)")
    return state


CurrentState = Annotated[AppState, Depends(app_state)]
