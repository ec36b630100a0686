"""Spans straight into a Store, through the same decoding and normalising as OTLP/HTTP ingest.

The replay loop traces every trial through the SDK; when it runs next to the store (the `passhat replay` CLI,
the scheduler) there may be no collector to send to, so this exporter writes the spans into the same tables a
collector would, as `passhat.source = sandbox` tickets: queryable like any trace, never counted as traffic.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from passhat.collector.ingest._otlp import decode_traces
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
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        decoded = decode_traces(encode_spans(spans), max_attribute_bytes=self.max_attribute_bytes)
        self.rejected.extend(decoded.rejected)
        try:
            self.store.write_batch(self.project, decoded.spans)
        except Exception as exc:  # a trace that cannot be stored must not fail the trial it describes
            _log.warning("passhat: could not store %d trial spans: %s", len(decoded.spans), exc)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None
