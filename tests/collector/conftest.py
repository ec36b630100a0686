"""Fixtures for the collector's tests: real SQLite stores in temporary directories, and a real collector
(uvicorn on a free 127.0.0.1 port) with an API key for each of two projects."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator

import pytest

from passhat.collector import CollectorSettings
from passhat.collector.store import Store, open_store
from tests.collector.server import Collector, RunningCollector, new_key, running_collector


@pytest.fixture
def sqlite_url(tmp_path: pathlib.Path) -> str:
    return f"sqlite:///{tmp_path / 'passhat.db'}"


@pytest.fixture
def sql_store(sqlite_url: str) -> Iterator[Store]:
    store = open_store(sqlite_url)
    yield store
    store.close()


@pytest.fixture
def collector_settings() -> CollectorSettings:
    return CollectorSettings(key_cache_s=0.0, max_body_bytes=4 * 1024 * 1024, max_attribute_bytes=64 * 1024)


@pytest.fixture
def collector(sql_store: Store, collector_settings: CollectorSettings) -> Iterator[Collector]:
    shop_key = new_key(sql_store, "shop")
    bank_key = new_key(sql_store, "bank")
    running: RunningCollector
    with running_collector(sql_store, collector_settings) as running:
        yield Collector(running.url, sql_store, shop_key, bank_key)
