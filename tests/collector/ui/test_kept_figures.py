"""A finished run keeps its figures: the digest the UI keeps in the store equals the one computed from the run's
trials (bit for bit), a start reads it back, and it is computed again once trials are added, the run is resumed
and finished again, or what was kept is of another version or another run."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import numpy as np

from passhat.collector.store import ReplayRun, Store, tallies_of_trials
from passhat.collector.ui import _kept
from passhat.collector.ui._digest import Headline, RunDigest, digest_of
from passhat.collector.ui._figures import official_runs
from passhat.collector.ui._pages import FigureCache
from passhat.collector.ui._reliability import ViewCache, seed_overview
from tests.collector.ui.ui_data import seed, trial

PROJECT = "shop"


def _same_headline(a: Headline | None, b: Headline | None) -> None:
    assert (a is None) == (b is None)
    if a is None or b is None:
        return
    assert (a.scope, a.k, a.left_out, a.weighting) == (b.scope, b.k, b.left_out, b.weighting)
    for field in dataclasses.fields(a.curve):
        left, right = getattr(a.curve, field.name), getattr(b.curve, field.name)
        if isinstance(left, np.ndarray):
            assert left.dtype == right.dtype and np.array_equal(left, right), field.name
        else:
            assert left == right, field.name


def _same(a: RunDigest, b: RunDigest) -> None:
    assert a.figures == b.figures
    assert (a.names, a.failures, a.settled_counts, a.trials) == (b.names, b.failures, b.settled_counts, b.trials)
    assert a.task_types.keys() == b.task_types.keys()
    for name in a.task_types:
        _same_headline(a.task_types[name], b.task_types[name])
    _same_headline(a.pooled, b.pooled)
    assert a.domains.keys() == b.domains.keys()
    for domain, (names, pooled) in a.domains.items():
        assert names == b.domains[domain][0]
        _same_headline(pooled, b.domains[domain][1])


def _from_trials(store: Store, run: ReplayRun) -> RunDigest:
    return digest_of(run, tallies_of_trials(store.list_trials(PROJECT, run.run_id)))


def _curtailed_run(store: Store) -> ReplayRun:
    """A curtailed run (k = 6, at least 2 trials) with failures by signature, unsigned ones and harness errors."""
    when = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(days=1)
    run = ReplayRun(
        "run-curtailed",
        when,
        k=6,
        params={"period": "2026-W48", "tickets": ["C-1", "C-2", "C-3", "C-4"],
                "design": {"name": "curtailed", "k": 6, "min_trials": 2}},
    )  # fmt: skip
    store.create_replay_run(PROJECT, run)
    outcomes = {"C-1": [True, False], "C-2": [True] * 6, "C-3": [False] * 6, "C-4": [False, True, True]}
    trials = [
        dataclasses.replace(trial(run.run_id, "cancel", ticket, a, ok, when), domain=None)  # "unknown" domain
        if ticket >= "C-3"
        else trial(run.run_id, "refund", ticket, a, ok, when)
        for ticket, passes in outcomes.items()
        for a, ok in enumerate(passes)
    ]
    trials[-1] = dataclasses.replace(trials[-1], passed=False, infra_error="ConnectionError: refused")
    trials[8] = dataclasses.replace(trials[8], failure_label=None)  # a failure without a signature
    store.add_trials(PROJECT, trials)
    store.finish_replay_run(PROJECT, run.run_id, at=when + dt.timedelta(hours=1))
    found = store.get_replay_run(PROJECT, run.run_id)
    assert found is not None
    return found


def test_a_finished_runs_kept_figures_are_the_figures_of_its_trials(sql_store: Store) -> None:
    seed(sql_store, PROJECT)
    runs = [*official_runs(sql_store, PROJECT), _curtailed_run(sql_store)]
    assert len(runs) == 3
    for run in runs:
        assert sql_store.kept_run_figures(PROJECT, run.run_id) is None
        computed = FigureCache().digest(sql_store, PROJECT, run)  # the first read computes and keeps it
        assert sql_store.kept_run_figures(PROJECT, run.run_id) is not None
        kept = _kept.kept_digest(sql_store, PROJECT, run)  # what a start reads
        assert kept is not None
        expected = _from_trials(sql_store, run)
        _same(computed, expected)
        _same(kept, expected)
    curtailed = FigureCache().digest(sql_store, PROJECT, runs[-1])
    assert curtailed.failures["cancel"] == {"wrong_entity": 6, "unclassified": 1}
    assert set(curtailed.domains) == {"retail", "unknown"}
    assert curtailed.trials == 17 and curtailed.figures["refund"].summary.tickets == 2


def test_the_overview_after_a_start_shows_what_it_showed_before(sql_store: Store) -> None:
    seed(sql_store, PROJECT)
    first = seed_overview(sql_store, PROJECT, FigureCache(), ViewCache(), "")  # computed, then kept
    again = seed_overview(sql_store, PROJECT, FigureCache(), ViewCache(), "")  # a start: read back
    assert first is not None and again is not None
    assert [(h.scope, h.weighting, h.pass_hat_k, h.pass_at_k) for h in first.headlines] == [
        (h.scope, h.weighting, h.pass_hat_k, h.pass_at_k) for h in again.headlines
    ]
    assert first.signatures == again.signatures and first.mixture == again.mixture


def test_kept_figures_are_computed_again_when_the_run_changes(sql_store: Store) -> None:
    seeded = seed(sql_store, PROJECT)
    run = next(r for r in official_runs(sql_store, PROJECT) if r.run_id == seeded.official_runs[-1])
    before = FigureCache().digest(sql_store, PROJECT, run)
    # Trials added to the finished run: what was kept is dropped and the figures count the new trials.
    added = [trial(run.run_id, "cancel", "SHOP-cancel-9", a, False, run.created_at) for a in range(4)]
    sql_store.add_trials(PROJECT, added)
    assert _kept.kept_digest(sql_store, PROJECT, run) is None
    after = FigureCache().digest(sql_store, PROJECT, run)
    assert after.trials == before.trials + 4
    _same(after, _from_trials(sql_store, run))
    # Resumed and finished again: a digest of the run as it was (an earlier finish) is not read back.
    assert _kept.kept_digest(sql_store, PROJECT, run) is not None
    sql_store.finish_replay_run(PROJECT, run.run_id, at=dt.datetime.now(dt.UTC))
    assert sql_store.keep_run_figures(PROJECT, run.run_id, trials=after.trials, body=_kept.encode(after, run))
    finished_again = sql_store.get_replay_run(PROJECT, run.run_id)
    assert finished_again is not None and _kept.kept_digest(sql_store, PROJECT, finished_again) is None
    # A running run is never kept nor read back.
    running = dataclasses.replace(finished_again, status="running")
    assert not _kept.keep_digest(sql_store, PROJECT, running, after)
    assert _kept.kept_digest(sql_store, PROJECT, running) is None


def test_kept_figures_of_another_version_or_unreadable_are_computed_again(sql_store: Store) -> None:
    seed(sql_store, PROJECT)
    run = official_runs(sql_store, PROJECT)[0]
    digest = FigureCache().digest(sql_store, PROJECT, run)
    older = json.loads(_kept.encode(digest, run))
    older["version"] = _kept.VERSION - 1
    for body in (json.dumps(older), "{not json", json.dumps({"version": _kept.VERSION, "run": _kept.fingerprint(run)})):
        assert sql_store.keep_run_figures(PROJECT, run.run_id, trials=digest.trials, body=body)
        assert _kept.kept_digest(sql_store, PROJECT, run) is None
        _same(FigureCache().digest(sql_store, PROJECT, run), digest)  # computed again (and kept again)
        assert _kept.kept_digest(sql_store, PROJECT, run) is not None
