"""Two runs on the same tickets: per task type paired differences, and the CI gate `passhat.collector.testing`
offers (a function, and a pytest fixture of the same name)."""

from __future__ import annotations

import datetime as dt
import pathlib
from collections.abc import Callable

import numpy as np
import pytest

import passhat.testing
from passhat.collector.replay import RunComparison, compare_trials
from passhat.collector.store import ReplayRun, TrialRow, open_store
from passhat.collector.testing import assert_no_regression as gate

K, TRIALS, TICKETS = 3, 6, 60
NOW = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
TYPES = ("cancel_pending_order", "order_status_inquiry")


def _run(run_id: str) -> ReplayRun:
    return ReplayRun(run_id=run_id, created_at=NOW, k=K, params={"period": "2026-W48", "trials": TRIALS})


def _trials(run_id: str, ps: dict[str, np.ndarray], rng: np.random.Generator) -> list[TrialRow]:
    rows = []
    for task_type, p in ps.items():
        for index, chance in enumerate(p):
            for attempt in range(TRIALS):
                rows.append(
                    TrialRow(
                        run_id=run_id, ticket_id=f"{task_type}-{index}", task_type=task_type, attempt=attempt,
                        passed=bool(rng.random() < chance), termination_reason="agent_stop", started_at=NOW,
                        duration_s=0.1,
                    )
                )  # fmt: skip
    return rows


def _pair(
    rng: np.random.Generator, regressed: str | None, drop: float = 0.25, candidate: str = "cand"
) -> tuple[list[TrialRow], list[TrialRow]]:
    ps = {name: rng.beta(6.0, 1.5, TICKETS) for name in TYPES}
    worse = {name: np.clip(p - (drop if name == regressed else 0.0), 0, 1) for name, p in ps.items()}
    return _trials("base", ps, rng), _trials(candidate, worse, rng)


def test_a_planted_regression_is_flagged_on_its_task_type_only() -> None:
    rng = np.random.default_rng(11)
    flagged = {name: 0 for name in TYPES}
    runs = 60
    for _ in range(runs):
        base, cand = _pair(rng, regressed="cancel_pending_order")
        for name in compare_trials(_run("base"), base, _run("cand"), cand, level=0.95).regressed:
            flagged[name] += 1
    assert flagged["cancel_pending_order"] / runs >= 0.95
    assert flagged["order_status_inquiry"] / runs <= 0.1


def test_an_identical_candidate_is_flagged_on_no_task_type_at_the_stated_rate() -> None:
    rng = np.random.default_rng(12)
    runs, flags = 60, 0
    for _ in range(runs):
        base, cand = _pair(rng, regressed=None)
        flags += len(compare_trials(_run("base"), base, _run("cand"), cand, level=0.95).regressed)
    # Two task types, each credibly lower by chance with probability about 2.5%.
    assert flags / (runs * len(TYPES)) <= 0.06


def test_the_pytest_gate_fails_a_regressed_candidate_and_passes_the_other_task_type(
    tmp_path: pathlib.Path, assert_no_regression: Callable[..., RunComparison]
) -> None:
    # The fixture comes from the collector's pytest plugin (entry point pytest11); it is the importable gate.
    assert assert_no_regression is gate
    url = f"sqlite:///{tmp_path / 'gate.db'}"
    base, worse = _pair(np.random.default_rng(13), regressed="cancel_pending_order", drop=0.4, candidate="worse")
    store = open_store(url)
    try:
        for run_id, rows in (("base", base), ("worse", worse)):
            store.create_replay_run("shop", _run(run_id))
            store.add_trials("shop", rows)
    finally:
        store.close()

    with pytest.raises(AssertionError, match=r"worse is credibly worse than base:\ncancel_pending_order: pass\^3"):
        assert_no_regression(url, "shop", "base", "worse")
    comparison = assert_no_regression(url, "shop", "base", "worse", task_type="order_status_inquiry")
    assert comparison.regressed == ["cancel_pending_order"]


def test_the_sdk_points_at_the_collector_for_the_gate() -> None:
    # The light SDK does not carry the gate: asking it for one says where the gate is and what to install.
    with pytest.raises(AttributeError, match=r"from passhat.collector.testing import assert_no_regression"):
        passhat.testing.assert_no_regression  # noqa: B018
