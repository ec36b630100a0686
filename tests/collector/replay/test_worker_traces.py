"""Traced replays on worker processes: every trial's trace is stored, as the collector's ingest would store it.

With a worker on every core the workers build the store's rows of their trials' spans and the driver only inserts
them, `PREPARED_AT_ONCE` trials at a time or after `PREPARED_WAIT`; with fewer workers the driver prepares them.
"""

from __future__ import annotations

import asyncio
import pathlib
import shutil
import subprocess
import sys
import threading
from collections.abc import Sequence

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import passhat
from passhat.collector.ingest import StoreSpanExporter
from passhat.collector.replay import AgentSpec, ReplayOutcome, ReplaySettings, replay_period
from passhat.collector.store import Store, open_store
from passhat.sandbox import ReferenceAgent
from tests.collector.replay.ray_agents import DropsFirstRun
from tests.collector.replay.worker_week import FLAWS, TASK_TYPES, TICKETS, WEEK, K, serve_week


def _traced_on_two_workers(
    week_db: pathlib.Path, folder: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Store, passhat.Passhat, list[int]]:
    """A copy of the week's store traced into (as `passhat replay` traces by default), two workers (one on every
    core), and the number of trials of each write of their built span rows, as the writes happen."""
    from passhat.collector.loop import store_runtime
    from passhat.collector.replay import _local

    monkeypatch.setattr(_local, "default_workers", lambda: 2)
    shutil.copy(week_db, folder / "week.db")
    store = open_store(f"sqlite:///{folder / 'week.db'}")
    built: list[int] = []
    write_built = type(store).write_built

    def counted(self: Store, project: str, parts: Sequence[object]) -> object:
        built.append(len(parts))
        return write_built(self, project, parts)

    monkeypatch.setattr(type(store), "write_built", counted)
    return store, store_runtime(store, "shop"), built


def _replay_traced(store: Store, runtime: passhat.Passhat) -> ReplayOutcome:
    agent = AgentSpec(ReferenceAgent.factory(FLAWS), "reference (simulation)", "1", True)
    settings = ReplaySettings(k=K, tickets_per_task_type=TICKETS, parallel=4, workers=2)
    outcome = asyncio.run(replay_period(store, "shop", WEEK, agent, settings=settings, runtime=runtime))
    runtime.flush()
    return outcome


def test_a_traced_replay_on_every_core_stores_each_trials_spans_prepared_by_its_worker(
    week_db: pathlib.Path, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Traced into the store (as `passhat replay` traces by default) with a worker on every core, the workers
    build the store's rows of each trial's spans and the driver only inserts them: nothing is relayed, and every
    trial's trace is stored, its ticket and tool calls found as the collector's ingest finds them."""
    from passhat.collector.replay import _relay

    def no_relay(*_: object) -> None:
        raise AssertionError("the driver relayed a worker's spans")

    monkeypatch.setattr(_relay, "relay", no_relay)
    store, runtime, built = _traced_on_two_workers(week_db, tmp_path, monkeypatch)
    try:
        outcome = _replay_traced(store, runtime)
        assert sum(built) == len(outcome.trials)  # each trial's rows, built by its worker
        traced = store.list_tickets("shop", source="sandbox", replay_run_id=outcome.run.run_id, limit=1000)
        assert len(traced) == len(outcome.trials) == K * TICKETS * len(TASK_TYPES)
        assert {t.trace_id for t in traced} == {t.trace_id for t in outcome.trials}
        for trial in outcome.trials:
            spans = store.get_trace("shop", str(trial.trace_id))
            assert any(span.ticket is not None for span in spans)
            calls = [span.tool_call.tool_name for span in spans if span.tool_call is not None]
            assert calls == [call.name for call in trial.details.tool_calls]
    finally:
        runtime.shutdown()
        store.close()


@pytest.mark.parametrize(("wait", "writes"), [(0.0, K * TICKETS * len(TASK_TYPES)), (3600.0, 1)])
def test_a_finished_trials_spans_wait_for_others_no_longer_than_prepared_wait(
    week_db: pathlib.Path, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, wait: float, writes: int
) -> None:
    """The spans the workers prepared are stored `PREPARED_AT_ONCE` trials at a time, or once a finished trial's
    have waited `PREPARED_WAIT` seconds (slow trials: a model agent's), whichever comes first; every one is stored
    either way. No wait: each trial's as it finishes; a wait longer than the run: all of them together."""
    from passhat.collector.replay import _local

    monkeypatch.setattr(_local, "PREPARED_WAIT", wait)
    store, runtime, built = _traced_on_two_workers(week_db, tmp_path, monkeypatch)
    try:
        outcome = _replay_traced(store, runtime)
        assert len(built) == writes and sum(built) == len(outcome.trials) == K * TICKETS * len(TASK_TYPES)
        traced = store.list_tickets("shop", source="sandbox", replay_run_id=outcome.run.run_id, limit=1000)
        assert {t.trace_id for t in traced} == {t.trace_id for t in outcome.trials}
    finally:
        runtime.shutdown()
        store.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_the_trace_of_a_run_the_harness_lost_in_a_worker_is_stored_with_its_trial(
    week_db: pathlib.Path, tmp_path: pathlib.Path, workers: int
) -> None:
    """A worker hands the trace of each run the harness lost back with its trial, as a Ray worker and an
    in-process replay keep it: it is stored beside the trial's own (with one worker the driver relays the spans,
    with a worker on every core the workers build the rows), and none stays behind in the worker."""
    from passhat.collector.loop import store_runtime

    shutil.copy(week_db, tmp_path / "week.db")
    store = open_store(f"sqlite:///{tmp_path / 'week.db'}")
    runtime = store_runtime(store, "shop")
    agent = AgentSpec(DropsFirstRun(FLAWS), "reference, reset once (simulation)", "1", True)
    settings = ReplaySettings(k=2, tickets_per_task_type=1, parallel=4, workers=workers, harness_retries=1)
    try:
        outcome = asyncio.run(replay_period(store, "shop", WEEK, agent, settings=settings, runtime=runtime))
        runtime.flush()
        assert outcome.trials and all(len(t.details.infra_retries) == 1 for t in outcome.trials)
        traced = store.list_tickets("shop", source="sandbox", replay_run_id=outcome.run.run_id, limit=1000)
        assert len(traced) == 2 * len(outcome.trials)  # each trial's trace and its lost run's
        assert {t.trace_id for t in outcome.trials} < {t.trace_id for t in traced}
    finally:
        runtime.shutdown()
        store.close()


def test_the_workers_prepare_the_spans_only_where_the_driver_would_bound_the_replay(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a worker on every core (the driver has no core of its own), the workers build the SQL store's rows;
    with fewer, the driver prepares them. A store that takes spans only (no rows built elsewhere) has them
    prepared in the workers from `SPANS_PREPARED_FROM`: below, the trial's CPU in all is a little less when the
    driver prepares them."""
    from passhat.collector.loop import store_runtime
    from passhat.collector.replay import _local

    class SpansOnly(StoreSpanExporter):  # as embedded ClickHouse's exporter: the store takes spans, not rows
        def builds_rows(self) -> bool:
            return False

    store = open_store("sqlite://")
    runtime = store_runtime(store, "shop")
    spans_only = passhat.configure(
        make_global=False, send=False, span_processors=[SimpleSpanProcessor(SpansOnly(store, "shop"))]
    )
    try:
        monkeypatch.setattr(_local, "default_workers", lambda: 2)
        assert _local.spans_prepared_in_workers(runtime, 1) is None  # a core left to the driver
        export = _local.spans_prepared_in_workers(runtime, 2)
        assert export is not None and export.builds_rows()
        assert _local.spans_prepared_in_workers(None, 2) is None
        assert _local.SPANS_PREPARED_FROM == 6
        assert _local.spans_prepared_in_workers(spans_only, 2) is None
        assert _local.spans_prepared_in_workers(spans_only, 6) is not None
        monkeypatch.setattr(_local, "default_workers", lambda: 8)
        assert _local.spans_prepared_in_workers(runtime, 7) is None
        assert _local.spans_prepared_in_workers(runtime, 8) is not None
        assert _local.spans_prepared_in_workers(spans_only, 7) is None
        assert _local.spans_prepared_in_workers(spans_only, 8) is not None
        two = passhat.configure(  # a second exporter: spans are relayed, and reach both
            make_global=False, send=False,
            span_processors=[SimpleSpanProcessor(StoreSpanExporter(store, "shop")), SimpleSpanProcessor(
                StoreSpanExporter(store, "other"))],
        )  # fmt: skip
        assert _local.spans_prepared_in_workers(two, 8) is None
        two.shutdown()
    finally:
        spans_only.shutdown()
        runtime.shutdown()
        store.close()


def test_the_server_workers_fork_from_holds_what_a_traced_replays_profile_needs(tmp_path: pathlib.Path) -> None:
    """A traced replay on every core sends its workers the function that builds the store's rows of their spans;
    loading it imported the collector's ingest package (its web app included) in each worker as the replay
    began, stalling them all. The forkserver imports those modules once (`TRACED_PRELOAD`): a process that
    imported what the workers are forked with imports nothing more to load that function, on every SQL store
    and for the spans-only preparation (embedded ClickHouse's)."""
    import functools
    import pickle

    from passhat.collector.ingest._store_export import prepare_spans
    from passhat.collector.replay._worker import TRACED_PRELOAD

    store = open_store(f"sqlite:///{tmp_path / 'traced.db'}")
    try:
        sent = [
            pickle.dumps(StoreSpanExporter(store, "shop").prepare_in_workers()),
            pickle.dumps(functools.partial(prepare_spans, max_attribute_bytes=1024)),
        ]
    finally:
        store.close()
    code = (
        "import importlib, pickle, sys\n"
        f"for name in ['passhat.collector.replay._worker', *{list(TRACED_PRELOAD)!r}]:\n"
        "    importlib.import_module(name)\n"
        "before = set(sys.modules)\n"
        "for data in sys.stdin.buffer.read().split(b'\\0SPLIT\\0'):\n"
        "    assert callable(pickle.loads(data))\n"
        "print(sorted(name for name in set(sys.modules) - before if name.startswith('passhat')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], input=b"\0SPLIT\0".join(sent), capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().strip() == "[]"


def test_a_traced_replay_into_an_in_memory_store_stores_every_trials_trace() -> None:
    """With one worker the driver hands the trials' spans to the runtime, whose batch processor writes them from
    a thread of its own. Into an in-memory store (``sqlite://``) that thread found an empty database of its own
    ("no such table"), and the traces it wrote were lost with a warning only (11 of 24 in a longer replay)."""
    from passhat.collector.loop import store_runtime

    store = open_store("sqlite://")
    runtime = store_runtime(store, "shop")
    try:
        serve_week(store)
        agent = AgentSpec(ReferenceAgent.factory(FLAWS), "reference (simulation)", "1", True)
        settings = ReplaySettings(k=K, tickets_per_task_type=TICKETS, parallel=4, workers=1)
        outcome = asyncio.run(replay_period(store, "shop", WEEK, agent, settings=settings, runtime=runtime))
        # The spans still queued are exported from another thread, as the processor's own thread exports them
        # every half second (this replay is shorter than that).
        exporter = threading.Thread(target=runtime.flush)
        exporter.start()
        exporter.join(timeout=60)
        traced = store.list_tickets("shop", source="sandbox", replay_run_id=outcome.run.run_id, limit=1000)
        assert len(outcome.trials) == K * TICKETS * len(TASK_TYPES)
        assert {t.trace_id for t in traced} == {t.trace_id for t in outcome.trials}
    finally:
        runtime.shutdown()
        store.close()
