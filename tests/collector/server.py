"""A real collector for the tests: the FastAPI app under uvicorn on a free 127.0.0.1 port, in a thread."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from passhat.collector.ingest._keys import create_api_key
from passhat.collector.store import Store
from tests.collector.embedded import RunningCollector, running_collector

__all__ = ["Collector", "RunningCollector", "new_key", "running_collector"]


def new_key(store: Store, project: str) -> str:
    return create_api_key(store, project)[0]


@dataclass
class Collector:
    """A running collector with two projects: `shop` (key `shop_key`) and `bank` (key `bank_key`)."""

    url: str
    store: Store
    shop_key: str
    bank_key: str

    def client(self, key: str | None) -> httpx.Client:
        headers = {"authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30.0)
