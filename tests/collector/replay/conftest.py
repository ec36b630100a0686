"""Fixtures shared by the replay tests."""

from __future__ import annotations

import pathlib

import pytest

from passhat.collector.store import open_store
from tests.collector.replay.worker_week import serve_week


@pytest.fixture(scope="module")
def week_db(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A store holding a week of simulated production tickets (copied by each test, so runs do not meet)."""
    path = tmp_path_factory.mktemp("workers-week") / "week.db"
    store = open_store(f"sqlite:///{path}")
    try:
        serve_week(store)
    finally:
        store.close()
    return path
