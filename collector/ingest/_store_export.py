"""Spans straight into a Store, through the same decoding and normalising as OTLP/HTTP ingest.

The replay loop traces every trial through the SDK; when it runs next to the store (the `passhat replay` CLI,
the scheduler) there may be no collector to send to, so this exporter writes the spans into the same tables a
collector would, as `passhat.source = sandbox` tickets: queryable like any trace, never counted as traffic.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from passhat.collector.ingest._otlp import DecodedTraces, decode_traces
from passhat.collector.ingest._settings import CollectorSettings
from passhat.collector.store import Store

_log = logging.getLogger("passhat.collector")


class StoreSpanExporter(SpanExporter):
    """An OpenTelemetry exporter writing one project's spans into a Store (what the collector would store)."""

    def __init__(self, store: Store, project: str, *, max_attribute_bytes: int | None = None) -> None:
        self.store = store
        self.project = project
        self.max_attribute_bytes = max_attribute_bytes or CollectorSettings().max_attribute_bytes
        self.rejected: list[str] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.export_prepared([prepare_spans(spans, max_attribute_bytes=self.max_attribute_bytes)])

    def prepare_in_workers(self) -> Callable[[Sequence[ReadableSpan]], DecodedTraces]:
        """What a replay's worker processes run on each trial's spans (`prepare_spans`), so the driver only
        writes them (`export_prepared`): encoding and normalising them was most of a traced trial's CPU in the
        one process that writes the store."""
        return functools.partial(prepare_spans, max_attribute_bytes=self.max_attribute_bytes)

    def export_prepared(self, prepared: Sequence[DecodedTraces]) -> SpanExportResult:
        """Store spans `prepare_spans` made (here or in a worker process), exactly as `export` stores them."""
        spans = [span for each in prepared for span in each.spans]
        self.rejected.extend(reason for each in prepared for reason in each.rejected)
        try:
            self.store.write_batch(self.project, spans)
        except Exception as exc:  # a trace that cannot be stored must not fail the trial it describes
            _log.warning("passhat: could not store %d trial spans: %s", len(spans), exc)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None


def prepare_spans(spans: Sequence[ReadableSpan], *, max_attribute_bytes: int) -> DecodedTraces:
    """The spans as `StoreSpanExporter` stores them: encoded as OTLP, then decoded and normalised as the
    collector's ingest does (each span kept, or rejected with its reason)."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return decode_traces(encode_spans(spans), max_attribute_bytes=max_attribute_bytes)
