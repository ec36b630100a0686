"""A real collector with the web UI (uvicorn on 127.0.0.1), two seeded projects and a key for each."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from passhat.collector import CollectorSettings
from passhat.collector.store import Store
from passhat.collector.ui import ui_router
from tests.collector.server import new_key, running_collector
from tests.collector.ui.ui_data import Seeded, seed


@dataclass
class UiCollector:
    url: str
    store: Store
    shop_key: str
    bank_key: str
    shop: Seeded
    bank: Seeded

    def client(self, key: str | None = None) -> httpx.Client:
        headers = {"authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30.0, follow_redirects=False)


@pytest.fixture
def ui(sql_store: Store) -> Iterator[UiCollector]:
    shop, bank = seed(sql_store, "shop"), seed(sql_store, "bank")
    shop_key, bank_key = new_key(sql_store, "shop"), new_key(sql_store, "bank")
    with running_collector(sql_store, CollectorSettings(key_cache_s=0.0), routers=[ui_router()]) as running:
        yield UiCollector(running.url, sql_store, shop_key, bank_key, shop, bank)
