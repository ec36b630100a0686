"""A period's report, alert counts and UI figures come from the store's per-ticket tallies and equal what every
trial row gives, on both stores; a million-trial store is read without loading its trials."""

from __future__ import annotations

import dataclasses
import datetime as dt
import pathlib
import random
import resource
from collections.abc import Iterator

import pytest

from passhat.collector.loop import report_input_for
from passhat.collector.reliability import harness_failures, summarize_trials
from passhat.collector.report import ReportInput, TrialResult, build_report
from passhat.collector.store import ReplayRun, Store, TrialRow, open_store, parse_period
from passhat.collector.ui._figures import figures_of_run
from passhat.sandbox import TrialDetails

PROJECT = "shop"
PERIOD = parse_period("2026-W48")
START = dt.datetime(2026, 11, 24, tzinfo=dt.UTC)
NOW = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
LABELS = ("wrong_entity", "unresolved", "tool_usage.empty_lookup")


@pytest.fixture(params=["sqlite", "chdb"])
def store(request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> Iterator[Store]:
    url = f"sqlite:///{tmp_path}/store.db" if request.param == "sqlite" else f"chdb://{tmp_path}/chdb"
    opened = open_store(url)
    yield opened
    opened.close()


def _trials(
    run_id: str, tickets: int, k: int, seed: int, *, details: bool = True, curtailed: bool = True
) -> list[TrialRow]:
    """Trials of the seed's mixture; some lost to the harness, some tickets stopped early (``curtailed``)."""
    rng = random.Random(seed)
    found = []
    for number in range(tickets):
        domain, task_type = [("retail", "refund"), ("retail", "exchange"), ("travel", "rebook")][number % 3]
        p = rng.choices([0.98, 0.6, 0.0], weights=[0.31, 0.6, 0.09])[0]
        stop = k if not curtailed or rng.random() < 0.8 else rng.randint(2, k)
        for attempt in range(stop):
            broken = rng.random() < 0.03
            passed = not broken and rng.random() < p
            found.append(
                TrialRow(
                    run_id=run_id, ticket_id=f"T-{number:06d}", task_type=task_type, attempt=attempt, passed=passed,
                    termination_reason="agent_stop", started_at=START, duration_s=1.0, domain=domain,
                    failure_label=None if passed else ("infra_error" if broken else rng.choice(LABELS)),
                    infra_error="ConnectionError: refused" if broken else None,
                    details=TrialDetails(final_response=f"attempt {attempt}") if details else TrialDetails(),
                )
            )  # fmt: skip
    return found


def _from_every_trial(trials: list[TrialRow], k: int) -> ReportInput:
    """The report's input as it was read before the tallies: every counted trial of every settled ticket."""
    by_ticket: dict[str, list[TrialRow]] = {}
    for trial in trials:
        if not trial.infra_error:
            by_ticket.setdefault(trial.ticket_id, []).append(trial)
    kept = [
        TrialResult.from_row(t)
        for rows in by_ticket.values()
        if len(rows) >= k or 0 < sum(r.passed for r in rows) < len(rows)
        for t in rows
    ]
    return ReportInput(
        period=PERIOD.name, k=k, trials=kept, generated_at=NOW, resamples=100, harness_failures=harness_failures(trials)
    )


def test_the_report_from_tallies_is_the_report_from_every_trial(store: Store) -> None:
    store.ensure_project(PROJECT)
    run = ReplayRun("run-1", START, k=6, params={"period": PERIOD.name})
    store.create_replay_run(PROJECT, run)
    trials = _trials("run-1", 90, 6, seed=3)
    store.add_trials(PROJECT, trials)
    store.finish_replay_run(PROJECT, "run-1")
    done = store.get_replay_run(PROJECT, "run-1")
    assert done is not None
    from_tallies = dataclasses.replace(report_input_for(store, PROJECT, PERIOD, done), generated_at=NOW, resamples=100)
    assert from_tallies.trials == [] and from_tallies.tallies  # nothing but counts was read for the figures
    got, expected = build_report(from_tallies).to_json(), build_report(_from_every_trial(trials, 6)).to_json()
    for name in ("generated_at", "not_replayable", "run"):
        got.pop(name, None)
        expected.pop(name, None)
    assert got == expected
    # The UI's figures of the run, from the same tallies, as the replay table computes them from the trials.
    figures = figures_of_run(done, store.ticket_tallies(PROJECT, "run-1"))
    table = summarize_trials(trials, 6)
    assert {name: f.summary.to_dict() for name, f in figures.items()} == {
        row.task_type: row.summary.to_dict() for row in table
    }


@pytest.mark.slow
def test_a_million_trials_are_counted_by_the_store_not_loaded(store: Store) -> None:
    store.ensure_project(PROJECT)
    store.create_replay_run(PROJECT, ReplayRun("big", START, k=20, params={"period": PERIOD.name}))
    rows = expected_trials = expected_passes = 0
    for chunk in range(10):  # 10 x 5,000 tickets x 20 trials
        trials = [
            dataclasses.replace(t, ticket_id=f"{t.ticket_id}-{chunk}")
            for t in _trials("big", 5_000, 20, seed=chunk, details=False, curtailed=False)
        ]
        store.add_trials(PROJECT, trials)
        rows += len(trials)
        expected_trials += sum(not t.infra_error for t in trials)
        expected_passes += sum(t.passed for t in trials)
    assert rows == 1_000_000
    store.finish_replay_run(PROJECT, "big")
    run = store.get_replay_run(PROJECT, "big")
    assert run is not None
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    report = build_report(dataclasses.replace(report_input_for(store, PROJECT, PERIOD, run), resamples=100))
    tallies = store.ticket_tallies(PROJECT, "big")
    assert (sum(t.trials for t in tallies), sum(t.passes for t in tallies)) == (expected_trials, expected_passes)
    assert report.overall.tickets_sampled == sum(tt.tickets_sampled for tt in report.task_types) > 40_000
    # Reading a million trial rows took gigabytes; the tallies of 50,000 tickets take tens of megabytes.
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 600, f"building the report raised the peak resident size by {grown_mb:.0f} MB"
