"""Export that never blocks the agent: a bounded queue, a worker thread, drops counted, errors logged once."""

from __future__ import annotations

import collections
import gzip
import logging
import os
import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

logger = logging.getLogger("passhat")

REFUSED_STATUSES = frozenset({400, 413, 415, 422})
"""Statuses by which a collector refuses what a request holds (OTLP/HTTP: not to be retried as it is). 401, 403,
404 (a key or an endpoint to fix), 408, 429 and 5xx are retried: the spans wait for the collector."""

EXIT_RESERVE_S = 1.0
"""The most of ``export_timeout`` kept for the interpreter's own shutdown when passhat flushes at exit."""


class OtlpHttpExporter(SpanExporter):
    """Sends spans to ``{endpoint}/v1/traces`` as gzipped OTLP protobuf, one attempt per call.

    Retrying belongs to :class:`QueueingSpanProcessor`, which keeps a failed batch and tries again later; an
    exporter that slept through its own retries would hold the queue back instead.
    """

    def __init__(self, endpoint: str, *, api_key: str | None, timeout: float) -> None:
        import requests  # deferred: only an exporting process pays for it

        self.url = f"{endpoint.rstrip('/')}/v1/traces"
        self.timeout = timeout
        self._headers = {"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip", "User-Agent": "passhat"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._keyless = not api_key
        self._session = requests.Session()
        self._session.headers.update(self._headers)
        self.last_error: str | None = None
        self.refused = False  # the last failure was the collector refusing the batch's content
        self._encoded: tuple[tuple[int, int, int], bytes] | None = None

    def after_fork(self) -> None:
        """In a forked child: a connection pool of its own (the parent's sockets are not ours to use)."""
        import requests

        self._session = requests.Session()
        self._session.headers.update(self._headers)
        self._encoded = None

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.export_within(spans, self.timeout)

    def export_within(self, spans: Sequence[ReadableSpan], timeout: float) -> SpanExportResult:
        """One attempt taking at most ``timeout`` seconds (a shutdown's budget), or the export timeout if shorter.

        The bound is on the whole attempt: connecting and waiting for the answer share it (a collector slow to
        accept and then slow to answer would otherwise take it twice), and under a shutdown's budget so does
        encoding the batch.
        """
        import requests
        import urllib3
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        started = time.monotonic()
        # A batch retried through an outage is the same spans each time: encode and compress it once.
        key = (id(spans[0]), id(spans[-1]), len(spans)) if spans else None
        if key is not None and self._encoded is not None and self._encoded[0] == key:
            body = self._encoded[1]
        else:
            body = gzip.compress(encode_spans(spans).SerializeToString(), compresslevel=1)
            self._encoded = (key, body) if key is not None else None
        self.refused = False
        wait = min(timeout, self.timeout)
        if timeout < self.timeout:  # a shutdown's or a flush's budget: what encoding took is spent
            wait -= time.monotonic() - started
            if wait <= 0:
                self.last_error = "no time left to send before the flush's or shutdown's deadline"
                return SpanExportResult.FAILURE
        try:
            # requests takes urllib3's Timeout as it is (its adapter checks for one); its stubs only know numbers
            total = urllib3.Timeout(total=max(0.001, wait))
            response = self._session.post(self.url, data=body, timeout=total)  # type: ignore[arg-type]
        except requests.ConnectionError:
            self.last_error = "connection failed: is the collector running?"
            return SpanExportResult.FAILURE
        except Exception as exc:  # any transport failure is a failed export, never an agent crash
            self.last_error = f"{type(exc).__name__}: {str(exc)[:160]}"
            return SpanExportResult.FAILURE
        if response.ok:
            self.last_error = None
            self._encoded = None
            return SpanExportResult.SUCCESS
        self.last_error = f"HTTP {response.status_code}: {_described(response)}"
        if response.status_code in (401, 403):
            self.last_error += (
                "; no API key was given: set PASSHAT_API_KEY (or configure(api_key=...)) to a key of"
                " `passhat keys create --project NAME`"
                if self._keyless
                else "; the key given is unknown to this collector or was revoked (`passhat keys list` shows its keys)"
            )
        # The collector refused what the batch holds (malformed, too large): the same request never succeeds, so
        # the processor narrows it down to the span at fault (`refused`). Any other status is retried.
        self.refused = response.status_code in REFUSED_STATUSES
        return SpanExportResult.FAILURE

    def shutdown(self) -> None:
        self._session.close()


def _described(response: Any) -> str:
    """A failed answer's body as a person reads it: the text of a JSON or google.rpc.Status message, not bytes."""
    kind = response.headers.get("Content-Type", "")
    if "protobuf" in kind:
        try:
            from google.rpc import status_pb2

            status = status_pb2.Status()
            status.ParseFromString(response.content)
            return status.message[:200] or "(no message)"
        except Exception:
            return f"({len(response.content)} bytes of protobuf)"
    return str(response.text)[:200]


@dataclass(frozen=True)
class ExportStats:
    """Counters of one processor: what was queued, exported and dropped, and whether export is failing."""

    queued: int
    exported: int
    dropped: int
    failed_exports: int
    failing: bool
    refused: int = 0  # spans the collector refused for what they hold (too large, malformed): never sent


class QueueingSpanProcessor(SpanProcessor):
    """A batch span processor with a hard bound and honest accounting.

    ``on_end`` only appends to a deque (a span arriving when ``max_queue_size`` spans wait is dropped and
    counted). A worker thread exports batches every ``interval`` seconds or as soon as a batch is full. A
    failed batch stays at the head of the queue and is retried with a growing pause (up to ``max_backoff``),
    so spans that fit in the queue survive a collector outage; the first failure of an outage and the
    recovery are logged, nothing per span.
    """

    def __init__(
        self,
        exporter: SpanExporter,
        *,
        max_queue_size: int = 2048,
        max_export_batch_size: int = 512,
        interval: float = 1.0,
        max_backoff: float = 5.0,
        describe: str = "the collector",
    ) -> None:
        self.exporter = exporter
        self.max_queue_size = max_queue_size
        self.batch_size = min(max_export_batch_size, max_queue_size)
        self.interval = interval
        self.max_backoff = max_backoff
        self.describe = describe
        self._queue: collections.deque[ReadableSpan] = collections.deque()
        self._lock = threading.Lock()
        self._export_lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._stopping = False
        self._exported = 0
        self._dropped = 0
        self._dropped_this_outage = 0
        self._failed = 0
        self._failing = False
        self._refused = 0
        self._narrowed: int | None = None  # spans to send next while looking for the span the collector refuses
        self._shutdown_budget: float | None = None
        self._worker = threading.Thread(target=self._run, name="passhat-export", daemon=True)
        self._worker.start()
        # A forked child (gunicorn, multiprocessing) inherits the queue but not the worker thread.
        reinit = weakref.WeakMethod(self._after_fork_in_child)
        os.register_at_fork(after_in_child=lambda: (method := reinit()) and method())

    def _after_fork_in_child(self) -> None:
        self._queue = collections.deque()  # the parent exports its own spans
        self._lock = threading.Lock()
        self._export_lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._failing = False
        self._exported = self._dropped = self._dropped_this_outage = self._failed = self._refused = 0
        self._narrowed = None
        after_fork = getattr(self.exporter, "after_fork", None)
        if callable(after_fork):
            after_fork()
        if not self._stopping:
            self._worker = threading.Thread(target=self._run, name="passhat-export", daemon=True)
            self._worker.start()

    # -- the agent's side: never blocks beyond a lock held for an append -------------------------------
    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        return None

    def on_end(self, span: ReadableSpan) -> None:
        if not span.context.trace_flags.sampled:
            return
        with self._lock:
            if self._stopping:
                return
            if len(self._queue) >= self.max_queue_size:
                self._dropped += 1
                self._dropped_this_outage += 1
                return
            self._queue.append(span)
            if len(self._queue) >= self.batch_size and not self._failing:
                self._wake.notify()

    def stats(self) -> ExportStats:
        """A snapshot of the counters."""
        with self._lock:
            return ExportStats(
                queued=len(self._queue),
                exported=self._exported,
                dropped=self._dropped,
                failed_exports=self._failed,
                failing=self._failing,
                refused=self._refused,
            )

    # -- the worker's side --------------------------------------------------------------------------------
    def _run(self) -> None:
        backoff = 0.0
        while True:
            with self._lock:
                if backoff:
                    # Sit out the pause even when spans arrive: a down collector must not be hammered.
                    deadline = time.monotonic() + backoff
                    while not self._stopping and (remaining := deadline - time.monotonic()) > 0:
                        self._wake.wait(timeout=remaining)
                elif not self._stopping and len(self._queue) < self.batch_size:
                    self._wake.wait(timeout=self.interval)
                if self._stopping:
                    return
            backoff = 0.0 if self._export_once() else min(self.max_backoff, max(0.25, backoff * 2))

    def _export_once(self, deadline: float | None = None) -> bool:
        """Export one batch from the head of the queue; False when it failed (the batch stays queued).

        With a ``deadline`` (a shutdown or flush budget on the monotonic clock) neither waiting for the worker's
        export in flight nor the request itself may run past it.
        """
        if deadline is None:
            self._export_lock.acquire()
        elif not self._export_lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
            return False
        try:
            with self._lock:
                if not self._queue:
                    return True
                size = min(self.batch_size if self._narrowed is None else self._narrowed, len(self._queue))
                batch = [self._queue[index] for index in range(size)]
            try:
                within = getattr(self.exporter, "export_within", None)
                if deadline is not None and callable(within):
                    remaining = deadline - time.monotonic()
                    result = within(batch, remaining) if remaining > 0 else SpanExportResult.FAILURE
                else:
                    result = self.exporter.export(batch)
            except Exception as exc:  # an exporter bug must not kill the worker
                logger.debug("passhat exporter raised %r", exc)
                result = SpanExportResult.FAILURE
            return self._settle(batch, result)
        finally:
            self._export_lock.release()

    def _settle(self, batch: list[ReadableSpan], result: SpanExportResult) -> bool:
        """Account for one export attempt: drop the batch from the queue on success, log an outage once."""
        with self._lock:
            if result is SpanExportResult.SUCCESS:
                for _ in batch:
                    self._queue.popleft()
                self._exported += len(batch)
                self._narrowed = None
                if self._failing:
                    self._failing = False
                    logger.warning(
                        "passhat: export to %s resumed; %d spans were dropped while it was failing",
                        self.describe,
                        self._dropped_this_outage,
                    )
                self._dropped_this_outage = 0
                return True
            if getattr(self.exporter, "refused", False):
                return self._narrow(batch)
            self._failed += 1
            if not self._failing:
                self._failing = True
                reason = getattr(self.exporter, "last_error", None) or "export failed"
                logger.warning(
                    "passhat: cannot export spans to %s (%s); keeping up to %d spans and retrying, "
                    "further failures are not logged until export resumes",
                    self.describe,
                    reason,
                    self.max_queue_size,
                )
            return False

    def _narrow(self, batch: list[ReadableSpan]) -> bool:
        """The collector refused this batch for what it holds (lock held): send half of it next, until the one
        span it refuses is found; that span is dropped (counted in ``refused``, logged) and the rest go on.
        Returns True: not an outage, the next attempt goes without a pause."""
        if len(batch) > 1:
            self._narrowed = len(batch) // 2
            return True
        self._queue.popleft()
        self._refused += 1
        self._narrowed = None
        reason = getattr(self.exporter, "last_error", None) or "refused"
        logger.warning(
            "passhat: %s refused span %r (%s); it is dropped, the spans after it are sent", self.describe,
            batch[0].name, reason,
        )  # fmt: skip
        return True

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Export everything queued now; False when the deadline passed or an export failed.

        The caller waits until the deadline at most, however the collector answers: the requests run on a thread
        of their own, because a socket's read timeout starts again at every byte received, so an answer trickling
        in byte by byte would hold a request, and a caller waiting on it, past any timeout given to the request.
        What is still running at the deadline is abandoned (a daemon thread: it never holds up the exit).
        """
        deadline = time.monotonic() + timeout_millis / 1000
        with self._lock:
            if not self._queue:
                return True
        outcome: list[bool] = []
        try:
            flusher = threading.Thread(
                target=lambda: outcome.append(self._flush_until(deadline)), name="passhat-flush", daemon=True
            )
            flusher.start()
        except RuntimeError:  # no new thread at this point of an interpreter's shutdown: flush on this one
            return self._flush_until(deadline)
        flusher.join(max(0.0, deadline - time.monotonic()))
        if outcome:
            return outcome[0]
        with self._lock:  # the deadline came first
            return not self._queue

    def _flush_until(self, deadline: float) -> bool:
        while time.monotonic() < deadline:
            with self._lock:
                if not self._queue:
                    return True
            if not self._export_once(deadline):
                return False
        with self._lock:
            return not self._queue

    def reserve_for_interpreter_exit(self) -> None:
        """Make the next `shutdown` leave part of the export timeout to the interpreter's own shutdown.

        At exit the documented bound (``export_timeout``) is on the whole exit, and the interpreter's teardown
        after passhat (threads, modules, garbage collection) took 0.2 to 0.4 s on a loaded two-core machine: the
        flush gets the export timeout less ``EXIT_RESERVE_S``, or less half of it when it is shorter than twice
        that."""
        timeout = self._timeout()
        self._shutdown_budget = timeout - min(EXIT_RESERVE_S, timeout / 2)

    def _timeout(self) -> float:
        return float(getattr(self.exporter, "timeout", 5.0))

    def shutdown(self) -> None:
        """Flush, stop the worker and close the exporter, all within one export timeout in total.

        However the collector behaves (down, answering 500, answering slowly), the process exits in at most
        ``export_timeout`` seconds plus scheduling noise: what could not be sent by then is given up.
        """
        timeout = self._shutdown_budget if self._shutdown_budget is not None else self._timeout()
        deadline = time.monotonic() + timeout
        with self._lock:
            self._stopping = True  # the worker finishes its export in flight and stops: this thread flushes
            self._wake.notify_all()
        self.force_flush(int(max(0.0, deadline - time.monotonic()) * 1000))
        self._worker.join(timeout=max(0.0, deadline - time.monotonic()))
        with self._lock:
            left = len(self._queue)
        if left:
            reason = getattr(self.exporter, "last_error", None) or "the collector did not take them in time"
            logger.warning(
                "passhat: %d spans were not delivered to %s before shutdown and are lost (%s)", left, self.describe,
                reason,
            )  # fmt: skip
        self.exporter.shutdown()
