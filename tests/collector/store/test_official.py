"""The official-run rule (`passhat.collector.store.choose_official`) and promotion, on the store's rows."""

from __future__ import annotations

import datetime as dt

import pytest

from passhat.collector.store import (
    ReplayRun,
    Store,
    StoreError,
    choose_official,
    latest_official_run,
    promote_run,
    role_of,
)

START = dt.datetime(2026, 11, 23, 6, 0, tzinfo=dt.UTC)


def _run(store: Store, run_id: str, hours: int, **params: object) -> ReplayRun:
    store.create_replay_run("shop", ReplayRun(run_id, START + dt.timedelta(hours=hours), k=4, params=dict(params)))
    store.finish_replay_run("shop", run_id, at=START + dt.timedelta(hours=hours, minutes=30))
    found = store.get_replay_run("shop", run_id)
    assert found is not None
    return found


def test_the_official_run_is_the_one_made_official_most_recently_never_a_later_one_off(sql_store: Store) -> None:
    sql_store.ensure_project("shop")
    configured = _run(sql_store, "weekly", 0, period="2026-W48")
    one_off = _run(sql_store, "one-off", 2, period="2026-W48", exploratory=["k = 2 (configured 4)"])
    assert choose_official([one_off, configured]) == configured
    assert role_of(one_off, configured) == "exploratory"
    promoted = promote_run(sql_store, "shop", "one-off")
    assert choose_official([promoted, configured]) == promoted
    assert role_of(configured, promoted) == "superseded"


def test_a_run_of_no_period_cannot_be_promoted_and_says_why(sql_store: Store) -> None:
    sql_store.ensure_project("shop")
    _run(sql_store, "sessions", 0, period=None)
    with pytest.raises(StoreError, match=r"run sessions replayed generated scenarios or graded sessions"):
        promote_run(sql_store, "shop", "sessions")
    with pytest.raises(StoreError, match=r"no replay run 'nope'.*passhat runs list"):
        promote_run(sql_store, "shop", "nope")


def test_the_latest_official_run_is_that_of_the_latest_period_with_one(sql_store: Store) -> None:
    sql_store.ensure_project("shop")
    assert latest_official_run(sql_store, "shop") is None
    _run(sql_store, "w49-one-off", 0, period="2026-W49", exploratory=["k = 2 (configured 4)"])
    _run(sql_store, "suite", 1, period=None)
    assert latest_official_run(sql_store, "shop") is None
    _run(sql_store, "w48", 2, period="2026-W48")
    _run(sql_store, "day-before-w48", 3, period="2026-11-22")  # a daily run of an earlier day, made later
    found = latest_official_run(sql_store, "shop")
    assert found is not None and found.run_id == "w48"
    promote_run(sql_store, "shop", "w49-one-off")
    found = latest_official_run(sql_store, "shop")
    assert found is not None and found.run_id == "w49-one-off"
