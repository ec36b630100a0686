"""The before-you-ship gate: it fails on a planted regression (credibly worse than the baseline on the same
tasks, and credibly below a threshold) with a readable message, and passes without it."""

from __future__ import annotations

import asyncio

import pytest

from passhat.collector.replay import AgentSpec
from passhat.collector.suite import GateFailure, SuiteError, SuiteRunSettings, gate_run, run_suite, ship_gate
from passhat.sandbox import FlawConfig, ReferenceAgent
from tests.collector.suite.conftest import StoredRuns

pytestmark = pytest.mark.slow

PART = SuiteRunSettings(domains=("retail",), task_types=("cancel_pending_order", "change_pending_address"), k=4)
HEALTHY = [(0.8, 1.0), (0.2, 0.85)]  # most tasks always pass, a fifth pass 85% of attempts


def _run(store: object, label: str, flaws: FlawConfig) -> str:
    spec = AgentSpec(ReferenceAgent.factory(flaws), f"ReferenceAgent/{label} (simulation)", simulated=True)
    settings = SuiteRunSettings(domains=PART.domains, task_types=PART.task_types, k=PART.k, label=label)
    return asyncio.run(run_suite(store, "default", spec, settings)).run.run_id  # type: ignore[arg-type]


def test_the_gate_fails_on_a_planted_regression_and_passes_without_it(stored_runs: StoredRuns) -> None:
    store = stored_runs.store
    baseline = _run(store, "baseline", FlawConfig.from_mixture(HEALTHY))
    same = _run(store, "unchanged", FlawConfig.from_mixture(HEALTHY))
    regressed = _run(
        store, "regressed",
        FlawConfig.from_mixture(HEALTHY, per_task_type={"cancel_pending_order": [(1.0, 0.3)]}),
    )  # fmt: skip

    fine = gate_run(store, "default", same, threshold=0.5, baseline=baseline)
    assert fine.passed, fine.message()
    fine.check()
    assert {row["task_type"] for row in fine.task_types} == set(PART.task_types)

    caught = gate_run(store, "default", regressed, threshold=0.5, baseline=baseline)
    assert not caught.passed
    with pytest.raises(GateFailure) as raised:
        caught.check()
    message = str(raised.value)
    assert f"suite gate failed for run {regressed}" in message
    assert "retail/cancel_pending_order: pass^4" in message and "credibly below the threshold 50.0%" in message
    assert f"credibly worse than run {baseline}" in message
    assert "change_pending_address" not in message  # the untouched task type passes
    assert len(caught.failures) == 2


def test_ship_gate_runs_the_suite_part_and_judges_it(stored_runs: StoredRuns) -> None:
    result = ship_gate("reference", flaws="careful", store=stored_runs.url, domains=["retail"],
                       task_types=["cancel_pending_order"], k=3, threshold=0.2)  # fmt: skip
    result.check()
    assert result.passed and result.k == 3 and result.task_types[0]["tickets"] == 7
    strict = gate_run(stored_runs.store, "default", stored_runs.sloppy, threshold=0.99)
    assert not strict.passed and "credibly below the threshold 99.0%" in strict.message()
    with pytest.raises(SuiteError, match="threshold, a baseline run, or both"):
        gate_run(stored_runs.store, "default", stored_runs.sloppy)
    with pytest.raises(SuiteError, match="between 0 and 1"):
        gate_run(stored_runs.store, "default", stored_runs.sloppy, threshold=80)
