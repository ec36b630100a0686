"""Fixtures for the suite's tests: a real SQLite store holding two suite runs of simulated agents (careful and
sloppy flaw profiles of the ReferenceAgent) on a small part of the suite, made once per test session."""

from __future__ import annotations

import asyncio
import pathlib
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from passhat.collector.store import Store, open_store
from passhat.collector.suite import SuiteRunSettings, run_suite, suite_agent

PART = SuiteRunSettings(
    domains=("retail", "travel"),
    task_types=("cancel_pending_order", "exchange_variant", "change_flight_date", "seat_change"),
    k=3,
)
"""Two domains, two task types each, k = 3: 31 tasks, 93 trials a run."""


@dataclass
class StoredRuns:
    url: str
    store: Store
    careful: str
    sloppy: str


@pytest.fixture(scope="session")
def stored_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StoredRuns]:
    folder: pathlib.Path = tmp_path_factory.mktemp("suite")
    url = f"sqlite:///{folder / 'suite.db'}"
    store = open_store(url)
    store.ensure_project("default")
    ids = [
        asyncio.run(run_suite(store, "default", suite_agent("reference", flaws=name), PART)).run.run_id
        for name in ("careful", "sloppy")
    ]
    yield StoredRuns(url, store, *ids)
    store.close()
