"""Comparing runs whose shared tickets have fewer usable trials than k (curtailed replay, harness losses): the
comparison degrades with notes (a lower k, tickets left out, no interval below 5 pairs) rather than erroring."""

from __future__ import annotations

import datetime as dt

import pytest

from passhat.collector.replay import compare_trials
from passhat.collector.store import ReplayRun, TrialRow

NOW = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)


def _run(run_id: str, k: int = 20) -> ReplayRun:
    return ReplayRun(run_id=run_id, created_at=NOW, k=k, params={"period": "2026-W48"})


def _trials(run_id: str, outcomes: dict[str, list[bool]]) -> list[TrialRow]:
    return [
        TrialRow(
            run_id=run_id,
            ticket_id=ticket,
            task_type="refund",
            attempt=a,
            passed=passed,
            termination_reason="agent_stop",
            started_at=NOW,
            duration_s=0.1,
        )
        for ticket, results in outcomes.items()
        for a, passed in enumerate(results)
    ]


def test_curtailed_tickets_settled_below_k_are_compared_at_k() -> None:
    base = {f"T{i}": [True, False] for i in range(6)} | {"R": [True] * 20}
    cand = {f"T{i}": [True] * 20 for i in range(6)} | {"R": [False, True]}
    comparison = compare_trials(_run("a"), _trials("a", base), _run("b"), _trials("b", cand))
    (row,) = comparison.task_types
    assert comparison.k == 20 and row.pass_hat_k.tickets == 7
    assert row.pass_hat_k.baseline == pytest.approx(1 / 7) and row.pass_hat_k.candidate == pytest.approx(6 / 7)
    assert {f.ticket_id for f in comparison.flips if not f.became_unreliable} == {f"T{i}" for i in range(6)}
    assert [f.ticket_id for f in comparison.flips if f.became_unreliable] == ["R"]
    assert row.pass_hat_k.interval is not None


def test_shared_tickets_with_too_few_trials_for_k_are_compared_at_a_lower_k_with_a_note() -> None:
    base = {f"T{i}": [True] * 3 for i in range(4)}  # every outcome agrees, 3 trials: pass^20 not settled
    cand = {f"T{i}": [True, True, i > 0] for i in range(4)}
    comparison = compare_trials(_run("a"), _trials("a", base), _run("b"), _trials("b", cand))
    assert comparison.k == 3 and comparison.requested_k == 20
    assert any("compared at k = 3" in note for note in comparison.notes)
    assert any("no interval is given" in note for note in comparison.notes)  # 4 pairs < 5
    assert comparison.task_types[0].pass_hat_k.interval is None
    assert comparison.to_dict()["notes"] == comparison.notes


def test_unsettled_shared_tickets_are_left_out_and_counted() -> None:
    base = {"A": [True, False], "B": [True] * 20, "C": [True, True]}
    cand = {"A": [False, True], "B": [True] * 20, "C": [True] * 20}
    comparison = compare_trials(_run("a"), _trials("a", base), _run("b"), _trials("b", cand))
    assert comparison.k == 20 and comparison.unsettled_tickets == 1
    assert any("1 shared ticket(s)" in note for note in comparison.notes)


def test_runs_sharing_no_ticket_still_say_how_to_get_a_paired_comparison() -> None:
    with pytest.raises(ValueError, match="--compare-to a"):
        compare_trials(_run("a"), _trials("a", {"X": [True]}), _run("b"), _trials("b", {"Y": [True]}))
