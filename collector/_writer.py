"""Group commits: requests queue their spans; one thread commits everything queued in one transaction.

A request is answered only when the commit that holds its spans has returned (durable acknowledgement). The
queue is bounded in spans: when it is full the request is refused at once (the caller answers 429).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from passhat.collector._metrics import CollectorMetrics
from passhat.collector.store import NormalizedSpan, SpanBatch, Store, StoreError, WriteResult


@dataclass(slots=True)
class _Job:
    batch: SpanBatch
    future: asyncio.Future[WriteResult]
    loop: asyncio.AbstractEventLoop


class QueueFullError(Exception):
    """The write queue holds too many spans; retry later."""


class GroupCommitWriter:
    """Commits queued span batches in groups of up to `max_commit_spans` spans, from one thread."""

    def __init__(
        self, store: Store, metrics: CollectorMetrics, *, max_queued_spans: int, max_commit_spans: int
    ) -> None:
        self._store = store
        self._metrics = metrics
        self._max_queued = max_queued_spans
        self._max_commit = max_commit_spans
        self._jobs: deque[_Job] = deque()
        self._queued_spans = 0
        self._cond = threading.Condition()
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="passhat-writer", daemon=True)
        self._thread.start()

    @property
    def queued_spans(self) -> int:
        return self._queued_spans

    def submit(self, project: str, spans: Sequence[NormalizedSpan]) -> asyncio.Future[WriteResult]:
        """Queue spans for the next commit; the future resolves once they are durable."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[WriteResult] = loop.create_future()
        with self._cond:
            if self._closing:
                raise QueueFullError("the collector is shutting down")
            # An oversized request is still taken when the queue is empty, so it can never starve.
            if self._queued_spans and self._queued_spans + len(spans) > self._max_queued:
                raise QueueFullError(f"{self._queued_spans} spans are waiting to be written")
            self._jobs.append(_Job(SpanBatch(project, spans), future, loop))
            self._queued_spans += len(spans)
            self._metrics.queue_spans.set(self._queued_spans)
            self._cond.notify()
        return future

    def _take(self) -> list[_Job]:
        with self._cond:
            while not self._jobs and not self._closing:
                self._cond.wait()
            taken: list[_Job] = []
            spans = 0
            while self._jobs and (not taken or spans + len(self._jobs[0].batch.spans) <= self._max_commit):
                job = self._jobs.popleft()
                taken.append(job)
                spans += len(job.batch.spans)
            return taken

    def _run(self) -> None:
        while True:
            jobs = self._take()
            if not jobs:
                return  # closing and drained
            started = time.perf_counter()
            outcome: list[WriteResult] | BaseException
            try:
                outcome = self._store.write_batches([job.batch for job in jobs])
            except StoreError as exc:
                outcome = exc
            except Exception as exc:  # an unexpected store failure must not kill the writer
                outcome = StoreError(f"store write failed: {exc!r}")
            elapsed = time.perf_counter() - started
            count = sum(len(job.batch.spans) for job in jobs)
            with self._cond:
                self._queued_spans -= count
                self._metrics.queue_spans.set(self._queued_spans)
            self._metrics.store_write_seconds.observe(elapsed)
            self._metrics.commit_spans.observe(count)
            for index, job in enumerate(jobs):
                result = outcome if isinstance(outcome, BaseException) else outcome[index]
                # RuntimeError: the request's event loop is gone, so nobody is waiting for this answer.
                with contextlib.suppress(RuntimeError):
                    job.loop.call_soon_threadsafe(_settle, job.future, result)

    def close(self, timeout: float = 30.0) -> None:
        """Stop taking spans, commit what is queued, and stop the thread."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join(timeout)


def _settle(future: asyncio.Future[WriteResult], result: WriteResult | BaseException) -> None:
    if future.done():
        return
    if isinstance(result, BaseException):
        future.set_exception(result)
    else:
        future.set_result(result)
