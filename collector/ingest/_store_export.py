"""Spans straight into a Store, through the same decoding and normalising as OTLP/HTTP ingest.

The replay loop traces every trial through the SDK; when it runs next to the store (the `passhat replay` CLI,
the scheduler) there may be no collector to send to, so this exporter writes the spans into the same tables a
collector would, as `passhat.source = sandbox` tickets: queryable like any trace, never counted as traffic.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from opentelemetry.proto.trace.v1.trace_pb2 import Span as PB2Span
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanKind

from passhat.collector.ingest._normalize import normalize_span
from passhat.collector.ingest._otlp import _STATUS, MAX_TIME_NS, DecodedTraces, decode_traces
from passhat.collector.ingest._settings import CollectorSettings
from passhat.collector.store import NormalizedSpan, SpanEvent, Store

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

    def prepare_in_workers(self) -> Callable[[Sequence[ReadableSpan]], DecodedTraces | BuiltSpans]:
        """What a replay's worker processes run on each trial's spans (`prepare_spans`), so the driver only
        writes them (`export_prepared`): encoding and normalising them was most of a traced trial's CPU in the
        one process that writes the store. When the store builds its rows elsewhere (`Store.row_builder`: the
        SQL stores), the workers build those too, and the driver only inserts them."""
        build = self.store.row_builder()
        if build is None:
            return functools.partial(prepare_spans, max_attribute_bytes=self.max_attribute_bytes)
        return functools.partial(
            prepare_rows, max_attribute_bytes=self.max_attribute_bytes, project=self.project, build=build
        )

    def builds_rows(self) -> bool:
        """Whether `prepare_in_workers` builds the store's rows (`Store.row_builder`), not only the spans."""
        return self.store.row_builder() is not None

    def export_prepared(self, prepared: Sequence[DecodedTraces | BuiltSpans]) -> SpanExportResult:
        """Store spans `prepare_spans` or `prepare_rows` made (here or in a worker process), exactly as `export`
        stores them."""
        spans = [span for each in prepared if isinstance(each, DecodedTraces) for span in each.spans]
        built = [each.rows for each in prepared if isinstance(each, BuiltSpans)]
        self.rejected.extend(reason for each in prepared for reason in each.rejected)
        try:
            if spans:
                self.store.write_batch(self.project, spans)
            if built:
                self.store.write_built(self.project, built)
        except Exception as exc:  # a trace that cannot be stored must not fail the trial it describes
            count = len(spans) + sum(each.count for each in prepared if isinstance(each, BuiltSpans))
            _log.warning("passhat: could not store %d trial spans: %s", count, exc)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None


_INT64 = 1 << 63  # attribute ints: OTLP's are int64
_SPAN_KINDS = {
    SpanKind.INTERNAL: PB2Span.SpanKind.SPAN_KIND_INTERNAL,
    SpanKind.SERVER: PB2Span.SpanKind.SPAN_KIND_SERVER,
    SpanKind.CLIENT: PB2Span.SpanKind.SPAN_KIND_CLIENT,
    SpanKind.PRODUCER: PB2Span.SpanKind.SPAN_KIND_PRODUCER,
    SpanKind.CONSUMER: PB2Span.SpanKind.SPAN_KIND_CONSUMER,
}


class _NotPlainError(Exception):
    """A span the direct conversion leaves to the OTLP round trip (which gives its exact rejection)."""


@dataclass(frozen=True, slots=True)
class BuiltSpans:
    """A trial's spans as the store's own rows (`Store.row_builder`), built where the trial ran: ``count``
    spans, and one reason per span rejected."""

    rows: Any
    count: int
    rejected: list[str]


def prepare_rows(
    spans: Sequence[ReadableSpan],
    *,
    max_attribute_bytes: int,
    project: str,
    build: Callable[[str, Sequence[NormalizedSpan]], Any],
) -> BuiltSpans:
    """The spans as `prepare_spans` makes them, then as the store's rows for ``project`` (``build``, the store's
    `row_builder`)."""
    decoded = prepare_spans(spans, max_attribute_bytes=max_attribute_bytes)
    return BuiltSpans(build(project, decoded.spans), len(decoded.spans), decoded.rejected)


def prepare_spans(spans: Sequence[ReadableSpan], *, max_attribute_bytes: int) -> DecodedTraces:
    """The spans as `StoreSpanExporter` stores them: what encoding them as OTLP, then decoding and normalising
    them as the collector's ingest does, gives (each span kept, or rejected with its reason).

    Plain spans (valid ids and times, attribute values str, bool, int64, float or tuples of those, nothing over
    the size limit) are converted directly, which gives the same rows as the round trip at a fraction of its
    CPU; a batch holding any other span takes the round trip itself."""
    try:
        return _direct(spans, max_attribute_bytes)
    except _NotPlainError:
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        return decode_traces(encode_spans(spans), max_attribute_bytes=max_attribute_bytes)


def _direct(spans: Sequence[ReadableSpan], limit: int) -> DecodedTraces:
    # The OTLP encoder groups a batch's spans by resource, then by scope (dicts keyed by the SDK objects, so
    # by their equality), and ingest decodes them in that order: the same grouping keeps the same order.
    groups: dict[Resource, dict[InstrumentationScope | None, list[ReadableSpan]]] = {}
    seen: dict[int, dict[InstrumentationScope | None, list[ReadableSpan]]] = {}
    for span in spans:
        resource = span.resource
        scopes = seen.get(id(resource))
        if scopes is None:
            scopes = seen[id(resource)] = groups.setdefault(resource, {})
        scopes.setdefault(span.instrumentation_scope or None, []).append(span)
    decoded = DecodedTraces()
    append = decoded.spans.append
    for resource, scopes in groups.items():
        resource_attributes = _plain_attributes(resource.attributes, limit)
        service = resource_attributes.get("service.name")
        service_name = service if isinstance(service, str) else None
        for scope, members in scopes.items():
            scope_name = (scope.name if scope is not None else "") or None
            for text in (scope_name, scope.version if scope is not None else None):
                if text is not None:
                    _check_text(text)
            for span in members:
                append(_direct_span(span, limit, service_name, scope_name, resource_attributes))
    return decoded


def _direct_span(
    span: ReadableSpan, limit: int, service_name: str | None, scope_name: str | None, resource: dict[str, Any]
) -> NormalizedSpan:
    context = span.context
    if context is None:
        raise _NotPlainError
    trace_id, span_id, parent = context.trace_id, context.span_id, span.parent
    if not (0 < trace_id < 1 << 128 and 0 < span_id < 1 << 64):
        raise _NotPlainError
    parent_id = None
    if parent is not None:
        if not 0 <= parent.span_id < 1 << 64:
            raise _NotPlainError
        parent_id = format(parent.span_id, "016x")
    start, end = span.start_time or 0, span.end_time or 0
    if not (0 <= start <= MAX_TIME_NS and 0 <= end <= MAX_TIME_NS):
        raise _NotPlainError
    name = span.name
    if type(name) is not str or len(name) > limit:
        raise _NotPlainError
    _check_text(name)
    events = []
    for event in span.events:
        if type(event.name) is not str or not 0 <= event.timestamp <= MAX_TIME_NS:
            raise _NotPlainError
        _check_text(event.name)
        events.append(SpanEvent(event.name, event.timestamp, _plain_attributes(event.attributes, limit)))
    for link in span.links:  # not stored, but the encoder fails a batch whose link ids do not fit
        if not (0 <= link.context.trace_id < 1 << 128 and 0 <= link.context.span_id < 1 << 64):
            raise _NotPlainError
    kind = _SPAN_KINDS.get(span.kind)
    if kind is None:
        raise _NotPlainError
    status = span.status
    code, message = (status.status_code.value, status.description) if status is not None else (0, None)
    if message is not None:
        if type(message) is not str:
            raise _NotPlainError
        _check_text(message)
    return normalize_span(
        trace_id=format(trace_id, "032x"),
        span_id=format(span_id, "016x"),
        parent_span_id=parent_id,
        name=name,
        start_time_ns=start,
        end_time_ns=max(end, start),
        kind=kind,
        status=_STATUS.get(code, "unset"),
        status_message=message or None,
        service_name=service_name,
        scope_name=scope_name,
        attributes=_plain_attributes(span.attributes, limit),
        resource_attributes=resource,
        events=events,
    )


def _plain_attributes(attributes: Mapping[str, Any] | None, limit: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if not attributes:
        return out
    for key, value in attributes.items():
        if type(key) is not str:
            raise _NotPlainError
        if not key.isascii():  # checked inline for the usual case, here and below: the hot path
            _check_text(key)
        kind = type(value)
        if kind is str and value.isascii() and len(value) <= limit:  # most values: checked inline
            out[key] = value
        elif kind is tuple or kind is list:
            out[key] = [_plain_scalar(item, limit) for item in value]
        else:
            out[key] = _plain_scalar(value, limit)
    return out


def _plain_scalar(value: Any, limit: int) -> Any:
    kind = type(value)
    if kind is not str and kind is not int and kind is not bool and kind is not float:
        # A subclass (SQLAlchemy's quoted_name, an enum) is what the encoder tests it for, in its order, and
        # decodes as that base type.
        if isinstance(value, bool):
            return bool(value)
        if isinstance(value, str):
            value, kind = str.__str__(value), str
        elif isinstance(value, int):
            value, kind = int.__int__(value), int
        elif isinstance(value, float):
            return float.__float__(value)
        else:
            raise _NotPlainError
    if kind is str:
        if len(value) > limit:
            raise _NotPlainError
        _check_text(value)
    elif kind is int and not -_INT64 <= value < _INT64:
        raise _NotPlainError
    return value


def _check_text(text: str) -> None:
    """Protobuf strings are UTF-8: a lone surrogate fails the encoder, which the round trip reports."""
    if text.isascii():
        return
    try:
        text.encode()
    except UnicodeEncodeError:
        raise _NotPlainError from None
