"""Fixtures for the collector's tests: real SQLite stores in temporary directories."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator

import pytest

from passhat.collector.store import Store, open_store


@pytest.fixture
def sqlite_url(tmp_path: pathlib.Path) -> str:
    return f"sqlite:///{tmp_path / 'passhat.db'}"


@pytest.fixture
def sql_store(sqlite_url: str) -> Iterator[Store]:
    store = open_store(sqlite_url)
    yield store
    store.close()
