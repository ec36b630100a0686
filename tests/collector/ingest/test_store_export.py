"""Spans stored straight from the SDK (`prepare_spans`): the same rows as the OTLP round trip they stand for.

`StoreSpanExporter` stores a trial's spans as the collector would store them sent over OTLP: encoded by the
OpenTelemetry encoder, decoded and normalised by ingest. `prepare_spans` converts plain spans directly (no
protobuf) and leaves every other batch to the round trip. The contract checked on every batch here: its result
equals the round trip's, rejections and their reasons included.
"""

from __future__ import annotations

import enum
import pathlib
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode
from sqlalchemy.sql.elements import quoted_name

import passhat
from passhat.collector.ingest import _store_export
from passhat.collector.ingest._otlp import DecodedTraces, decode_traces
from passhat.collector.ingest._store_export import prepare_spans
from passhat.sandbox import FlawConfig, ReferenceAgent, Sandbox, run_trial

LIMIT = 64
RESOURCE = Resource({"service.name": "shop", "deployment": "test"})
SCOPE = InstrumentationScope("passhat", "1")


def _round_trip(spans: Sequence[ReadableSpan], limit: int) -> DecodedTraces:
    return decode_traces(encode_spans(spans), max_attribute_bytes=limit)


def _agrees(spans: Sequence[ReadableSpan], limit: int = LIMIT) -> bool:
    """Checks the contract on one batch; True when the direct conversion took it, False when it left it."""
    expected = _round_trip(spans, limit)
    assert prepare_spans(spans, max_attribute_bytes=limit) == expected
    try:
        direct = _store_export._direct(spans, limit)
    except _store_export._NotPlainError:
        return False
    assert direct == expected
    return True


def _span(
    name: str = "execute_tool lookup",
    *,
    trace_id: int = 0xABC,
    span_id: int = 0x1,
    parent: int | None = None,
    attributes: dict[str, Any] | None = None,
    events: Sequence[Event] = (),
    links: Sequence[Link] = (),
    status: Status | None = None,
    kind: SpanKind = SpanKind.INTERNAL,
    start: int | None = 1_000,
    end: int | None = 2_000,
    resource: Resource = RESOURCE,
    scope: InstrumentationScope | None = SCOPE,
) -> ReadableSpan:
    """A finished span as an exporter receives it (built directly, so values the SDK would clean get through)."""
    return ReadableSpan(
        name=name,
        context=SpanContext(trace_id, span_id, is_remote=False),
        parent=None if parent is None else SpanContext(trace_id, parent, is_remote=False),
        resource=resource,
        attributes=attributes or {},
        events=list(events),
        links=list(links),
        kind=kind,
        status=status or Status(StatusCode.UNSET),
        start_time=start,
        end_time=end,
        instrumentation_scope=scope,
    )


@pytest.mark.parametrize("domain", ["retail", "travel", "insurance", "banking", "consulting"])
async def test_a_reference_trials_trace_takes_the_direct_path_and_matches_the_round_trip(
    domain: str, tmp_path: pathlib.Path
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"service.name": "passhat replay"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    runtime = passhat.configure(tracer_provider=provider, source="sandbox", make_global=False)
    with Sandbox(domain, seed=0, size="small", workdir=tmp_path) as sandbox:
        for scenario in sandbox.scenarios(count=2):
            await run_trial(sandbox, scenario, 0, ReferenceAgent.factory(FlawConfig.default()), runtime=runtime)
    spans = exporter.get_finished_spans()
    decoded = prepare_spans(spans, max_attribute_bytes=1 << 16)
    assert len(decoded.spans) == len(spans) and not decoded.rejected
    assert any(s.ticket is not None for s in decoded.spans) and any(s.tool_call for s in decoded.spans)
    assert any(s.state_writes for s in decoded.spans) or domain == "consulting"
    assert _agrees(spans, limit=1 << 16), "a plain trial's trace left the direct path"


def test_spans_of_several_resources_and_scopes_keep_the_encoders_order() -> None:
    other = Resource({"service.name": "billing"})
    same_as_first = Resource({"service.name": "shop", "deployment": "test"})  # equal, not the same object
    scopes = [SCOPE, InstrumentationScope("openai.agents"), None, InstrumentationScope("passhat", "1")]
    spans = [
        _span(f"s{i}", span_id=i + 1, resource=[RESOURCE, other, same_as_first][i % 3], scope=scopes[i % 4])
        for i in range(24)
    ]
    assert _agrees(spans)
    names = [s.name for s in prepare_spans(spans, max_attribute_bytes=LIMIT).spans]
    assert names != [s.name for s in spans], "the batch was grouped: the order is the encoder's, not arrival's"


def test_subclassed_values_are_stored_as_their_base_type() -> None:
    class Level(enum.IntEnum):
        HIGH = 3

    class Colour(enum.StrEnum):
        RED = "red"

    attributes = {"table": quoted_name("orders", None), "level": Level.HIGH, "colour": Colour.RED, "n": (1, 2)}
    spans = [_span(attributes=attributes, events=[Event("passhat.state_write", {"table": quoted_name("x", None)})])]
    assert _agrees(spans)
    stored = prepare_spans(spans, max_attribute_bytes=LIMIT).spans[0].attributes
    assert [type(v) for v in stored.values()] == [str, int, str, list]


@pytest.mark.parametrize(
    "span",
    [
        _span(trace_id=0),  # rejected: a zero trace id
        _span(attributes={"text": "x" * (LIMIT + 1)}),  # rejected: over the limit
        _span("n" * (LIMIT + 1)),  # rejected: the name over the limit
        _span(attributes={"lone": "a\ud800b", "kept": "yes"}),  # the encoder drops the attribute
        _span(attributes={"big": 1 << 70, "kept": 1}),  # the encoder drops the attribute
        _span(attributes={"none": None, "raw": b"\x00\x01", "nested": {"a": [1, "b"]}}),
        _span(events=[Event("late", {}, timestamp=1 << 63)]),  # rejected: a time past 2262
    ],
)
def test_a_batch_with_any_span_not_plain_is_stored_as_the_round_trip_stores_it(span: ReadableSpan) -> None:
    plain = _span("plain", span_id=99, attributes={"a": "b"})
    assert not _agrees([plain, span])


def test_status_kind_parent_and_events_are_carried() -> None:
    spans = [
        _span(
            "invoke_agent support",
            span_id=5,
            parent=4,
            kind=SpanKind.SERVER,
            status=Status(StatusCode.ERROR, "tool failed"),
            attributes={"gen_ai.operation.name": "invoke_agent", "passhat.ticket.id": "T-1"},
            events=[Event("exception", {"exception.type": "ValueError"}, timestamp=1_500)],
        ),
        _span("ok", span_id=6, status=Status(StatusCode.OK), kind=SpanKind.CLIENT, start=3_000, end=2_000),
        _span("unended", span_id=7, start=None, end=None),
        _span("blank message", span_id=8, status=Status(StatusCode.ERROR, "")),
        _span("linked", span_id=9, links=[Link(SpanContext(0xDEF, 0x2, is_remote=True), {"why": "follows"})]),
    ]
    assert _agrees(spans)


_SCALARS = st.one_of(
    st.text(max_size=8),
    st.text(alphabet=st.characters(min_codepoint=0xD7F0, max_codepoint=0xE010), max_size=3),  # surrogates
    st.text(min_size=LIMIT - 1, max_size=LIMIT + 1),
    st.booleans(),
    st.integers(min_value=-(1 << 64), max_value=1 << 64),
    st.floats(allow_nan=False),
)
_VALUES = st.one_of(
    _SCALARS,
    st.lists(_SCALARS, max_size=3).map(tuple),
    st.lists(_SCALARS, max_size=3),
    st.none(),
    st.binary(max_size=4),
)
_ATTRIBUTES = st.dictionaries(st.text(max_size=6), _VALUES, max_size=5)


@st.composite
def _batches(draw: st.DrawFn) -> list[ReadableSpan]:
    resources = [RESOURCE, Resource({"service.name": "billing"}), Resource(draw(_ATTRIBUTES))]
    scopes = [SCOPE, None, InstrumentationScope(draw(st.text(max_size=4)))]
    count = draw(st.integers(min_value=1, max_value=5))
    return [
        _span(
            draw(st.text(max_size=LIMIT + 2)),
            span_id=draw(st.integers(min_value=0, max_value=(1 << 64) - 1)),
            parent=draw(st.none() | st.integers(min_value=0, max_value=(1 << 64) - 1)),
            attributes=draw(_ATTRIBUTES),
            events=[
                Event(draw(st.text(max_size=6)), draw(_ATTRIBUTES), timestamp=draw(st.integers(0, 1 << 64)))
                for _ in range(draw(st.integers(min_value=0, max_value=2)))
            ],
            status=draw(
                st.sampled_from(
                    [
                        Status(StatusCode.UNSET),
                        Status(StatusCode.OK),
                        Status(StatusCode.ERROR, "x"),
                        Status(StatusCode.ERROR, ""),
                    ]
                )
            ),
            kind=draw(st.sampled_from(list(SpanKind))),
            start=draw(st.integers(min_value=0, max_value=(1 << 63) + 5)),
            end=draw(st.integers(min_value=0, max_value=(1 << 63) + 5)),
            resource=draw(st.sampled_from(resources)),
            scope=draw(st.sampled_from(scopes)),
        )
        for _ in range(count)
    ]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_batches())
def test_any_batch_is_stored_as_the_round_trip_stores_it(spans: list[ReadableSpan]) -> None:
    try:
        expected: DecodedTraces | str = _round_trip(spans, LIMIT)
    except Exception as exc:  # the encoder fails the whole batch (a surrogate in a span's name, a negative time)
        expected = type(exc).__name__
    try:
        got: DecodedTraces | str = prepare_spans(spans, max_attribute_bytes=LIMIT)
    except Exception as exc:
        got = type(exc).__name__
    assert got == expected


_PLAIN_SCALARS = st.one_of(
    st.text(max_size=LIMIT),  # no surrogates: hypothesis leaves them out unless asked
    st.booleans(),
    st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1),
    st.floats(allow_nan=False),
)
_PLAIN_ATTRIBUTES = st.dictionaries(
    st.text(max_size=6), _PLAIN_SCALARS | st.lists(_PLAIN_SCALARS, max_size=3).map(tuple), max_size=6
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.text(max_size=LIMIT),
            st.integers(min_value=1, max_value=(1 << 64) - 1),
            _PLAIN_ATTRIBUTES,
            st.lists(st.tuples(st.text(max_size=8), _PLAIN_ATTRIBUTES), max_size=2),
            st.integers(min_value=0, max_value=(1 << 63) - 6),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_plain_batches_take_the_direct_path(
    drawn: list[tuple[str, int, dict[str, Any], list[tuple[str, dict[str, Any]]], int]],
) -> None:
    spans = [
        _span(name, span_id=span_id, attributes=attributes, start=start, end=start + 5,
              events=[Event(event, event_attributes, timestamp=start) for event, event_attributes in events])
        for name, span_id, attributes, events, start in drawn
    ]  # fmt: skip
    assert _agrees(spans)
