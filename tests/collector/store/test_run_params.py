"""A replay run's parameters read back typed, with the defaults of runs recorded before a parameter was kept."""

from __future__ import annotations

import datetime as dt

from passhat.collector.store import NotReplayable, ReplayRun, RunDesign, RunParams


def _run(params: dict[str, object], k: int = 5) -> ReplayRun:
    return ReplayRun("run-1", dt.datetime(2026, 1, 1, tzinfo=dt.UTC), k, params=dict(params))


def test_an_older_run_ran_k_trials_a_ticket_over_every_task_type_under_the_fixed_design() -> None:
    params = RunParams.of(_run({"period": "2026-W01", "agent": "a", "tickets_per_task_type": 20}, k=5))
    assert (params.trials, params.task_types, params.design, params.compare_to) == (5, (), RunDesign.fixed(5), None)


def test_parameters_round_trip_and_keep_keys_this_version_does_not_know() -> None:
    written = RunParams(
        period="2026-W02", k=3, trials=4, agent="a", agent_version="1", task_types=("refund",),
        design=RunDesign.curtailed(3, 5), tickets=("T-1", "T-2"), population={"refund": 9},
        not_replayable=(NotReplayable("T-3", "refund", "no intent", "record one"),), exploratory=("k = 3",),
        other={"sessions": True},
    )  # fmt: skip
    stored = written.to_dict()
    assert stored["design"] == {"name": "curtailed", "k": 3, "min_trials": 3} and stored["sessions"] is True
    assert RunParams.of(_run(stored, k=3)) == written


def test_two_runs_are_the_same_run_when_their_identity_matches_whatever_they_sampled() -> None:
    first = RunParams(period="2026-W02", k=3, trials=3, agent="a", tickets=("T-1",))
    assert first.same_run_as(RunParams(period="2026-W02", k=3, trials=3, agent="a", tickets=("T-9",)))
    assert not first.same_run_as(RunParams(period="2026-W02", k=3, trials=4, agent="a"))
    assert not first.same_run_as(
        RunParams(period="2026-W02", k=3, trials=3, agent="a", design=RunDesign.curtailed(3, 2))
    )
