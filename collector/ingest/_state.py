"""What a running collector app holds (settings, store, writer, key cache, metrics), and the dependency to reach it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request

from passhat.collector.ingest._keys import hash_api_key
from passhat.collector.ingest._metrics import CollectorMetrics
from passhat.collector.ingest._settings import CollectorSettings
from passhat.collector.ingest._writer import GroupCommitWriter
from passhat.collector.store import Store


class KeyCache:
    """Key hash -> project for `ttl` seconds, so ingest does not read the keys table on every request."""

    def __init__(self, store: Store, ttl: float) -> None:
        self._store = store
        self._ttl = ttl
        self._entries: dict[str, tuple[float, str | None]] = {}

    def project_for(self, key: str) -> str | None:
        digest = hash_api_key(key)
        now = time.monotonic()
        hit = self._entries.get(digest)
        if hit is not None and now - hit[0] < self._ttl:
            return hit[1]
        record = self._store.find_api_key(digest)
        project = record.project if record is not None and record.active else None
        if len(self._entries) > 10_000:
            self._entries.clear()
        self._entries[digest] = (now, project)
        return project


@dataclass(slots=True)
class AppState:
    """One app's running parts, made by its lifespan (the store may be the caller's, the rest is the app's)."""

    settings: CollectorSettings
    store: Store
    writer: GroupCommitWriter
    metrics: CollectorMetrics
    keys: KeyCache = field(init=False)

    def __post_init__(self) -> None:
        self.keys = KeyCache(self.store, self.settings.key_cache_s)


async def app_state(request: Request) -> AppState:
    """The request's app state. Async so FastAPI calls it on the event loop, not through its thread pool."""
    state = request.app.state.passhat
    if not isinstance(state, AppState):
        raise RuntimeError("the collector app has no state: run it under its lifespan (uvicorn, or `with TestClient`)")
    return state


CurrentState = Annotated[AppState, Depends(app_state)]
