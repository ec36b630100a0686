"""Suite runs: stored as a run of their own kind, traced into the store, resumable, and reused when finished."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from passhat.collector.store import RunParams, open_store
from passhat.collector.suite import SuiteRunSettings, load_suite, run_suite, suite_agent, suite_of, suite_table
from tests.collector.suite.conftest import PART, StoredRuns

pytestmark = pytest.mark.slow


class RunInterruptedError(Exception):
    """Stands for Ctrl-C or a crash partway through a run."""


def _comparable(table: dict[str, Any]) -> dict[str, Any]:
    """The table's figures, run ids replaced by their position (two runs of one agent differ only there)."""
    ids = [agent["run_id"] for agent in table["agents"]]
    text = repr({key: table[key] for key in ("cells", "curves", "ranks", "agreement", "swing", "paired")})
    for index, run_id in enumerate(ids):
        text = text.replace(run_id, f"run{index}")
    return {
        "figures": text,
        "tasks": [a["tasks"] for a in table["agents"]],
        "trials": [a["trials"] for a in table["agents"]],
    }


def _planned() -> int:
    """Trials a run of PART plans: its tasks times k."""
    return PART.k * len(load_suite().select(domains=PART.domains, task_types=PART.task_types))


def test_an_interrupted_run_resumes_and_gives_the_same_table(stored_runs: StoredRuns) -> None:
    store = stored_runs.store
    planned = _planned()
    agent = suite_agent("reference", flaws="careful")
    settings = dataclasses.replace(PART, label="interrupted")
    seen: list[int] = []

    def stop_partway(done: int, total: int) -> None:
        seen.append(done)
        if done >= 30:
            raise RunInterruptedError

    with pytest.raises(RunInterruptedError):
        asyncio.run(run_suite(store, "default", agent, settings, progress=stop_partway))
    partial = [
        run
        for run in store.list_replay_runs("default")
        if (suite_of(run) or {}).get("identity", {}).get("label") == "interrupted"
    ]
    assert len(partial) == 1 and partial[0].status == "running"
    kept = len(store.list_trials("default", partial[0].run_id))
    assert 30 <= kept < planned

    resumed = asyncio.run(run_suite(store, "default", agent, settings))
    assert resumed.resumed and resumed.run.run_id == partial[0].run_id and resumed.run.status == "finished"
    assert resumed.ran == planned - kept and len(resumed.trials) == planned
    assert len({(t.ticket_id, t.attempt) for t in resumed.trials}) == planned

    whole = suite_table(store, "default", [stored_runs.careful, stored_runs.sloppy])
    again = suite_table(store, "default", [resumed.run.run_id, stored_runs.sloppy])
    assert _comparable(again.to_dict()) == _comparable(whole.to_dict())


def test_a_suite_run_is_its_own_kind_with_traces_in_the_store(stored_runs: StoredRuns) -> None:
    store = stored_runs.store
    run = store.get_replay_run("default", stored_runs.careful)
    assert run is not None and run.status == "finished"
    block = suite_of(run)
    assert block is not None and block["identity"]["version"] == "v1" and block["tasks"] == _planned() // PART.k
    params = RunParams.of(run)
    assert params.period is None and params.simulated and params.exploratory  # never a period's official figures
    trials = store.list_trials("default", run.run_id)
    assert len(trials) == _planned() and {t.domain for t in trials} == {"retail", "travel"}
    assert all(t.ticket_id.startswith("suite-v1/") for t in trials)
    again = asyncio.run(run_suite(store, "default", suite_agent("reference", flaws="careful"), PART))
    assert again.reused and again.ran == 0 and again.run.run_id == run.run_id


def test_traces_of_a_suite_run_reach_the_store(tmp_path: Any) -> None:
    from passhat.collector.loop import store_runtime

    store = open_store(f"sqlite:///{tmp_path / 'traced.db'}")
    store.ensure_project("default")
    runtime = store_runtime(store, "default")
    settings = SuiteRunSettings(domains=("retail",), task_types=("cancel_pending_order",), k=1)
    try:
        outcome = asyncio.run(run_suite(store, "default", suite_agent("reference"), settings, runtime=runtime))
    finally:
        runtime.shutdown()
    trial = outcome.trials[0]
    assert trial.trace_id and store.get_trace("default", trial.trace_id)
    store.close()
