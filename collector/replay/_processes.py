"""Replay on every core: trials run in local worker processes, their rows and spans stream back to one writer.

A replay's trials are CPU-bound when the agent is (the ReferenceAgent, a fast local model): one asyncio loop uses
one core. `WorkerProcesses` starts worker processes (one per core by default, ``replay.workers``), each holding
the domains' sandbox templates and running trials concurrently on its own loop, exactly as a local replay runs
them (a fresh database copy per trial, the same runner and agent). Only the driver reaches the store: a worker
sends each trial's graded result and its spans back, and the driver writes them, so rows are stored as the
trials finish and an interrupted run resumes as before. Jobs and answers travel in batches (those ready
together, answers a couple of milliseconds at most while other trials run): a message is a write and a wakeup
on each side, which cost more than the pickling. A trial's outcome depends only on (scenario, attempt,
agent): which process ran it never shows in its row.

A worker runs ``concurrency`` trials at once and holds a few more queued (`QUEUED_AHEAD`), which it starts
itself as its trials finish. A worker that dies mid-trial (killed, out of memory) costs only the trials it was
running a retry on its replacement; each such row records the lost attempt (``TrialDetails.infra_retries``), as
on Ray, and a trial that loses `MAX_RETRIES` workers is stored as an infrastructure error. The trials it held
queued go to the replacement with no attempt lost. What cannot be sent to another process (an
agent factory that is a closure, a domain built by a function, a redaction callback) raises `NotSendableError`
before anything runs, and the caller runs the trials in its own process with a note saying why.

Workers are forked from a server process that imported passhat once (``forkserver``), so starting one costs
milliseconds, not an interpreter start, and none inherits the driver's threads.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import multiprocessing
import os
import pickle
import shutil
import sys
import tempfile
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from passhat.collector.replay import _worker
from passhat.collector.replay._adapters import ReplayTicket
from passhat.collector.replay._ray import MAX_RETRIES, WorkerResult, _lost, domain_ref
from passhat.collector.replay._relay import SpanSnapshot
from passhat.collector.replay._row import RowSpec, row_of, with_lost
from passhat.collector.replay._worker import (
    NotSendableError,
    Prepared,
    StartedMarks,
    TrialJob,
    TrialProfile,
    WorkerRow,
    _serve,
    sendable,
)
from passhat.collector.store import TrialRow
from passhat.sandbox import Domain, DomainError

__all__ = [
    "NotSendableError",
    "TrialProfile",
    "WorkerLostError",
    "WorkerProcesses",
    "default_workers",
    "sendable",
]

KEEP_PACKED = 256
"""Tickets the driver keeps pickled for their next attempts (a ticket's attempts are sent together)."""

QUEUED_AHEAD = 5
"""Trials each worker holds queued, per trial it runs at once (``concurrency``), beyond those it runs: it starts
them itself as its trials finish, so while the driver writes a batch to the store (in which it sends no job) the
worker's core still has trials to run. A worker never runs more than ``concurrency`` at once: `parallel`, the
limit a model server relies on, holds as before. Traced, on two cores, a batch write is about 45 ms of the
driver's CPU on a core it shares with a worker, so about 90 ms of the clock; the other worker, with a core to
itself, runs about 20 trials meanwhile. With 8 queued it ran dry in those writes (seen in `perf sched`: a worker
asleep up to 50 ms until the driver's next jobs); 20 cover them (docs/loop.md, "Twenty queued rather than eight")."""

MOST_AHEAD = 24
"""At most this many trials queued ahead on a worker: a batch write's stall is covered by about a hundred
milliseconds of trials, and hundreds in flight (a slow model's) wait on the model, not on the driver."""

UNSTARTED_RESENDS = 3 * MAX_RETRIES
"""Times a trial queued on a worker that died before starting it is sent again as it is (no attempt lost); beyond
that each such death counts as a lost worker, so workers that keep dying before they start anything end the trial
as an infrastructure error rather than resending it for ever."""

KEEP_IDLE = 32
"""At most this many idle tickets' templates (a database each) a worker process keeps for their next attempts."""


class WorkerLostError(Exception):
    """A worker process ended with trials in flight."""


class _NeverStartedError(WorkerLostError):
    """A worker process ended with this trial queued, not started."""


def default_workers() -> int:
    """One worker process per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


# ---------------------------------------------------------------------------------------------------------- driver


@dataclass
class _Process:
    process: Any  # multiprocessing's process object (its type is private to each start method)
    connection: Connection
    index: int
    ready: asyncio.Queue[tuple[str, Any]]  # "ready", "broken" (it said why) or "ended" (its process did)
    alive: bool = True
    jobs: list[TrialJob] = dataclasses.field(default_factory=list)  # to send together, at the loop's next turn
    started: Any = None  # cells shared with it: the jobs it started and has not answered (`StartedMarks`)


class WorkerProcesses:
    """Worker processes on this machine and the slots trials take on them (``concurrency`` per worker)."""

    def __init__(
        self,
        domains: Mapping[str, Domain],
        *,
        workers: int = 0,
        concurrency: int = 4,
        seed: int = 0,
        size: str = "small",
        ahead: int | None = None,
    ) -> None:
        """``ahead``: trials each worker holds queued beyond the ``concurrency`` it runs (default `QUEUED_AHEAD`
        per trial it runs, at most `MOST_AHEAD`)."""
        try:
            self._refs = {name: domain_ref(domain) for name, domain in domains.items()}
        except DomainError as exc:
            raise NotSendableError(str(exc)) from None
        self.count = workers or default_workers()
        self.concurrency = max(1, concurrency)
        self.ahead = min(QUEUED_AHEAD * self.concurrency, MOST_AHEAD) if ahead is None else max(0, ahead)
        # Idle tickets' templates a worker keeps for their next attempts: a few dozen serve the queued design (a
        # ticket's attempts are sent together); more only holds memory at hundreds of trials in flight.
        self._start_args = (self._refs, seed, size, min(2 * self.concurrency, KEEP_IDLE), self.concurrency)
        self._profiles: list[bytes] = []
        self._workers: list[_Process] = []
        self._pending: dict[int, tuple[asyncio.Future[WorkerResult | WorkerRow], int]] = {}
        self._next_job = 0
        self._tickets: collections.OrderedDict[int, tuple[ReplayTicket, bytes]] = collections.OrderedDict()
        self._slots: asyncio.Queue[int] = asyncio.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.retried = 0
        # The workers' temporary files, in a folder of the driver's: removed by `close` (or at exit), a killed
        # worker's by `_gone`.
        self._scratch: Path | None = None
        self._removal: weakref.finalize[Any, Any] | None = None

    @property
    def slots(self) -> int:
        """Trials sent to the workers at once: workers × (concurrency + queued ahead) per worker. Each worker runs
        ``concurrency`` of them at a time."""
        return self.count * (self.concurrency + self.ahead)

    async def start(self) -> WorkerProcesses:
        """Start the workers and wait until each holds its templates."""
        self._loop = asyncio.get_running_loop()
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="passhat-workers-"))
            self._removal = weakref.finalize(self, shutil.rmtree, self._scratch, ignore_errors=True)
        self._workers = [self._spawn(index) for index in range(self.count)]
        for worker in self._workers:
            await self._expect_ready(worker, "start")
        for _ in range(self.concurrency + self.ahead):
            for worker in self._workers:
                self._slots.put_nowait(worker.index)
        return self

    async def profile(self, profile: TrialProfile) -> int:
        """Send a profile to every worker (`NotSendableError` when it does not pickle or does not load there)."""
        data = sendable(profile)
        number = len(self._profiles)
        self._profiles.append(data)
        for worker in self._workers:
            self._send(worker, ("profile", number, data))
            await self._expect_ready(worker, "profile")
        return number

    async def run(
        self, profile: int, item: ReplayTicket, attempt: int, *, ticket_id: str | None = None, production: bool = False
    ) -> tuple[WorkerResult, tuple[str, ...]]:
        """Run one trial on a free slot; a worker lost mid-trial costs a retry on its replacement."""
        answer, lost = await self._dispatch(profile, item, attempt, ticket_id, production)
        if not isinstance(answer, WorkerResult):
            raise TypeError("WorkerProcesses.run: this profile's trials answer with rows; call run_row")
        return answer, lost

    async def run_row(
        self, profile: int, item: ReplayTicket, attempt: int, rows: RowSpec
    ) -> tuple[TrialRow, tuple[SpanSnapshot, ...] | Prepared]:
        """Run one replay trial (a profile with ``rows``) on a free slot: its stored row (the workers it lost
        recorded in it) and its spans."""
        answer, lost = await self._dispatch(profile, item, attempt, None, False)
        if isinstance(answer, WorkerResult):  # lost MAX_RETRIES workers: an infrastructure error, made here
            return row_of(rows, answer.result, infra_retries=lost), answer.spans
        return with_lost(answer.row, lost), answer.spans

    async def _dispatch(
        self, profile: int, item: ReplayTicket, attempt: int, ticket_id: str | None, production: bool
    ) -> tuple[WorkerResult | WorkerRow, tuple[str, ...]]:
        lost: list[str] = []
        unstarted = 0  # times it was queued on a worker that died before starting it
        started = time.perf_counter()
        while len(lost) < MAX_RETRIES:
            index = await self._slots.get()
            try:
                worker = self._workers[index]
                if not worker.alive:  # ended, its replacement not started yet: try again shortly
                    await asyncio.sleep(0.05)
                    continue
                self._next_job += 1
                job = TrialJob(self._next_job, profile, self._packed(item), attempt, ticket_id, production)
                assert self._loop is not None
                future: asyncio.Future[WorkerResult | WorkerRow] = self._loop.create_future()
                self._pending[job.job_id] = (future, index)
                try:
                    self._queue(worker, job)
                    return await future, tuple(lost)
                except _NeverStartedError as exc:  # queued on a worker that died: sent again, no attempt was lost
                    unstarted += 1
                    if unstarted > UNSTARTED_RESENDS:  # workers that die before they start anything: stop somewhere
                        lost.append(f"worker processes ended before the trial started, {unstarted} times: {exc}")
                        self.retried += 1
                except WorkerLostError as exc:
                    lost.append(f"worker process lost mid-trial: {exc}")
                    self.retried += 1
                finally:
                    self._pending.pop(job.job_id, None)
            finally:
                self._slots.put_nowait(index)
        result = _lost(item, attempt, lost, time.perf_counter() - started)
        return WorkerResult(result, (), 0), tuple(lost)

    def close(self) -> None:
        for worker in self._workers:
            worker.alive = False
            with contextlib.suppress(OSError, ValueError):
                worker.connection.send_bytes(pickle.dumps(("stop",)))
        for worker in self._workers:
            worker.process.join(timeout=10)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join(timeout=5)
            self._stop_reading(worker)
            worker.connection.close()
        self._workers = []
        if self._removal is not None:
            self._removal()
            self._scratch = self._removal = None  # started again, the workers get a new one

    # -- internals

    def _packed(self, item: ReplayTicket) -> bytes:
        """The ticket pickled once for all its attempts (the driver's CPU is the replay's bottleneck)."""
        key = id(item)
        found = self._tickets.get(key)
        if found is not None and found[0] is item:
            return found[1]
        data = pickle.dumps(item)
        self._tickets[key] = (item, data)
        while len(self._tickets) > KEEP_PACKED:
            self._tickets.popitem(last=False)
        return data

    def _spawn(self, index: int) -> _Process:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([_worker.__name__, *_worker.TRACED_PRELOAD])
        ours, theirs = context.Pipe(duplex=True)
        scratch = None if self._scratch is None else str(self._scratch)
        # A cell per job the driver may hold on this worker (its slots), and one for overflow.
        started = context.RawArray("q", 1 + self.concurrency + self.ahead)
        process = context.Process(
            target=_serve, args=(theirs, list(sys.path), scratch, started), name=f"passhat-trials-{index}"
        )
        process.daemon = True
        process.start()
        theirs.close()
        worker = _Process(process, ours, index, asyncio.Queue(), started=started)
        assert self._loop is not None
        self._loop.add_reader(ours.fileno(), self._readable, worker)
        self._send(worker, ("start", *self._start_args))
        return worker

    def _queue(self, worker: _Process, job: TrialJob) -> None:
        """Jobs for a worker that become ready in one turn of the loop (the answers of a batch free their slots
        together) go in one message: a write and a wakeup of the worker's reader for them all."""
        if not worker.jobs:
            assert self._loop is not None
            self._loop.call_soon(self._send_jobs, worker)
        worker.jobs.append(job)

    def _send_jobs(self, worker: _Process) -> None:
        jobs, worker.jobs = worker.jobs, []
        try:
            self._send(worker, ("run", jobs))
        except WorkerLostError as exc:
            for job in jobs:
                self._settle(job.job_id, exc)

    def _settle(self, job_id: int, outcome: Any) -> None:
        """The trial's answer (or the exception it raises) to whoever waits for job ``job_id``."""
        pending = self._pending.get(job_id)
        if pending is None or pending[0].done():
            return
        if isinstance(outcome, BaseException):
            pending[0].set_exception(outcome)
        else:
            pending[0].set_result(outcome)

    def _send(self, worker: _Process, message: tuple[Any, ...]) -> None:
        try:
            worker.connection.send_bytes(pickle.dumps(message))
        except (OSError, ValueError) as exc:
            raise WorkerLostError(f"cannot reach worker process {worker.process.pid}: {exc}") from None

    async def _expect_ready(self, worker: _Process, step: str) -> None:
        kind, detail = await worker.ready.get()
        if kind != "ready":
            self.close()
            hint = ""
            if step == "start" and kind == "ended":  # it ended before it could say why
                hint = (
                    ' (if the script that started this replay did so outside `if __name__ == "__main__":`, each'
                    " worker process ran it again as it started, and could not start workers of its own: put the"
                    " script's entry point under that guard)"
                )
            raise NotSendableError(f"a worker process could not {step}: {detail}{hint}")

    def _readable(self, worker: _Process) -> None:
        """The worker's pipe has answers: the loop reads them (a worker writes each batch whole). No reader
        thread: threads taking answers contended with the loop for the GIL on every trial. On the pipe's end,
        the worker is lost."""
        try:
            raw = worker.connection.recv_bytes()
        except (EOFError, OSError):
            self._stop_reading(worker)
            self._gone(worker)
            return
        try:
            message = pickle.loads(raw)
        except Exception as exc:  # an answer that does not unpickle here
            message = ("broken", 0, repr(exc))
        self._answer(worker, message)

    def _stop_reading(self, worker: _Process) -> None:
        if self._loop is not None and not self._loop.is_closed():
            with contextlib.suppress(OSError, ValueError):  # the pipe is closed already
                self._loop.remove_reader(worker.connection.fileno())

    def _answer(self, worker: _Process, message: tuple[Any, ...]) -> None:
        kind, _, payload = message
        if kind in ("ready", "broken"):
            worker.ready.put_nowait((kind, payload))
            return
        for answer, job_id, data in payload:  # "answers": (kind, job, pickled payload) of finished trials
            try:
                outcome = pickle.loads(data)
            except Exception as exc:  # this answer only: its trial fails, saying why
                outcome = RuntimeError(f"a trial's answer from a worker process cannot be read here: {exc!r}")
            if answer == "error" and not isinstance(outcome, BaseException):
                outcome = RuntimeError(f"a worker process failed a trial: {outcome!r}")
            self._settle(job_id, outcome)

    def _gone(self, worker: _Process) -> None:
        """The worker's pipe closed: fail its trials in flight and start its replacement (unless closing)."""
        if not worker.alive:
            return
        worker.alive = False
        worker.process.join(timeout=5)
        code = worker.process.exitcode
        if self._scratch is not None and code is not None:  # what it left: its templates, its tickets' own
            shutil.rmtree(self._scratch / f"worker-{worker.process.pid}", ignore_errors=True)
        # The worker marked the jobs it started and had not answered (`StartedMarks`); their answers written whole
        # were read above, before the pipe's end. Those marked cost a retry; the others were queued and never
        # started, and are sent again as they are. Should a job have found no cell, every one counts as started.
        held = sorted(
            (job_id, future)
            for job_id, (future, index) in self._pending.items()
            if index == worker.index and not future.done()
        )
        started = StartedMarks.read(worker.started)
        why = f"process {worker.process.pid} ended (exit code {code})"
        for job_id, future in held:
            lost = started is None or job_id in started
            future.set_exception(WorkerLostError(why) if lost else _NeverStartedError(why))
        worker.ready.put_nowait(("ended", why))
        if self._workers and self._workers[worker.index] is worker:
            replacement = self._spawn(worker.index)
            for number, data in enumerate(self._profiles):
                self._send(replacement, ("profile", number, data))
            # Its "ready" answers are not awaited: its first trials wait in its pipe until it has loaded.
            self._workers[worker.index] = replacement
