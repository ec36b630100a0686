"""The ingest thread: requests queue their raw bodies; one thread decodes them and commits them in groups.

A request is answered only when the commit that holds its spans has returned (durable acknowledgement). The
queue is bounded in bytes of request bodies: when it is full the request is refused at once (the caller
answers 429).

Decoding happens on this thread too, not on the request's: decoding and writing both need the interpreter
lock, and when they ran on two threads of one process the writer spent most of its time waiting for the lock
between rows, holding the database's write lock all the while. With one thread per process doing both, the
CPU-bound work of a collector scales with processes (`passhat serve --workers N`): while one process holds the
database's write lock, the others decode.

A large request is split into parts (`prepare`), decoded and committed in turn with whole requests, and a
failed group commit is retried one request at a time (see `_isolated`).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from passhat.collector.ingest._metrics import CollectorMetrics
from passhat.collector.ingest._otlp import DecodedTraces, OtlpError
from passhat.collector.store import NormalizedSpan, SpanBatch, Store, StoreDataError, StoreError, WriteResult

log = logging.getLogger("passhat.collector.ingest")

Decoder = Callable[[bytes, "str | None", str], DecodedTraces]
"""(body, Content-Encoding, media type) -> the request's spans; raises OtlpError for a refused request."""
Preparer = Callable[[bytes, "str | None", str], tuple[list[bytes], str]]
"""(body, Content-Encoding, media type) -> the body decompressed, in one part or (a large one) several, each a
request of its own, and their media type (a large JSON body's parts are protobuf); raises OtlpError for a
refused request."""


@dataclass(slots=True)
class Ingested:
    """What became of one request: its decoded spans (and rejected ones), and what the commit did."""

    decoded: DecodedTraces
    written: WriteResult


@dataclass(slots=True)
class _Job:
    project: str
    body: bytes
    encoding: str | None
    media: str
    future: asyncio.Future[Ingested]
    loop: asyncio.AbstractEventLoop
    whole: _Whole | None = None  # a part of a request split by `prepare`: answered through the whole
    prepared: bool = False


@dataclass(slots=True)
class _Whole:
    """A request decoded and committed in parts: answered once every part is, with all their rejections."""

    job: _Job
    remaining: int
    rejected: list[str] = field(default_factory=list)
    accepted: int = 0
    duplicates: int = 0
    failure: BaseException | None = None

    def settle(self, result: Ingested | BaseException) -> None:
        if isinstance(result, BaseException):
            self.failure = self.failure or result
        else:
            self.rejected += result.decoded.rejected
            self.accepted += result.written.accepted
            self.duplicates += result.written.duplicates
        self.remaining -= 1
        if self.remaining == 0:
            # A failed part fails the request: the exporter re-sends it, and the parts already stored are
            # de-duplicated then.
            whole = Ingested(DecodedTraces(rejected=self.rejected), WriteResult(self.accepted, self.duplicates))
            _answer(self.job, self.failure or whole)


_LARGE_BYTES = 1024 * 1024
"""A request body (as received or decompressed) above this size is large: the heap is trimmed after it."""
_IDLE_TRIM_S = 0.5
"""How long the ingest thread waits for no request, after a large one, before it trims the heap."""


class QueueFullError(Exception):
    """The ingest queue holds too many bytes; retry later."""


class GroupCommitWriter:
    """Decodes queued requests and commits their spans in groups of up to `max_commit_spans`, on one thread."""

    def __init__(
        self,
        store: Store,
        metrics: CollectorMetrics,
        decode: Decoder,
        *,
        prepare: Preparer | None = None,
        max_queued_bytes: int,
        max_commit_spans: int,
    ) -> None:
        self._store = store
        self._metrics = metrics
        self._decode = decode
        self._prepare = prepare
        self._max_queued = max_queued_bytes
        self._max_commit = max_commit_spans
        self._jobs: deque[_Job] = deque()
        self._parts: deque[_Job] = deque()  # parts of large requests, decoded in turn with whole ones
        self._part_turn = False
        self._trim_due = False  # a large request was taken since the last trim
        self._queued_bytes = 0
        self._pending_spans = 0  # decoded, waiting for their group's commit
        self._cond = threading.Condition()
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="passhat-ingest", daemon=True)
        self._thread.start()

    @property
    def queued_bytes(self) -> int:
        """Request bytes waiting to be decoded."""
        return self._queued_bytes

    @property
    def queued_spans(self) -> int:
        """Spans decoded and waiting for their commit."""
        return self._pending_spans

    def submit(self, project: str, body: bytes, encoding: str | None, media: str) -> asyncio.Future[Ingested]:
        """Queue a request body; the future resolves once its spans are durable (or it was refused)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Ingested] = loop.create_future()
        with self._cond:
            if self._closing:
                raise QueueFullError("the collector is shutting down")
            # An oversized request is still taken when the queue is empty, so it can never starve.
            if self._queued_bytes and self._queued_bytes + len(body) > self._max_queued:
                raise QueueFullError(f"{self._queued_bytes} bytes of requests are waiting to be written")
            self._jobs.append(_Job(project, body, encoding, media, future, loop))
            self._queued_bytes += len(body)
            self._metrics.queue_bytes.set(self._queued_bytes)
            self._cond.notify()
        return future

    def _next(self, *, wait: bool, first: bool = False) -> _Job | None:
        """The next request to decode. A large request's parts are taken only as the `first` of a group, and
        in turn with the requests waiting: one part, then a group of whole requests, then a part..., so a
        small request waits for one part's decode and commit at most, not for the whole large request."""
        with self._cond:
            while wait and not self._jobs and not self._parts and not self._closing:
                self._cond.wait()
            if first and self._parts and (self._part_turn or not self._jobs):
                self._part_turn = False
                return self._parts.popleft()
            if not self._jobs:
                return None
            self._part_turn = self._part_turn or first
            job = self._jobs.popleft()
            self._queued_bytes -= len(job.body)  # parts never count: their request's bytes already left
            self._metrics.queue_bytes.set(self._queued_bytes)
            return job

    def _run(self) -> None:
        while True:
            if self._trim_due:
                self._trim_when_idle()
            job = self._next(wait=True, first=True)
            if job is None:
                return  # closing and drained
            group: list[tuple[_Job, DecodedTraces]] = []
            spans = 0
            while job is not None:
                if self._prepare is not None and not job.prepared and self._split(job):
                    job = self._next(wait=False)  # it was refused, or its parts were queued
                    continue
                try:
                    decoded = self._decode(job.body, job.encoding, job.media)
                except Exception as exc:
                    _refuse(job, exc)
                else:
                    if decoded.rejected:
                        self._metrics.spans_rejected.inc(len(decoded.rejected))
                    group.append((job, decoded))
                    spans += len(decoded.spans)
                    self._pending_spans = spans
                    self._metrics.queue_spans.set(spans)
                if spans >= self._max_commit:
                    break
                job = self._next(wait=False)
            self._commit(group, spans)

    def _trim_when_idle(self) -> None:
        """Once no request has come for `_IDLE_TRIM_S` after a large one, hands the freed heap back to the
        system: by then the burst's bodies and rows are garbage (its answers sent), and a trim in the middle of
        a burst would only give back what the next request takes again."""
        with self._cond:
            busy = self._cond.wait_for(lambda: self._jobs or self._parts or self._closing, timeout=_IDLE_TRIM_S)
        if not busy:
            self._trim_due = False
            _return_memory()

    def _split(self, job: _Job) -> bool:
        """Decompresses the job's body and queues its parts when `prepare` split it into several, or refuses
        it; False when it stays one request, decompressed."""
        assert self._prepare is not None
        try:
            parts, media = self._prepare(job.body, job.encoding, job.media)
        except Exception as exc:
            _refuse(job, exc)
            return True
        if len(job.body) > _LARGE_BYTES or len(parts[0]) > _LARGE_BYTES:
            self._trim_due = True
        job.body, job.encoding, job.media, job.prepared = parts[0], None, media, True
        if len(parts) == 1:
            return False
        whole = _Whole(job, len(parts))
        pieces = [_Job(job.project, part, None, media, job.future, job.loop, whole, True) for part in parts]
        with self._cond:
            self._parts.extend(pieces)
        return True

    def _commit(self, group: list[tuple[_Job, DecodedTraces]], spans: int) -> None:
        writing = [(job, decoded) for job, decoded in group if decoded.spans]
        started = time.perf_counter()
        outcomes: list[WriteResult | StoreError] = []
        if writing:
            try:
                outcomes = list(
                    self._store.write_batches([SpanBatch(job.project, decoded.spans) for job, decoded in writing])
                )
            except Exception as exc:  # whatever failed, each request is retried alone
                outcomes = self._isolated(writing, exc)
            self._metrics.store_write_seconds.observe(time.perf_counter() - started)
            self._metrics.commit_spans.observe(spans)
        self._pending_spans = 0
        self._metrics.queue_spans.set(0)
        results = iter(outcomes)
        for job, decoded in group:
            if not decoded.spans:
                _answer(job, Ingested(decoded, WriteResult(0, 0)))
                continue
            written = next(results)
            if isinstance(written, StoreError):
                self._metrics.spans_rejected.inc(len(decoded.spans))
                _answer(job, written)
            else:
                self._metrics.spans_accepted.inc(written.accepted)
                self._metrics.spans_duplicate.inc(written.duplicates)
                # The answer carries the rejections only: the decoded spans are garbage once committed.
                _answer(job, Ingested(DecodedTraces(rejected=decoded.rejected), written))

    def _isolated(
        self, writing: list[tuple[_Job, DecodedTraces]], failure: Exception
    ) -> list[WriteResult | StoreError]:
        """A failed group commit, retried one request at a time: a request's bad row fails that request only.

        A request whose own commit fails for a value in it (`StoreDataError`) is split in halves until the
        spans at fault are found: they are rejected with a reason, the others are stored. Any other failure
        (the store is down, its disk is full) fails the request as a whole, to be retried by its exporter."""
        log.warning("a group commit of %d requests failed, retrying each alone: %r", len(writing), failure)
        outcomes: list[WriteResult | StoreError] = []
        for job, decoded in writing:
            if len(writing) == 1:
                error: Exception = failure
            else:
                try:
                    [written] = self._store.write_batches([SpanBatch(job.project, decoded.spans)])
                except Exception as exc:  # classified below
                    error = exc
                else:
                    outcomes.append(written)
                    continue
            if not _is_data_error(error):
                log.error("project %r: a request's commit failed: %r", job.project, error)
                outcomes.append(error if isinstance(error, StoreError) else StoreError(repr(error)))
                continue
            try:
                outcomes.append(_Bisection(self._store, job.project).store(decoded))
            except StoreError as exc:
                log.error("project %r: a request's commit failed while isolating a bad span: %r", job.project, exc)
                outcomes.append(exc)
        return outcomes

    def close(self, timeout: float = 30.0) -> None:
        """Stop taking requests, commit what is queued, and stop the thread."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join(timeout)


def _is_data_error(exc: Exception) -> bool:
    # Not a StoreError at all: a store that let a binding error through (OverflowError, TypeError...).
    return isinstance(exc, StoreDataError) or not isinstance(exc, StoreError)


class _Bisection:
    """Stores a request's spans in ever smaller halves around the ones the store refuses."""

    MAX_FAILURES = 64  # failed commits per request: a few bad spans are found in ~2 log2(n) commits each

    def __init__(self, store: Store, project: str) -> None:
        self._store = store
        self._project = project
        self._failures = 1  # the request's own commit
        self._accepted = 0
        self._duplicates = 0

    def store(self, decoded: DecodedTraces) -> WriteResult:
        """Commits what can be; each refused span goes to `decoded.rejected` with its reason."""
        spans = decoded.spans
        middle = len(spans) // 2
        for half in (spans[:middle], spans[middle:]) if middle else (spans,):
            self._split(half, decoded.rejected, known_bad=not middle)
        return WriteResult(self._accepted, self._duplicates)

    def _split(self, spans: list[NormalizedSpan], rejected: list[str], *, known_bad: bool = False) -> None:
        if not spans:
            return
        if not known_bad:
            try:
                [written] = self._store.write_batches([SpanBatch(self._project, spans)])
            except Exception as exc:  # a real storage failure is raised again below
                if not _is_data_error(exc):
                    raise exc if isinstance(exc, StoreError) else StoreError(repr(exc)) from exc
                self._failures += 1
                reason = exc
            else:
                self._accepted += written.accepted
                self._duplicates += written.duplicates
                return
        else:
            reason = None
        if len(spans) == 1 or self._failures >= self.MAX_FAILURES:
            log.warning("project %r: %d span(s) the store refused: %r", self._project, len(spans), reason)
            rejected.extend(
                f"span {span.span_id} ({span.name[:80]!r}): the store cannot hold one of its values" for span in spans
            )
            return
        middle = len(spans) // 2
        self._split(spans[:middle], rejected)
        self._split(spans[middle:], rejected)


def _refuse(job: _Job, exc: Exception) -> None:
    """Answers a request whose body could not be decoded."""
    if isinstance(exc, OtlpError):  # the request's own fault, named
        _answer(job, exc)
    elif isinstance(exc, MemoryError):
        _answer(job, QueueFullError("not enough memory to decode the request"))
    else:  # a body no check foresaw: still the body's fault
        log.error("a request body failed to decode", exc_info=exc)
        _answer(job, OtlpError(400, f"the body could not be decoded ({type(exc).__name__})"))


def _answer(job: _Job, result: Ingested | BaseException) -> None:
    if job.whole is not None:
        job.whole.settle(result)
        return
    # RuntimeError: the request's event loop is gone, so nobody is waiting for this answer.
    with contextlib.suppress(RuntimeError):
        job.loop.call_soon_threadsafe(_settle, job.future, result)


def _settle(future: asyncio.Future[Ingested], result: Ingested | BaseException) -> None:
    if future.done():
        return
    if isinstance(result, BaseException):
        future.set_exception(result)
    else:
        future.set_result(result)


def _load_malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc: its allocator returns memory its own way
        return None
    return trim


_malloc_trim = _load_malloc_trim()


def _return_memory() -> None:
    """After a large request, hands the freed heap back to the system: glibc keeps it otherwise, and a burst of
    large requests left the process at its peak size for good."""
    if _malloc_trim is not None:
        _malloc_trim(0)
