"""Trial traces across processes: spans a worker finished, carried back as plain data and ended on the driver.

A distributed replay runs each trial in a worker process that cannot reach the store. The worker traces the
trial exactly as the driver would (same source, service name, redaction and content settings: `RuntimeSettings`)
into a provider of its own whose only processor keeps the finished spans (`SpanCapture`). Their `SpanSnapshot`s
travel back with the trial's result, and `relay` ends each one in the driver's runtime, whose processors export
it (into the store, or to a collector) as if the trial had run on the driver.

When the driver's runtime only exports into an exporter that takes spans prepared elsewhere
(`WorkerPreparedExport`: the store's, which `passhat replay` and the collector's cycle trace trials into), the
workers prepare each trial's spans for it (`prepared_export`) and the driver hands them over as they come: the
encoding and normalising the export does then runs on every core, not in the one process that writes the store.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

import passhat

Attributes = tuple[tuple[str, Any], ...]


def _attributes(values: Mapping[str, Any] | None) -> Attributes:
    items = (values or {}).items()
    return tuple((key, tuple(value) if isinstance(value, list | tuple) else value) for key, value in items)


@dataclass(frozen=True)
class _Context:
    trace_id: int
    span_id: int
    is_remote: bool
    flags: int

    @classmethod
    def of(cls, context: SpanContext) -> _Context:
        return cls(context.trace_id, context.span_id, context.is_remote, int(context.trace_flags))

    def rebuild(self) -> SpanContext:
        return SpanContext(self.trace_id, self.span_id, self.is_remote, TraceFlags(self.flags))


@dataclass(frozen=True)
class SpanSnapshot:
    """A finished span as plain, picklable data (attribute values are str, bool, int, float or tuples of them)."""

    name: str
    context: _Context
    parent: _Context | None
    kind: str
    attributes: Attributes
    events: tuple[tuple[str, Attributes, int], ...]
    links: tuple[tuple[_Context, Attributes], ...]
    status: tuple[str, str | None]
    start_time: int | None
    end_time: int | None
    resource: Attributes
    scope: tuple[str, str | None]

    @classmethod
    def of(cls, span: ReadableSpan) -> SpanSnapshot:
        if span.context is None:
            raise ValueError(f"span {span.name!r} has no context")
        scope = span.instrumentation_scope
        return cls(
            name=span.name,
            context=_Context.of(span.context),
            parent=None if span.parent is None else _Context.of(span.parent),
            kind=span.kind.name,
            attributes=_attributes(span.attributes),
            events=tuple((event.name, _attributes(event.attributes), event.timestamp) for event in span.events),
            links=tuple((_Context.of(link.context), _attributes(link.attributes)) for link in span.links),
            status=(span.status.status_code.name, span.status.description),
            start_time=span.start_time,
            end_time=span.end_time,
            resource=_attributes(span.resource.attributes),
            scope=("passhat", None) if scope is None else (scope.name, scope.version),
        )

    @property
    def trace_id(self) -> int:
        return self.context.trace_id

    def shifted(self, nanoseconds: int) -> SpanSnapshot:
        """The span moved in time (its start, end and events): a simulated ticket placed at its arrival time."""
        return dataclasses.replace(
            self,
            start_time=None if self.start_time is None else self.start_time + nanoseconds,
            end_time=None if self.end_time is None else self.end_time + nanoseconds,
            events=tuple((name, attributes, at + nanoseconds) for name, attributes, at in self.events),
        )

    def rebuild(self) -> ReadableSpan:
        """The span again, as the driver's processors and exporters take it."""
        return ReadableSpan(
            name=self.name,
            context=self.context.rebuild(),
            parent=None if self.parent is None else self.parent.rebuild(),
            resource=_resource(self.resource),
            attributes=dict(self.attributes),
            events=[Event(name, dict(attributes), timestamp) for name, attributes, timestamp in self.events],
            links=[Link(context.rebuild(), dict(attributes)) for context, attributes in self.links],
            kind=SpanKind[self.kind],
            status=Status(StatusCode[self.status[0]], self.status[1]),
            start_time=self.start_time,
            end_time=self.end_time,
            instrumentation_scope=_scope(self.scope),
        )


# A worker's spans share one resource and a few scopes: rebuilding each once keeps the SDK's validation of their
# attributes, and an exporter grouping spans by resource (OTLP's encoder hashes a resource's attributes as JSON)
# meets the same object again. Bounded: a driver relays from a handful of worker runtimes.
_REBUILT: dict[object, Any] = {}
_REBUILT_AT_MOST = 128


def _rebuilt(key: object, build: Callable[[], Any]) -> Any:
    try:
        found = _REBUILT.get(key)
    except TypeError:  # an unhashable value (none of the SDK's): built afresh
        return build()
    if found is None:
        if len(_REBUILT) >= _REBUILT_AT_MOST:
            _REBUILT.clear()
        found = _REBUILT[key] = build()
    return found


def _resource(attributes: Attributes) -> Resource:
    resource: Resource = _rebuilt(("resource", attributes), lambda: Resource(dict(attributes)))
    return resource


def _scope(scope: tuple[str, str | None]) -> InstrumentationScope:
    found: InstrumentationScope = _rebuilt(("scope", scope), lambda: InstrumentationScope(scope[0], scope[1]))
    return found


class SpanCapture(SpanProcessor):
    """Keeps every finished span by trace id until `take` (or `take_spans`) hands a trial's spans over."""

    def __init__(self) -> None:
        self._spans: dict[int, list[ReadableSpan]] = {}
        self._lock = threading.Lock()

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        return None

    def on_end(self, span: ReadableSpan) -> None:
        if span.context is None:
            raise ValueError(f"span {span.name!r} has no context")
        with self._lock:
            self._spans.setdefault(span.context.trace_id, []).append(span)

    def take(self, trace_id: str) -> list[SpanSnapshot]:
        """The finished spans of one trace (a trial's ticket trace, its id in hex), removed from the capture, as
        plain data for another process."""
        return [SpanSnapshot.of(span) for span in self.take_spans(trace_id)]

    def take_spans(self, trace_id: str) -> list[ReadableSpan]:
        """The finished spans of one trace themselves (prepared here for the store: `TrialProfile.prepare_spans`),
        removed from the capture."""
        with self._lock:
            return self._spans.pop(int(trace_id, 16), [])

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


@dataclass(frozen=True)
class RuntimeSettings:
    """What a worker needs to trace a trial as the driver's runtime would: everything but the export.

    The redaction options travel, the pseudonym key does not: a worker reads its own (``PASSHAT_PSEUDONYM_KEY``,
    given to the workers like any secret), so pseudonyms match the driver's when the keys do.
    """

    service_name: str
    source: str
    capture_content: bool
    sample_rate: float
    max_content_length: int
    redact_builtin: bool
    redact_patterns: tuple[tuple[str, int], ...]
    redact_callback: Any
    redact_mode: str
    redact_blank: tuple[str, ...]

    @classmethod
    def of(cls, runtime: passhat.Passhat) -> RuntimeSettings:
        redactor = runtime.redactor
        return cls(
            service_name=runtime.service_name,
            source=runtime.source,
            capture_content=runtime.capture_content,
            sample_rate=runtime.sample_rate,
            max_content_length=runtime.max_content_length,
            redact_builtin=redactor.builtin,
            redact_patterns=tuple((pattern.pattern, pattern.flags) for pattern in redactor.patterns),
            redact_callback=redactor.callback,
            redact_mode=redactor.mode,
            redact_blank=tuple(sorted(redactor.blank)),
        )

    def runtime(self, capture: SpanCapture, *, pseudonym_key: Any = None) -> passhat.Passhat:
        """A runtime tracing into ``capture`` only (nothing leaves the worker but what `relay` carries).

        ``pseudonym_key``: the driver's own key, for workers on the driver's machine (local worker processes)."""
        runtime = passhat.configure(
            make_global=False, send=False, service_name=self.service_name, source=self.source,
            capture_content=self.capture_content, sample_rate=self.sample_rate,
            max_content_length=self.max_content_length, span_processors=[capture],
        )  # fmt: skip
        runtime.redactor = passhat.Redactor.build(
            builtin=self.redact_builtin,
            patterns=[re.compile(pattern, flags) for pattern, flags in self.redact_patterns],
            callback=self.redact_callback,
            mode=self.redact_mode,
            blank=self.redact_blank,
            key=pseudonym_key,
        )
        return runtime


def relay(runtime: passhat.Passhat, spans: Sequence[SpanSnapshot]) -> None:
    """End a worker's spans in the driver's runtime: its processors export them as they would its own."""
    if not spans:
        return
    processor = getattr(runtime.tracer_provider, "_active_span_processor", None)
    if processor is None:
        raise TypeError(
            "passhat: a distributed replay hands its trial spans to the runtime's OpenTelemetry SDK TracerProvider; "
            f"this runtime's provider is a {type(runtime.tracer_provider).__name__}"
        )
    for snapshot in spans:
        processor.on_end(snapshot.rebuild())


class WorkerPreparedExport(Protocol):
    """An exporter whose spans the process that made them can prepare (`prepare_in_workers`: a picklable
    function of a trial's spans) and that stores what it prepared (`export_prepared`), as its `export` would."""

    def prepare_in_workers(self) -> Callable[[Sequence[ReadableSpan]], Any]: ...

    def export_prepared(self, prepared: Sequence[Any]) -> Any: ...

    def builds_rows(self) -> bool:
        """Whether the workers build the store's own rows (the driver only inserts them), not only spans."""
        ...


def prepared_export(runtime: passhat.Passhat) -> WorkerPreparedExport | None:
    """The runtime's exporter when the runtime's only span processor exports into one that takes spans prepared
    in the workers; None otherwise (a worker's spans are then relayed, `relay`, and reach every processor)."""
    active = getattr(runtime.tracer_provider, "_active_span_processor", None)
    listed: list[Any] = []
    for processor in getattr(active, "_span_processors", ()):
        behind = getattr(processor, "processors", None)  # the SDK's own processors sit behind its trial routing
        listed.extend(behind() if callable(behind) else [processor])
    # Every passhat runtime has the SDK's baggage processor, which acts as spans start only (ending a relayed span
    # does nothing there); it is the SDK's private class, known here by name.
    processors = [p for p in listed if type(p).__name__ != "TicketBaggageProcessor"]
    if len(processors) != 1:
        return None
    only = processors[0]
    # SimpleSpanProcessor keeps its exporter as `span_exporter`, BatchSpanProcessor in its `_batch_processor`.
    batch = getattr(only, "_batch_processor", None)
    exporter = getattr(only, "span_exporter", None) or getattr(batch, "_exporter", None)
    prepare, take = getattr(exporter, "prepare_in_workers", None), getattr(exporter, "export_prepared", None)
    if callable(prepare) and callable(take) and callable(getattr(exporter, "builds_rows", None)):
        found: WorkerPreparedExport = exporter  # type: ignore[assignment]
        return found
    return None
