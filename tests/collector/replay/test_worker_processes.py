"""Replay on every core: trials in local worker processes give the figures of trials in the driver's process.

The same small retail replay runs in this process (an agent factory that cannot be pickled falls back to it, with
a note), on one worker process and on two: every (ticket, attempt) comes out the same. A worker killed mid-trial
costs its trials a retry recorded as infra, and the run finishes with the same figures.
"""

from __future__ import annotations

import asyncio
import gc
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading

import pytest

from passhat.collector.replay import AgentSpec, ReplayOutcome, ReplaySettings, replay_period
from passhat.collector.store import TrialRow, open_store
from passhat.sandbox import ReferenceAgent, TrialContext, load_domain
from tests.collector.replay.ray_agents import KillingFactory
from tests.collector.replay.worker_week import AGENT, FLAWS, TICKETS, WEEK, K


def _replay(week_db: pathlib.Path, folder: pathlib.Path, agent: AgentSpec, workers: int) -> ReplayOutcome:
    shutil.copy(week_db, folder / "week.db")
    store = open_store(f"sqlite:///{folder / 'week.db'}")
    settings = ReplaySettings(k=K, tickets_per_task_type=TICKETS, parallel=4, workers=workers)
    try:
        outcome = asyncio.run(replay_period(store, "shop", WEEK, agent, settings=settings))
        stored = store.list_trials("shop", outcome.run.run_id)
    finally:
        store.close()
    # The rows the workers made (their documents built there) are the rows the store kept, read back equal.
    assert sorted(stored, key=lambda t: (t.ticket_id, t.attempt)) == outcome.trials
    assert gc.get_freeze_count() == 0  # the heap the replay froze is handed back to the collector
    return outcome


def _outcomes(trials: list[TrialRow]) -> dict[tuple[str, int], tuple[object, ...]]:
    """Everything a trial's row says about the agent (its timing and trace id aside)."""
    return {
        (t.ticket_id, t.attempt): (
            t.passed, t.failure_label, t.failure_evidence, t.termination_reason, t.verdict, t.details.injected,
            t.details.changes, t.details.tool_calls, t.details.transcript, t.details.final_response,
        )
        for t in trials
    }  # fmt: skip


@pytest.fixture(scope="module")
def in_process(week_db: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> ReplayOutcome:
    """The replay in the driver's own process: a closure cannot be sent to a worker, so it runs here."""
    reference = ReferenceAgent.factory(FLAWS)
    closure = AgentSpec(lambda context: reference(context), AGENT.label, "1", True)
    return _replay(week_db, tmp_path_factory.mktemp("in-process"), closure, 2)


def test_an_agent_that_cannot_be_sent_runs_in_this_process_with_a_note(in_process: ReplayOutcome) -> None:
    assert len(in_process.trials) >= 5 * K
    assert len(in_process.notes) == 1 and "in this process" in in_process.notes[0]
    assert "module-level" in in_process.notes[0]  # and what would make it run on every core


@pytest.mark.parametrize("workers", [1, 2])
def test_worker_processes_give_every_trial_the_outcome_it_has_in_process(
    week_db: pathlib.Path, tmp_path: pathlib.Path, in_process: ReplayOutcome, workers: int
) -> None:
    outcome = _replay(week_db, tmp_path, AGENT, workers)
    assert outcome.notes == []
    assert _outcomes(outcome.trials) == _outcomes(in_process.trials)
    assert not any(t.infra_error or t.details.infra_retries for t in outcome.trials)


def test_a_worker_killed_mid_trial_costs_a_retry_and_the_figures_stay(
    week_db: pathlib.Path, tmp_path: pathlib.Path, in_process: ReplayOutcome, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = (sorted(in_process.trials, key=lambda t: (t.ticket_id, t.attempt))[0].ticket_id, 1)
    marker = tmp_path / "killed"
    killer = AgentSpec(KillingFactory(FLAWS, target, marker), AGENT.label, "1", True)
    scratch = tmp_path / "tmp"  # the driver's temporary directory, watched
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    outcome = _replay(week_db, tmp_path, killer, 2)
    assert marker.exists()  # the worker did die
    # Its templates were in a folder of the driver's, which the driver removed: killed, the worker could not.
    killed_in = pathlib.Path(marker.read_text(encoding="utf-8").splitlines()[1])
    assert killed_in.is_relative_to(scratch) and not killed_in.exists()
    assert not [path.name for path in scratch.iterdir() if path.name.startswith("passhat-")]
    assert _outcomes(outcome.trials) == _outcomes(in_process.trials)
    retried = {(t.ticket_id, t.attempt) for t in outcome.trials if t.details.infra_retries}
    assert target in retried
    assert all("lost mid-trial" in reason for t in outcome.trials for reason in t.details.infra_retries)
    assert not any(t.infra_error for t in outcome.trials)


@pytest.mark.parametrize("parallel", [1, 2])
def test_trials_queued_on_a_killed_worker_run_on_its_replacement_with_no_attempt_lost(
    week_db: pathlib.Path, tmp_path: pathlib.Path, in_process: ReplayOutcome, parallel: int
) -> None:
    """A worker holds trials queued beyond those it runs (`QUEUED_AHEAD`). When one of its trials kills it, only
    the trials it had started record a lost attempt: the target, and at most ``parallel - 1`` others running (or
    finished, their answers not yet sent) beside it. Those queued behind them never started there."""
    from passhat.collector.replay._processes import QUEUED_AHEAD

    assert QUEUED_AHEAD >= 1
    target = (sorted(in_process.trials, key=lambda t: (t.ticket_id, t.attempt))[0].ticket_id, 1)
    marker = tmp_path / "killed"
    killer = AgentSpec(KillingFactory(FLAWS, target, marker), AGENT.label, "1", True)
    shutil.copy(week_db, tmp_path / "week.db")
    store = open_store(f"sqlite:///{tmp_path / 'week.db'}")
    settings = ReplaySettings(k=K, tickets_per_task_type=TICKETS, parallel=parallel, workers=1)
    try:
        outcome = asyncio.run(replay_period(store, "shop", WEEK, killer, settings=settings))
    finally:
        store.close()
    assert marker.exists()  # the worker did die
    assert _outcomes(outcome.trials) == _outcomes(in_process.trials)
    retried = {(t.ticket_id, t.attempt): t.details.infra_retries for t in outcome.trials if t.details.infra_retries}
    assert target in retried and 1 <= len(retried) <= parallel, retried
    if parallel == 1:
        assert list(retried) == [target]
    assert all(len(reasons) == 1 and "lost mid-trial" in reasons[0] for reasons in retried.values())
    assert not any(t.infra_error for t in outcome.trials)


def test_a_worker_marks_the_jobs_it_started_until_their_answers_are_sent() -> None:
    """What the driver reads from a dead worker's cells: the jobs started and not answered; and, should a job
    have found no cell, None (the driver then takes every job it held as started: a retry too many, never one
    too few)."""
    from passhat.collector.replay._worker import StartedMarks

    cells = [0] * 4  # the overflow count, then three cells
    marks = StartedMarks(cells)
    for job in (7, 8, 9):
        marks.start(job)
    marks.answered(8)
    assert StartedMarks.read(cells) == {7, 9}
    marks.start(10)
    marks.answered(12)  # never started here: nothing changes
    assert StartedMarks.read(cells) == {7, 9, 10}
    marks.start(11)  # no cell left
    assert StartedMarks.read(cells) is None


def test_a_closure_is_not_sendable_but_a_reference_factory_is() -> None:
    from passhat.collector.replay import NotSendableError
    from passhat.collector.replay._processes import TrialProfile, sendable
    from passhat.sandbox import RunConfig

    assert sendable(TrialProfile(ReferenceAgent.factory(FLAWS), RunConfig()))

    def local(context: TrialContext) -> ReferenceAgent:
        return ReferenceAgent(context)

    with pytest.raises(NotSendableError, match="module-level"):
        sendable(TrialProfile(local, RunConfig()))


def test_planning_reads_the_chosen_tickets_together_as_one_at_a_time(week_db: pathlib.Path) -> None:
    """Replay planning reads the tickets' details in a few queries (twin tool spans matched within each trace):
    every ticket comes out as reading it alone gives it."""
    from passhat.collector.replay._plan import production_tickets

    store = open_store(f"sqlite:///{week_db}")
    try:
        ids = sorted({t.ticket_id for t in production_tickets(store, "shop", WEEK)})
        together = store.get_tickets("shop", ids, source="production")
        alone = {i: store.get_ticket("shop", i, source="production") for i in ids}
    finally:
        store.close()
    assert len(ids) >= 10 and sum(len(d.tool_calls) for d in together.values()) >= 10
    assert together == alone


def test_hundreds_of_trials_sent_at_once_never_deadlock_the_pipes(
    week_db: pathlib.Path, tmp_path: pathlib.Path, in_process: ReplayOutcome
) -> None:
    """Every trial of the replay is sent to the one worker at once (the driver writing jobs while the worker writes
    answers, both pipes full): the worker keeps reading its jobs while it answers, and the replay finishes with the
    outcomes it has in one process. A deadlock blocks both processes in a write, so the replay runs on a thread
    and the workers are killed if it has not finished in time."""
    from passhat.collector.replay import WorkerProcesses

    shutil.copy(week_db, tmp_path / "week.db")
    settings = ReplaySettings(k=60, tickets_per_task_type=TICKETS, parallel=600, workers=1)
    held: dict[str, object] = {}

    async def replay() -> None:
        processes = await WorkerProcesses({"retail": load_domain("retail")}, workers=1, concurrency=600).start()
        held["processes"] = processes
        store = open_store(f"sqlite:///{tmp_path / 'week.db'}")
        try:
            held["outcome"] = await replay_period(store, "shop", WEEK, AGENT, settings=settings, processes=processes)
        finally:
            store.close()
            processes.close()

    thread = threading.Thread(target=lambda: asyncio.run(replay()), daemon=True)
    thread.start()
    thread.join(timeout=120)
    if thread.is_alive():
        processes = held["processes"]
        assert isinstance(processes, WorkerProcesses)
        for worker in processes._workers:
            worker.process.kill()
        thread.join(timeout=30)
        pytest.fail("the replay did not finish: the driver and its worker deadlocked writing to each other")
    outcome = held["outcome"]
    assert isinstance(outcome, ReplayOutcome)
    assert len(outcome.trials) >= 5 * 60 and not any(t.infra_error for t in outcome.trials)
    first = {key: value for key, value in _outcomes(outcome.trials).items() if key[1] < K}
    assert first == _outcomes(in_process.trials)  # the first K attempts of each ticket, as in one process


def test_an_outcome_returned_by_asyncio_run_is_not_read_back_trial_by_trial(
    week_db: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    """`asyncio.run` (Python 3.11) formats the repr of what its main task returned: an outcome's repr names its
    run and counts its trials, so the rows the workers sent stay unread (their details and check verdicts are parsed on
    first use)."""
    shutil.copy(week_db, tmp_path / "week.db")
    store = open_store(f"sqlite:///{tmp_path / 'week.db'}")
    try:
        settings = ReplaySettings(k=K, tickets_per_task_type=TICKETS, workers=1)
        outcome = asyncio.run(replay_period(store, "shop", WEEK, AGENT, settings=settings))
    finally:
        store.close()
    text = repr(outcome)
    assert outcome.run.run_id in text and f"trials={len(outcome.trials)}," in text and len(text) < 400
    assert outcome.trials and not any("changes" in t.details.__dict__ for t in outcome.trials)
    assert not any("verdict" in t.__dict__ for t in outcome.trials)  # the check verdicts too: kept as their text
    assert outcome.trials[0].details.transcript  # and read when asked
    assert outcome.trials[0].verdict is not None and outcome.trials[0].verdict["check"]


def test_a_script_without_a_main_guard_replays_in_its_own_process_and_is_told_why(
    week_db: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    """A worker process starts by importing the script that started it (Python's multiprocessing): a script that
    replays at its top level runs again there and cannot start workers of its own. The replay still runs, in the
    script's process, and its note says how to run it on every core."""
    shutil.copy(week_db, tmp_path / "week.db")
    script = tmp_path / "replay_now.py"
    script.write_text(
        "import asyncio\n"
        "from passhat.collector.replay import AgentSpec, ReplaySettings, replay_period\n"
        "from passhat.collector.store import open_store, parse_period\n"
        "from passhat.sandbox import FlawConfig, ReferenceAgent\n"
        f"store = open_store('sqlite:///{tmp_path / 'week.db'}')\n"
        "agent = AgentSpec(ReferenceAgent.factory(FlawConfig.default()), 'reference (simulation)', '1', True)\n"
        "settings = ReplaySettings(k=2, tickets_per_task_type=1, workers=1)\n"
        "outcome = asyncio.run(replay_period(store, 'shop', parse_period('2026-W40'), agent, settings=settings))\n"
        "print('TRIALS', len(outcome.trials))\n"
        "print('NOTES', *outcome.notes)\n"
    )
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "TRIALS 6" in done.stdout  # 3 task types x 1 ticket x k = 2, all run
    assert "in this process" in done.stdout and 'if __name__ == "__main__":' in done.stdout


def test_an_answer_the_driver_cannot_read_fails_its_own_trial_only() -> None:
    """A worker sends answers in batches, each pickled on its own: one the driver cannot unpickle (a class only
    the worker could import, say) fails its trial with a message saying so; the others in the batch arrive."""
    import pickle

    from passhat.collector.replay import WorkerProcesses

    async def answer() -> tuple[BaseException | None, object]:
        processes = WorkerProcesses({"retail": load_domain("retail")}, workers=1)
        loop = asyncio.get_running_loop()
        processes._loop = loop
        unreadable, readable = loop.create_future(), loop.create_future()
        processes._pending = {1: (unreadable, 0), 2: (readable, 0)}
        batch = [("done", 1, b"not a pickle"), ("done", 2, pickle.dumps("a row"))]
        processes._answer(None, ("answers", 0, batch))  # type: ignore[arg-type]  # (a worker: for "ready" only)
        return unreadable.exception(), readable.result()

    error, row = asyncio.run(answer())
    assert row == "a row"
    assert isinstance(error, RuntimeError) and "cannot be read here" in str(error)


def test_the_rows_a_replay_keeps_join_the_frozen_heap_once_stored(
    tmp_path: pathlib.Path, in_process: ReplayOutcome
) -> None:
    """While trials run, the rows a replay will return are frozen as each batch is stored (the collector then
    leaves them alone), and the whole heap is handed back when the replay ends."""
    from passhat.collector.replay._trials import _TrialWriter, heap_frozen

    store = open_store(f"sqlite:///{tmp_path / 'rows.db'}")
    try:
        store.create_replay_run("shop", in_process.run)
        with heap_frozen():
            writer = _TrialWriter(store, "shop", flush_every=1000)
            for row in in_process.trials[:3]:
                writer.add(row)
            gc.collect()  # nothing new waits in the young generations but the rows just received
            before = gc.get_freeze_count()
            writer.flush()
            assert gc.get_freeze_count() > before
            walked = {id(found) for found in gc.get_objects()}  # what the collections still walk
            assert writer.written and not any(id(row.verdict) in walked for row in writer.written)
        assert gc.get_freeze_count() == 0
        assert len(store.list_trials("shop", in_process.run.run_id)) == 3
    finally:
        store.close()


def test_a_worker_keeps_its_templates_out_of_the_collections() -> None:
    """A worker's templates live as long as it does: once built they join the frozen heap, so the collections
    while its trials run do not walk them (a full collection over retail's templates took about 75 ms)."""
    from passhat.collector.replay._ray import domain_ref
    from passhat.collector.replay._worker import _Body

    retail = load_domain("retail")
    try:
        body = _Body({"retail": domain_ref(retail)}, 0, "small", 8, 4)
        walked = {id(found) for found in gc.get_objects()}  # what the collections still walk
        assert gc.get_freeze_count() > 0
        assert id(body.pool.base(body.domains["retail"])) not in walked
    finally:
        gc.unfreeze()  # this test's process is not a worker: hand the heap back


def test_a_replays_own_workers_start_before_it_plans_and_end_with_it(
    week_db: pathlib.Path, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replay that starts its own workers starts them first, so they build their templates while it chooses
    and reads the tickets; none is left running after it, whether it ran trials or found nothing to replay."""
    import multiprocessing

    from passhat.collector.replay import NothingToReplayError, _run

    def workers() -> list[str]:
        return [p.name for p in multiprocessing.active_children() if p.name.startswith("passhat-trials")]

    seen: list[list[str]] = []
    prepare = _run.prepare_tickets

    def watched(*args: object, **kwargs: object) -> object:
        seen.append(workers())
        return prepare(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_run, "prepare_tickets", watched)
    outcome = _replay(week_db, tmp_path, AGENT, 2)
    assert len(seen) == 1 and sorted(seen[0]) == ["passhat-trials-0", "passhat-trials-1"]  # while it planned
    assert outcome.notes == [] and len(outcome.trials) >= 5 * K
    assert workers() == []

    started: list[object] = []
    start = _run.EarlyWorkers.start

    async def counted(*args: object, **kwargs: object) -> object:
        started.append(args)
        return await start(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_run.EarlyWorkers, "start", counted)
    empty = open_store(f"sqlite:///{tmp_path / 'empty.db'}")
    try:
        with pytest.raises(NothingToReplayError, match="no production tickets of 2026-W40"):
            asyncio.run(replay_period(empty, "shop", WEEK, AGENT, settings=ReplaySettings(k=K, workers=2)))
    finally:
        empty.close()
    assert started == []  # a period without tickets says so before any worker starts
    assert workers() == []
