"""The ingest thread: requests queue their raw bodies; one thread decodes them and commits them in groups.

A request is answered only when the commit that holds its spans has returned (durable acknowledgement). The
queue is bounded in bytes of request bodies: when it is full the request is refused at once (the caller
answers 429).

Decoding happens on this thread too, not on the request's: decoding and writing both need the interpreter
lock, and when they ran on two threads of one process the writer spent most of its time waiting for the lock
between rows, holding the database's write lock all the while. With one thread per process doing both, the
CPU-bound work of a collector scales with processes (`passhat serve --workers N`): while one process holds the
database's write lock, the others decode.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from passhat.collector.ingest._metrics import CollectorMetrics
from passhat.collector.ingest._otlp import DecodedTraces
from passhat.collector.store import SpanBatch, Store, StoreError, WriteResult

Decoder = Callable[[bytes, "str | None", str], DecodedTraces]
"""(body, Content-Encoding, media type) -> the request's spans; raises OtlpError for a refused request."""


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
        max_queued_bytes: int,
        max_commit_spans: int,
    ) -> None:
        self._store = store
        self._metrics = metrics
        self._decode = decode
        self._max_queued = max_queued_bytes
        self._max_commit = max_commit_spans
        self._jobs: deque[_Job] = deque()
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

    def _next(self, *, wait: bool) -> _Job | None:
        with self._cond:
            while wait and not self._jobs and not self._closing:
                self._cond.wait()
            if not self._jobs:
                return None
            job = self._jobs.popleft()
            self._queued_bytes -= len(job.body)
            self._metrics.queue_bytes.set(self._queued_bytes)
            return job

    def _run(self) -> None:
        while True:
            job = self._next(wait=True)
            if job is None:
                return  # closing and drained
            group: list[tuple[_Job, DecodedTraces]] = []
            spans = 0
            while job is not None:
                try:
                    decoded = self._decode(job.body, job.encoding, job.media)
                except Exception as exc:  # OtlpError: the request's own fault; anything else: answered as such
                    _answer(job, exc)
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

    def _commit(self, group: list[tuple[_Job, DecodedTraces]], spans: int) -> None:
        writing = [(job, decoded) for job, decoded in group if decoded.spans]
        started = time.perf_counter()
        outcome: list[WriteResult] | StoreError = []
        if writing:
            try:
                outcome = self._store.write_batches([SpanBatch(job.project, decoded.spans) for job, decoded in writing])
            except StoreError as exc:
                outcome = exc
            except Exception as exc:  # an unexpected store failure must not kill the thread
                outcome = StoreError(f"store write failed: {exc!r}")
            self._metrics.store_write_seconds.observe(time.perf_counter() - started)
            self._metrics.commit_spans.observe(spans)
        self._pending_spans = 0
        self._metrics.queue_spans.set(0)
        results = iter(outcome) if isinstance(outcome, list) else None
        for job, decoded in group:
            if not decoded.spans:
                _answer(job, Ingested(decoded, WriteResult(0, 0)))
            elif results is None:
                self._metrics.spans_rejected.inc(len(decoded.spans))
                _answer(job, outcome)  # type: ignore[arg-type]
            else:
                written = next(results)
                self._metrics.spans_accepted.inc(written.accepted)
                self._metrics.spans_duplicate.inc(written.duplicates)
                _answer(job, Ingested(decoded, written))

    def close(self, timeout: float = 30.0) -> None:
        """Stop taking requests, commit what is queued, and stop the thread."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join(timeout)


def _answer(job: _Job, result: Ingested | BaseException) -> None:
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
