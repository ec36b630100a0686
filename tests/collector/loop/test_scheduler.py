"""The scheduler in `passhat serve`: when it runs, which period it replays, and that a failure never stops it."""

from __future__ import annotations

import datetime as dt
import logging
import pathlib
import time

import pytest

from passhat.collector.config import PasshatConfig, ScheduleConfig
from passhat.collector.loop._scheduler import NOTHING_TO_REPLAY, Scheduler, next_run, period_due
from passhat.collector.store import Period, Store, open_store
from passhat.sandbox import ModelServerUnusableError
from passhat.sandbox.agents import ModelEndpoint

UTC = dt.UTC


def test_weekly_runs_on_the_configured_weekday_and_time() -> None:
    weekly = ScheduleConfig(every="weekly", weekday="monday", time="06:00", timezone="UTC")
    sunday = dt.datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    assert next_run(weekly, sunday) == dt.datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
    monday_at_six = dt.datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
    assert next_run(weekly, monday_at_six) == dt.datetime(2026, 12, 7, 6, 0, tzinfo=UTC)


def test_daily_and_time_zones() -> None:
    daily = ScheduleConfig(every="daily", time="02:30", timezone="Europe/Paris")
    evening = dt.datetime(2026, 11, 29, 22, 0, tzinfo=UTC)  # 23:00 in Paris
    assert next_run(daily, evening) == dt.datetime(2026, 11, 30, 1, 30, tzinfo=UTC)


def test_the_period_due_is_the_one_that_just_ended() -> None:
    weekly = ScheduleConfig(every="weekly")
    assert period_due(weekly, dt.datetime(2026, 11, 30, 6, 0, tzinfo=UTC)).name == "2026-W48"
    daily = ScheduleConfig(every="daily")
    assert period_due(daily, dt.datetime(2026, 11, 30, 6, 0, tzinfo=UTC)).name == "2026-11-29"


def _first_run(config: PasshatConfig, store: Store) -> Scheduler:
    """A daily 00:00 scheduler started just before midnight, once its first run (of 2026-11-29) is over."""
    start = dt.datetime(2026, 11, 29, 23, 59, 59, tzinfo=UTC)
    calls = iter([start, start])  # start(), then the loop's first reading; later readings are past midnight

    def clock() -> dt.datetime:  # the first reading, then always just past midnight
        return next(calls, dt.datetime(2026, 11, 30, 0, 0, 1, tzinfo=UTC))

    scheduler = Scheduler(config, store, clock=clock)
    assert scheduler.start() == dt.datetime(2026, 11, 30, 0, 0, tzinfo=UTC)
    deadline = time.monotonic() + 30
    while not scheduler.runs and time.monotonic() < deadline:
        time.sleep(0.05)
    assert scheduler.runs and scheduler.runs[0][0] == "2026-11-29"
    return scheduler


DAILY = {"project": "x", "schedule": {"every": "daily", "time": "00:00"}}


def test_a_period_without_tickets_is_one_log_line_not_a_failure(
    tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = open_store(f"sqlite:///{tmp_path / 's.db'}")
    with caplog.at_level(logging.INFO, logger="passhat.scheduler"):
        scheduler = _first_run(PasshatConfig.model_validate(DAILY), store)
        try:
            # No traffic was ever stored: nothing to replay, said in one line; the thread lives on.
            assert scheduler.runs[0][1] == NOTHING_TO_REPLAY
            assert scheduler._thread.is_alive()
        finally:
            scheduler.stop()
            store.close()
    [record] = [r for r in caplog.records if r.name == "passhat.scheduler"]
    assert record.levelno == logging.WARNING and record.exc_info is None
    assert record.getMessage().startswith(
        "passhat scheduler: no production tickets of 2026-11-29 in project 'x': nothing to replay"
    )
    assert record.getMessage().endswith("; next run at 2026-12-01 00:00 UTC")
    assert "failed" not in caplog.text and "Traceback" not in caplog.text


def test_a_failed_run_is_logged_with_its_traceback_and_the_scheduler_keeps_going(
    tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = open_store(f"sqlite:///{tmp_path / 's.db'}")
    config = PasshatConfig.model_validate({**DAILY, "agent": {"factory": "no_such_module_xyz:make"}})
    with caplog.at_level(logging.INFO, logger="passhat.scheduler"):
        scheduler = _first_run(config, store)
        try:
            assert "no_such_module_xyz" in scheduler.runs[0][1]
            assert scheduler._thread.is_alive()
        finally:
            scheduler.stop()
            store.close()
    [record] = [r for r in caplog.records if r.name == "passhat.scheduler"]
    assert record.getMessage() == "passhat scheduler: the run for 2026-11-29 failed"
    assert record.levelno == logging.ERROR and record.exc_info is not None


class _DeadModelServer(Scheduler):
    """A scheduler whose run stops as a replay against a model server that cannot be reached stops (the replay's
    side of it: tests/sandbox/agents/test_model_server.py)."""

    def run_once(self, period: Period) -> None:
        endpoint = ModelEndpoint("openai", "http://127.0.0.1:9/v1", "qwen2.5:14b")
        raise ModelServerUnusableError(f"{endpoint} could not be reached: APIConnectionError", endpoint=endpoint)


def test_a_run_stopped_by_an_unusable_model_server_is_one_line_naming_it_and_how_to_resume(
    tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = open_store(f"sqlite:///{tmp_path / 's.db'}")
    start = dt.datetime(2026, 11, 29, 23, 59, 59, tzinfo=UTC)
    calls = iter([start, start])
    scheduler = _DeadModelServer(
        PasshatConfig.model_validate(DAILY), store, clock=lambda: next(calls, start + dt.timedelta(seconds=2))
    )
    with caplog.at_level(logging.INFO, logger="passhat.scheduler"):
        scheduler.start()
        deadline = time.monotonic() + 30
        while not scheduler.runs and time.monotonic() < deadline:
            time.sleep(0.05)
        try:
            assert scheduler.runs and scheduler.runs[0][1].startswith("stopped: the openai model server at")
            assert scheduler._thread.is_alive()
        finally:
            scheduler.stop()
            store.close()
    [record] = [r for r in caplog.records if r.name == "passhat.scheduler"]
    assert record.levelno == logging.ERROR and record.exc_info is None and "Traceback" not in caplog.text
    message = record.getMessage()
    assert "http://127.0.0.1:9/v1" in message and "qwen2.5:14b" in message
    assert "`passhat replay --period 2026-11-29` resumes the run" in message


def test_a_scheduled_run_replays_with_every_configured_replay_setting() -> None:
    from passhat.collector.loop._setup import replay_settings

    config = PasshatConfig.model_validate(
        {
            "replay": {
                "k": 4,
                "trials": 12,
                "tickets_per_task_type": 7,
                "concurrency": 3,
                "min_trials": 3,
                "executor": "ray",
                "ray_address": "ray://head:10001",
                "ray_workers": 5,
                "ray_concurrency": 6,
                "ray_env": ["ANTHROPIC_API_KEY"],
            }
        }
    )
    settings = replay_settings(config)
    assert (settings.k, settings.trials, settings.tickets_per_task_type, settings.parallel) == (4, 12, 7, 3)
    assert (settings.min_trials, settings.executor, settings.ray_address) == (3, "ray", "ray://head:10001")
    assert (settings.ray_workers, settings.ray_concurrency, settings.ray_env) == (5, 6, ("ANTHROPIC_API_KEY",))
    # Without `trials`, a ticket runs k trials.
    assert replay_settings(PasshatConfig.model_validate({"replay": {"k": 4}})).trials == 4
