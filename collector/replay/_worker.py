"""A replay's worker process: what the driver sends it (`TrialProfile`, `TrialJob`), what it sends back
(`WorkerRow`, a `WorkerResult`), and its body (`_serve`): the domains' templates built once, trials run
concurrently on its own asyncio loop exactly as a local replay runs them. The driver's side is `_processes`, and
`_local` is a replay's use of it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import os
import pickle
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan

import passhat
from passhat.collector.replay._adapters import ReplayTicket
from passhat.collector.replay._pool import SandboxPool
from passhat.collector.replay._ray import DomainRef, TrialWorker, WorkerResult, _load, keep_templates_frozen
from passhat.collector.replay._relay import RuntimeSettings, SpanCapture, SpanSnapshot
from passhat.collector.replay._row import RowSpec, row_of
from passhat.collector.store import TrialRow, VerdictText, verdict_text
from passhat.sandbox import AgentFactory, RunConfig, release_copies_to_the_system, run_trial_with_retries

ANSWER_WAIT = 0.002
"""Seconds a finished trial's answer may wait for others to go back with it (while other trials run)."""

ANSWERS_AT_ONCE = 64
"""At most this many answers go back in one message."""

TRACED_PRELOAD = ("passhat.collector.ingest._store_export", "passhat.collector.store.sql._ingest")
"""Modules a traced replay's workers import to build the store's rows of their spans (`spans_prepared_in_workers`),
imported once, with this one, by the server the workers are forked from: loading the profile of a traced replay
in each worker (the ingest package brings the collector's web app) stalled every worker about 0.1 s at the start."""


@dataclass(frozen=True)
class Prepared:
    """A trial's spans as the driver's exporter prepared them in the worker (`TrialProfile.prepare_spans`)."""

    spans: Any


class NotSendableError(Exception):
    """What the trials need cannot be sent to a worker process; the message says what and how to make it sendable."""


@dataclass(frozen=True)
class TrialProfile:
    """How a set of trials runs in a worker: the agent, the runner's settings, and how they are traced."""

    agent: AgentFactory
    config: RunConfig
    tracing: RuntimeSettings | None = None
    pseudonym_secret: bytes | None = None  # the driver's own key (same machine), else the workers read theirs
    rows: RowSpec | None = None  # a replay's trials: the worker sends each one's stored row, not its result
    # The driver's exporter prepares spans here (`prepared_export`): each trial's spans go back prepared.
    prepare_spans: Callable[[Sequence[ReadableSpan]], Any] | None = None


@dataclass(frozen=True)
class WorkerRow:
    """What a worker sends back for one replay trial: its stored row (details' JSON document built), its spans.

    The row travels as its fields in order: a tuple unpickles in the driver faster than a slotted dataclass."""

    values: tuple[Any, ...]
    spans: tuple[SpanSnapshot, ...] | Prepared

    @classmethod
    def of(cls, row: TrialRow, spans: tuple[SpanSnapshot, ...] | Prepared) -> WorkerRow:
        """The row's fields, its check verdict as the JSON text the store writes (`VerdictText`): built here, in
        parallel, and kept so by the driver, which never builds the verdict's dicts unless they are read."""
        text = verdict_text(row)
        verdict = None if text is None else VerdictText(text)
        return cls(tuple(verdict if name == "verdict" else getattr(row, name) for name in _ROW_FIELDS), spans)

    @property
    def row(self) -> TrialRow:
        return TrialRow(*self.values)


_ROW_FIELDS = tuple(field.name for field in dataclasses.fields(TrialRow))


@dataclass(frozen=True)
class TrialJob:
    """One trial sent to a worker: the ticket (pickled once for all its attempts), the attempt, and (production
    traffic) the ticket id to trace."""

    job_id: int
    profile: int
    ticket: bytes
    attempt: int
    ticket_id: str | None = None
    production: bool = False


def sendable(profile: TrialProfile) -> bytes:
    """The profile pickled for the workers, or `NotSendableError` naming what cannot travel."""
    try:
        return pickle.dumps(profile)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        agent = getattr(profile.agent, "__qualname__", type(profile.agent).__name__)
        raise NotSendableError(
            f"the agent factory {agent} (or the trace settings) cannot be sent to a worker process ({exc}); "
            "name a module-level function or class as the factory (module:function) to run on every core"
        ) from None


# ---------------------------------------------------------------------------------------------------------- worker


class _Body(TrialWorker):
    """A worker process's state: the domains' templates, built once, and the profiles its trials run under."""

    def __init__(self, domains: Mapping[str, DomainRef], seed: int, size: str, keep: int, at_once: int) -> None:
        release_copies_to_the_system()  # parked trial databases give their memory back (`TrialConnection`)
        self.pool = SandboxPool(seed=seed, size=size)
        self.domains = {name: _load(ref) for name, ref in domains.items()}
        for domain in self.domains.values():
            self.pool.base(domain)  # the templates, once per worker
        keep_templates_frozen()
        self.capture = SpanCapture()
        self._derived = {}
        self._idle = collections.OrderedDict()
        self._keep = keep
        self.at_once = at_once  # trials run at once; the driver sends more, which wait their turn here
        self.profiles: dict[int, tuple[AgentFactory, RunConfig, passhat.Passhat | None, RowSpec | None]] = {}
        self.prepare: dict[int, Callable[[Sequence[ReadableSpan]], Any] | None] = {}

    def add_profile(self, number: int, profile: TrialProfile) -> None:
        runtime = None
        if profile.tracing is not None:
            # The agent's module is imported by now (unpickling its factory): if it set no global provider, a
            # framework's spans in these trials come to them all the same.
            passhat.route_unclaimed_spans_to_trials()
            secret = profile.pseudonym_secret
            key = None if secret is None else passhat.PseudonymKey(secret)
            runtime = profile.tracing.runtime(self.capture, pseudonym_key=key)
        self.profiles[number] = (profile.agent, profile.config, runtime, profile.rows)
        self.prepare[number] = profile.prepare_spans

    async def run_job(self, job: TrialJob) -> WorkerResult | WorkerRow:
        """One trial, exactly as a local replay (or the demo's production traffic) runs it."""
        agent, config, runtime, rows = self.profiles[job.profile]
        item: ReplayTicket = pickle.loads(job.ticket)
        sandbox = self._open(item)
        try:
            result = await run_trial_with_retries(
                sandbox,
                item.scenario,
                job.attempt,
                agent,
                config=config,
                runtime=runtime,
                ticket_id=job.ticket_id,
                production=job.production,
            )
        finally:
            self._close(item)
        # The harness's lost runs are traced like any (as on Ray), and are handed over with the trial.
        traces = (*result.lost_trace_ids, result.trace_id)
        finished = [span for trace in traces for span in self.capture.take_spans(trace)] if runtime is not None else []
        if rows is not None:
            row = row_of(rows, result)
            row.details.json_text()  # built here, in parallel: the driver writes this text as it came
            prepare = self.prepare.get(job.profile)
            if prepare is not None and finished:  # prepared here, in parallel: the driver stores them as they come
                return WorkerRow.of(row, Prepared(prepare(finished)))
            return WorkerRow.of(row, tuple(SpanSnapshot.of(span) for span in finished))
        return WorkerResult(result, tuple(SpanSnapshot.of(span) for span in finished), os.getpid())


class StartedMarks:
    """Which jobs this worker has started and not yet answered, in memory the driver reads if the worker dies
    (``cells``, shared with it: `StartedMarks.read`). A job is marked as it starts and unmarked once the message
    holding its answer is written whole, so the driver, reading the pipe to its end first, knows exactly which of
    the jobs it holds unanswered had started (their attempts were lost: a retry each) and which were still queued
    (sent again with no attempt lost). Cell 0 counts the jobs that found no free cell (never, when ``cells`` has
    one per job the driver may send this worker); the driver then takes every job it holds as started."""

    def __init__(self, cells: Any) -> None:
        self.cells = cells
        self.free = list(range(len(cells) - 1, 0, -1))
        self.at: dict[int, int] = {}

    def start(self, job_id: int) -> None:
        if not self.free:
            self.cells[0] += 1
            return
        cell = self.free.pop()
        self.cells[cell] = job_id
        self.at[job_id] = cell

    def answered(self, job_id: int) -> None:
        cell = self.at.pop(job_id, None)
        if cell is not None:
            self.cells[cell] = 0
            self.free.append(cell)

    @staticmethod
    def read(cells: Any) -> set[int] | None:
        """The jobs marked started in ``cells`` (a dead worker's), or None when one could not be marked."""
        values = list(cells)
        return None if values[0] else {job for job in values[1:] if job}


def _serve(connection: Connection, path: list[str], scratch: str | None = None, started: Any = None) -> None:
    """A worker process: take messages from the driver until it says stop or goes away. Its temporary files (the
    domains' templates, tickets' own) go in ``scratch``/worker-<pid>, which the driver removes, even when this
    process is killed and cannot. ``started``: shared cells where it marks the jobs it started and has not
    answered (`StartedMarks`)."""
    for entry in reversed(path):  # the driver's import path (your factory's module beside passhat.toml)
        if entry not in sys.path:
            sys.path.insert(0, entry)
    if scratch is not None:
        folder = os.path.join(scratch, f"worker-{os.getpid()}")
        os.makedirs(folder, exist_ok=True)
        tempfile.tempdir = folder
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_loop(connection, None if started is None else StartedMarks(started)))


async def _serve_loop(connection: Connection, marks: StartedMarks | None = None) -> None:
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[bytes | None] = asyncio.Queue()

    def read() -> None:
        """Jobs are read on a thread of their own, never by the loop: the driver writes jobs and this worker
        writes answers with blocking writes, so with hundreds of trials sent at once both pipes fill, and a
        worker that read only between its own writes would block in one while the driver blocks in the other
        (tried: a deadlock at 1,000 in flight; `test_hundreds_of_trials_sent_at_once_never_deadlock_the_pipes`)."""
        while True:
            try:
                message: bytes | None = connection.recv_bytes()
            except (EOFError, OSError):
                message = None
            try:
                loop.call_soon_threadsafe(inbox.put_nowait, message)
            except RuntimeError:  # the loop has ended (the worker is stopping)
                return
            if message is None:
                return

    threading.Thread(target=read, name="passhat-worker-inbox", daemon=True).start()

    def send(message: tuple[Any, ...]) -> None:
        connection.send_bytes(pickle.dumps(message))

    body: _Body | None = None
    limit = asyncio.Semaphore(1)
    running: set[asyncio.Task[None]] = set()
    active = 0  # trials running now (the others in ``running`` wait their turn)
    outbox: list[tuple[str, int, bytes]] = []
    timer: list[asyncio.TimerHandle] = []

    def flush() -> None:
        for handle in timer:
            handle.cancel()
        timer.clear()
        if outbox:
            answers = outbox[:]
            outbox.clear()
            send(("answers", 0, answers))
            if marks is not None:  # written whole: the driver reads them before it could find this worker gone
                for _, job_id, _ in answers:
                    marks.answered(job_id)

    def reply(kind: str, job_id: int, payload: Any) -> None:
        """Answers go back in batches: each message costs both processes a write and a wakeup, a good part of
        the driver's CPU a trial. An answer waits while other trials still run here (the core has work
        meanwhile) until half of this worker's trials have finished, or `ANSWER_WAIT` passed; a worker holding
        one to three trials answers at once. Each is pickled on its own: one that cannot be sent, or read by the
        driver, fails its own trial only."""
        try:
            data = pickle.dumps(payload)
        except Exception as exc:  # a result that does not pickle: say so rather than hang the driver
            kind, data = "error", pickle.dumps(RuntimeError(f"a trial's result cannot be sent: {exc!r}"))
        outbox.append((kind, job_id, data))
        if len(outbox) >= min(active // 2, ANSWERS_AT_ONCE):  # half the trials running here (this one counted)
            flush()
        elif not timer:
            timer.append(loop.call_later(ANSWER_WAIT, flush))

    async def answer(job: TrialJob) -> None:
        nonlocal active
        assert body is not None
        async with limit:
            active += 1
            if marks is not None:
                marks.start(job.job_id)
            try:
                reply("done", job.job_id, await body.run_job(job))
            except Exception as exc:
                reply("error", job.job_id, _portable(exc))
            finally:
                active -= 1

    while True:
        raw = await inbox.get()
        if raw is None:
            break
        message = pickle.loads(raw)
        kind = message[0]
        if kind == "stop":
            break
        try:
            if kind == "start":
                body = _Body(*message[1:])
                limit = asyncio.Semaphore(body.at_once)
                send(("ready", 0, None))
            elif kind == "profile":
                assert body is not None
                body.add_profile(message[1], pickle.loads(message[2]))
                send(("ready", 0, None))
            elif kind == "run":  # the jobs the driver sent together
                for job in message[1]:
                    task = asyncio.ensure_future(answer(job))
                    running.add(task)
                    task.add_done_callback(running.discard)
        except Exception as exc:  # a domain or a factory this process cannot import
            send(("broken", 0, f"{type(exc).__name__}: {exc}"))
    if running:
        await asyncio.gather(*running, return_exceptions=True)
    with contextlib.suppress(OSError, ValueError):  # the driver may be gone
        flush()
    if body is not None:
        body.pool.close()


def _portable(exc: BaseException) -> BaseException:
    try:
        pickle.dumps(exc)
    except Exception:
        text = "".join(traceback.format_exception(exc)).strip()
        return RuntimeError(f"a trial raised in a worker process:\n{text}")
    return exc
