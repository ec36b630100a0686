"""The compiled OTLP decoder (collector/ingest/_otlpfast.c) against the upb path it stands in for.

The contract: `_otlpfast.decode` returns rows only for bodies the upb path decodes to exactly the same spans
with nothing rejected, and None for anything else (the wrapper then takes the upb path). So every test here
checks the same property, `_agrees(body)`, on generated, hand-crafted, random and mutated bodies.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
import tracemalloc
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import (
    AnyValue,
    ArrayValue,
    InstrumentationScope,
    KeyValue,
    KeyValueList,
)
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

from passhat.collector.ingest._otlp import (
    PROTOBUF,
    DecodedTraces,
    OtlpError,
    decode_protobuf,
    decode_traces,
    parse_request,
)

LIMIT = 64


def test_the_compiled_module_is_built_in_ci() -> None:
    """CI sets CI=1: there the build must not have fallen back to pure Python silently."""
    if not os.environ.get("CI"):
        pytest.skip("CI is not set: the compiled decoder is optional")
    from passhat.collector.ingest import _otlpfast

    assert _otlpfast.decode(b"", 10) == []


_otlpfast = pytest.importorskip("passhat.collector.ingest._otlpfast")


def _upb(body: bytes, limit: int) -> DecodedTraces | OtlpError:
    try:
        return decode_traces(parse_request(body, PROTOBUF), max_attribute_bytes=limit)
    except OtlpError as exc:
        return exc


def _agrees(body: bytes, limit: int = LIMIT) -> bool:
    """Checks the contract on one body; True when the fast path took it (rows), False when it said None."""
    rows = _otlpfast.decode(body, limit)
    expected = _upb(body, limit)
    try:
        got: DecodedTraces | OtlpError = decode_protobuf(body, max_attribute_bytes=limit)
    except OtlpError as exc:
        got = exc
    if isinstance(expected, OtlpError):
        assert rows is None, f"upb refused the body ({expected.message}) but the fast path decoded it"
        assert isinstance(got, OtlpError) and (got.status, got.message) == (expected.status, expected.message)
        return False
    assert got == expected
    if rows is None:
        return False
    assert expected.rejected == [], "the fast path decoded a body in which upb rejects spans"
    assert len(rows) == len(expected.spans)
    return True


# --- requests like the ingest benchmark's ---------------------------------------------------------------


def _kv(key: str, value: Any) -> KeyValue:
    if isinstance(value, list):
        return KeyValue(
            key=key, value=AnyValue(array_value=ArrayValue(values=[AnyValue(string_value=v) for v in value]))
        )
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=value))


def bench_like_request(tickets: int = 6) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.extend([_kv("service.name", "bench-agent"), _kv("deployment.environment", "x")])
    scope = resource_spans.scope_spans.add()
    scope.scope.name = "passhat"
    for t in range(tickets):
        trace_id, root_id, start = os.urandom(15) + b"\x01", os.urandom(7) + b"\x01", 1_700_000_000_000_000_000 + t
        for i in range(8):
            tool = scope.spans.add(
                trace_id=trace_id,
                span_id=os.urandom(7) + b"\x02",
                parent_span_id=root_id,
                name=f"execute_tool tool_{i}",
                kind=Span.SPAN_KIND_INTERNAL,
                start_time_unix_nano=start + i,
                end_time_unix_nano=start + i + 500,
                attributes=[
                    _kv("gen_ai.operation.name", "execute_tool"),
                    _kv("gen_ai.tool.name", f"tool_{i}"),
                    _kv("gen_ai.tool.call.id", f"toolu_{t}_{i}"),
                    _kv("gen_ai.tool.type", "function"),
                    _kv("passhat.tool.outcome", "ok"),
                ],
            )
            for j in range(3):
                tool.events.add(
                    name="passhat.state_write",
                    time_unix_nano=start + j,
                    attributes=[
                        _kv("passhat.state_write.table", "orders"),
                        _kv("passhat.state_write.key", f'{{"id": "O-{t}-{j}"}}'),
                        _kv("passhat.state_write.op", "update"),
                        _kv("passhat.state_write.before", '{"status": "delivered"}'),
                        _kv("passhat.state_write.after", '{"status": "refunded"}'),
                        _kv("passhat.state_write.changed", ["status", "refund"]),
                    ],
                )
        scope.spans.add(
            trace_id=trace_id,
            span_id=root_id,
            name="invoke_agent support",
            start_time_unix_nano=start,
            end_time_unix_nano=start + 9_000,
            status=Status(code=Status.STATUS_CODE_ERROR, message="tool failed"),
            attributes=[
                _kv("gen_ai.operation.name", "invoke_agent"),
                _kv("passhat.ticket.id", f"ticket-{t}"),
                _kv("passhat.task_type", "refund"),
                _kv("passhat.source", "production"),
                _kv("passhat.attempt", t),
            ],
        )
    return request


def test_bench_like_request_takes_the_fast_path_and_matches_upb() -> None:
    body = bench_like_request().SerializeToString()
    assert _agrees(body, 65536)
    rows = _otlpfast.decode(body, 65536)
    assert len(rows) == 6 * 9
    first = rows[0]
    assert first[2] is not None and len(first[0]) == 32 and len(first[1]) == 16
    assert first[3] == "execute_tool tool_0" and first[6] == 1 and first[8] is None
    assert first[9] == "bench-agent" and first[10] == "passhat"
    assert first[13][0][0] == "passhat.state_write"
    assert first[13][0][2]["passhat.state_write.changed"] == ["status", "refund"]
    assert rows[8][7] == 2 and rows[8][8] == "tool failed" and rows[8][2] is None
    assert all(row[12] is first[12] for row in rows), "the spans of one ResourceSpans share its dict"


def test_every_value_kind_and_missing_fields() -> None:
    value = AnyValue(
        kvlist_value=KeyValueList(
            values=[
                KeyValue(key="s", value=AnyValue(string_value="héllo ✓ 🙂")),
                KeyValue(key="b", value=AnyValue(bool_value=True)),
                KeyValue(key="f", value=AnyValue(bool_value=False)),
                KeyValue(key="i", value=AnyValue(int_value=-(2**63))),
                KeyValue(key="d", value=AnyValue(double_value=-0.5)),
                KeyValue(key="x", value=AnyValue(bytes_value=b"\x00\xff\x10")),
                KeyValue(key="e", value=AnyValue()),
                KeyValue(key="n"),
                KeyValue(key="a", value=AnyValue(array_value=ArrayValue(values=[AnyValue(int_value=1), AnyValue()]))),
                KeyValue(key="s", value=AnyValue(string_value="later wins")),
            ]
        )
    )
    request = ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(
                scope_spans=[ScopeSpans(spans=[Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8)])]
            ),  # no resource, no scope, no name, no times
            ResourceSpans(
                resource=Resource(attributes=[KeyValue(key="service.name", value=AnyValue(int_value=3))]),
                scope_spans=[
                    ScopeSpans(
                        scope=InstrumentationScope(name="", version="1"),
                        spans=[
                            Span(
                                trace_id=b"\x01" * 16,
                                span_id=b"\x03" * 8,
                                name="",
                                start_time_unix_nano=10,
                                end_time_unix_nano=5,
                                kind=7,
                                status=Status(code=5),  # type: ignore[arg-type]
                                attributes=[KeyValue(key="", value=value)],
                            )
                        ],
                    )
                ],
            ),
        ]
    )
    body = request.SerializeToString()
    assert _agrees(body)
    rows = _otlpfast.decode(body, LIMIT)
    assert rows[0][9] is None and rows[0][10] is None and rows[1][9] is None  # service.name not a str
    nested = rows[1][11][""]
    assert nested == {
        "s": "later wins",
        "b": True,
        "f": False,
        "i": -(2**63),
        "d": -0.5,
        "x": "AP8Q",
        "e": None,
        "n": None,
        "a": [1, None],
    }
    assert next(iter(nested)) == "s"  # the first position, the later value
    assert rows[1][4:8] == (10, 5, 7, 5)


def test_strings_counted_in_bytes_fall_back_when_near_the_limit() -> None:
    """The upb path counts characters: a 40-character, 80-byte value passes a 64 limit; here it falls back."""
    request = bench_like_request(1)
    request.resource_spans[0].scope_spans[0].spans[0].attributes.append(_kv("wide", "é" * 40))
    assert not _agrees(request.SerializeToString(), 64)
    assert _agrees(request.SerializeToString(), 80)


def test_an_empty_body_and_empty_messages() -> None:
    assert _otlpfast.decode(b"", 10) == []
    assert _agrees(ExportTraceServiceRequest(resource_spans=[ResourceSpans()]).SerializeToString())
    assert _otlpfast.decode(bytearray(b""), 10) == []
    with pytest.raises(TypeError):
        _otlpfast.decode("text", 10)


def test_without_the_compiled_module_the_wrapper_uses_upb(monkeypatch: pytest.MonkeyPatch) -> None:
    from passhat.collector.ingest import _otlp

    body = bench_like_request(1).SerializeToString()
    monkeypatch.setattr(_otlp, "_otlpfast", None)
    assert decode_protobuf(body, max_attribute_bytes=LIMIT) == _upb(body, LIMIT)


# --- hand-made wire bytes ---------------------------------------------------------------------------------


def _varint(value: int) -> bytes:
    out = bytearray()
    value &= (1 << 64) - 1
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, wire_type: int, payload: bytes | int) -> bytes:
    tag = _varint(number << 3 | wire_type)
    if wire_type == 0:
        assert isinstance(payload, int)
        return tag + _varint(payload)
    assert isinstance(payload, bytes)
    if wire_type == 2:
        return tag + _varint(len(payload)) + payload
    return tag + payload


def _request_with_span(span: bytes, *, scope: bytes = b"", resource: bytes = b"") -> bytes:
    scope_spans = scope + _field(2, 2, span)
    return _field(1, 2, resource + _field(2, 2, scope_spans))


_SPAN = Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="span", attributes=[_kv("k", "v")]).SerializeToString()
_ANY = AnyValue(string_value="v").SerializeToString()


def _span_with_value(value: bytes) -> bytes:
    return _request_with_span(_SPAN + _field(9, 2, _field(1, 2, b"key") + _field(2, 2, value)))


def _nested_array(depth: int) -> bytes:
    value = _ANY
    for _ in range(depth):
        value = _field(5, 2, _field(1, 2, value))
    return value


INVALID: dict[str, bytes] = {
    "trace id of 15 bytes": _request_with_span(Span(trace_id=b"\x01" * 15, span_id=b"\x02" * 8).SerializeToString()),
    "trace id all zero": _request_with_span(Span(trace_id=bytes(16), span_id=b"\x02" * 8).SerializeToString()),
    "no trace id": _request_with_span(Span(span_id=b"\x02" * 8).SerializeToString()),
    "span id of 9 bytes": _request_with_span(Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 9).SerializeToString()),
    "span id all zero": _request_with_span(Span(trace_id=b"\x01" * 16, span_id=bytes(8)).SerializeToString()),
    "parent id of 4 bytes": _request_with_span(_SPAN + _field(4, 2, b"\x03" * 4)),
    "long string value": _span_with_value(AnyValue(string_value="z" * (LIMIT + 1)).SerializeToString()),
    "long bytes value": _span_with_value(AnyValue(bytes_value=b"z" * (LIMIT + 1)).SerializeToString()),
    "long string in a list": _span_with_value(_field(5, 2, _field(1, 2, _field(1, 2, b"z" * (LIMIT + 1))))),
    "long resource value": _request_with_span(
        _SPAN, resource=_field(1, 2, _field(1, 2, _field(2, 2, _field(1, 2, b"z" * 99))))
    ),
    "long span name": _request_with_span(_SPAN + _field(5, 2, b"n" * (LIMIT + 1))),
    "invalid UTF-8 in a value": _span_with_value(_field(1, 2, b"\xff")),
    "invalid UTF-8 in a key": _request_with_span(_SPAN + _field(9, 2, _field(1, 2, b"\xc3"))),
    "a surrogate in a value": _span_with_value(_field(1, 2, b"\xed\xa0\x80")),
    "an overlong encoding in a name": _request_with_span(_SPAN + _field(5, 2, b"\xc0\xaf")),
    "invalid UTF-8 in a status message": _request_with_span(_SPAN + _field(15, 2, _field(2, 2, b"\xfe"))),
    "invalid UTF-8 in the scope name": _request_with_span(_SPAN, scope=_field(1, 2, _field(1, 2, b"\x80"))),
    "invalid UTF-8 in trace_state": _request_with_span(_SPAN + _field(3, 2, b"\x80")),
    "invalid UTF-8 in a schema_url": _field(1, 2, _field(3, 2, b"\x80")),
    "invalid UTF-8 in a link attribute": _request_with_span(_SPAN + _field(13, 2, _field(4, 2, _field(1, 2, b"\x80")))),
    "invalid UTF-8 in an entity ref": _request_with_span(
        _SPAN, resource=_field(1, 2, _field(3, 2, _field(3, 2, b"\xff")))
    ),
    "a group (wire type 3)": _request_with_span(_SPAN + _varint(20 << 3 | 3) + _varint(20 << 3 | 4)),
    "an end group (wire type 4)": _request_with_span(_SPAN + _varint(20 << 3 | 4)),
    "wire type 6": _request_with_span(_SPAN + _varint(20 << 3 | 6) + b"\x00" * 8),
    "wire type 7": _request_with_span(_SPAN + _varint(20 << 3 | 7)),
    "field number 0": _request_with_span(_SPAN + _field(0, 0, 1)),
    "a name sent as a varint": _request_with_span(_SPAN + _field(5, 0, 1)),
    "a truncated varint": _request_with_span(_SPAN) + b"\x08\xff",
    "a truncated length": _request_with_span(_SPAN)[:-3],
    "a length past its parent": _field(1, 2, _field(2, 2, b"\x12\x40" + _SPAN)),
    "a varint of 11 bytes": _request_with_span(_SPAN + b"\x30" + b"\xff" * 10 + b"\x01"),
    "nesting 40 deep": _span_with_value(_nested_array(40)),
    "the resource twice": _request_with_span(_SPAN, resource=_field(1, 2, b"") + _field(1, 2, b"")),
    "the scope twice": _request_with_span(_SPAN, scope=_field(1, 2, b"") + _field(1, 2, b"")),
    "the status twice": _request_with_span(_SPAN + _field(15, 2, b"") + _field(15, 2, _field(3, 0, 2))),
    "a KeyValue's value twice": _request_with_span(_SPAN + _field(9, 2, _field(1, 2, b"k") + _field(2, 2, _ANY) * 2)),
    "a oneof set twice": _span_with_value(_ANY + _field(3, 0, 5)),
    "the same oneof member twice": _span_with_value(_ANY + _ANY),
    "a string-table index": _span_with_value(_field(8, 0, 1)),
    "a name twice": _request_with_span(_SPAN + _field(5, 2, b"other")),
    "a start time past 2262": _request_with_span(_SPAN + Span(start_time_unix_nano=2**63).SerializeToString()),
    "an end time past 2262": _request_with_span(_SPAN + Span(end_time_unix_nano=2**64 - 1).SerializeToString()),
    "an event time past 2262": _request_with_span(
        _SPAN + Span(events=[Span.Event(name="e", time_unix_nano=2**63)]).SerializeToString()
    ),
}


@pytest.mark.parametrize("body", INVALID.values(), ids=INVALID.keys())
def test_bodies_that_are_not_plain_take_the_upb_path(body: bytes) -> None:
    assert _otlpfast.decode(body, LIMIT) is None
    _agrees(body)


def test_nesting_within_the_limit_is_decoded() -> None:
    body = _span_with_value(_nested_array(12))
    assert _agrees(body)


def test_unknown_fields_are_skipped() -> None:
    unknown = _field(20, 0, 7) + _field(21, 1, b"\x00" * 8) + _field(22, 2, b"\xff\xfe") + _field(23, 5, b"\x00" * 4)
    span = _SPAN + unknown + _field(9, 2, _field(1, 2, b"k2") + unknown + _field(2, 2, _ANY + unknown))
    body = _field(1, 2, _field(2, 2, _field(2, 2, span) + unknown) + unknown) + unknown
    assert _agrees(body)
    assert _agrees(_request_with_span(_SPAN + _field(3, 2, b"") + _field(536870911, 0, 1)))


def test_enum_values_keep_their_low_32_bits_like_upb() -> None:
    for kind in (2**31 - 1, 2**31, 2**32 + 3, -1, -(2**31)):
        body = _request_with_span(_SPAN + _field(6, 0, kind) + _field(15, 2, _field(3, 0, kind)))
        assert _agrees(body), kind


EDGES: dict[str, bytes] = {
    "an overlong tag of an unknown field": _request_with_span(_SPAN + b"\xa0\x81\x00\x05"),
    "an overlong length": _field(1, 2, b"") + b"\x0a\x80\x00",
    "a bool of 2": _span_with_value(_field(2, 0, 2)),
    "a bool of 2**40": _span_with_value(_field(2, 0, 2**40)),
    "a negative int": _span_with_value(_field(3, 0, -5)),
    "a 10-byte varint": _span_with_value(b"\x18" + b"\xff" * 9 + b"\x01"),
    "an empty status": _request_with_span(_SPAN + _field(15, 2, b"")),
    "the reserved status field 1": _request_with_span(_SPAN + _field(15, 2, _field(1, 2, b"\xff"))),
    "a key_strindex": _request_with_span(_SPAN + _field(9, 2, _field(1, 2, b"q") + _field(3, 0, 5))),
    "a key_strindex of the wrong wire type": _request_with_span(
        _SPAN + _field(9, 2, _field(1, 2, b"q") + _field(3, 2, b""))
    ),
    "a tag above 32 bits": _request_with_span(_SPAN + _varint(1 << 32) + _varint(1)),
    "the largest field number": _request_with_span(_SPAN + _field(536870911, 2, b"abc")),
    "an empty KeyValue": _request_with_span(_SPAN + _field(9, 2, b"")),
    "an empty AnyValue": _span_with_value(b""),
    "empty ArrayValue and KeyValueList": _span_with_value(_field(5, 2, b"")) + _span_with_value(_field(6, 2, b"")),
    "a link": _request_with_span(_SPAN + _field(13, 2, Span.Link(trace_id=b"1" * 16, flags=3).SerializeToString())),
}


@pytest.mark.parametrize("body", EDGES.values(), ids=EDGES.keys())
def test_edge_cases_agree_with_upb(body: bytes) -> None:
    _agrees(body)


def test_a_nan_double() -> None:
    rows = _otlpfast.decode(_span_with_value(_field(4, 1, b"\x00" * 6 + b"\xf8\x7f")), LIMIT)
    assert math.isnan(rows[0][11]["key"])


# --- generated requests -----------------------------------------------------------------------------------

_text = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(["", "service.name", "k", "é🙂"])
# Keys the normaliser reads, so that any value type reaches it too.
_keys = (
    st.sampled_from(["", "a", "b", "service.name", "http.method"])
    | st.sampled_from(["gen_ai.operation.name", "passhat.tool.outcome", "passhat.ticket.id", "gen_ai.tool.name"])
    | _text
)

_scalars: st.SearchStrategy[AnyValue] = st.one_of(
    st.builds(lambda s: AnyValue(string_value=s), _text | st.text(max_size=70)),
    st.builds(lambda b: AnyValue(bool_value=b), st.booleans()),
    st.builds(lambda i: AnyValue(int_value=i), st.integers(-(2**63), 2**63 - 1)),
    st.builds(lambda d: AnyValue(double_value=d), st.floats(allow_nan=False)),
    st.builds(lambda b: AnyValue(bytes_value=b), st.binary(max_size=70)),
    st.just(AnyValue()),
)


def _containers(children: st.SearchStrategy[AnyValue]) -> st.SearchStrategy[AnyValue]:
    return st.one_of(
        st.builds(lambda vs: AnyValue(array_value=ArrayValue(values=vs)), st.lists(children, max_size=4)),
        st.builds(
            lambda kvs: AnyValue(kvlist_value=KeyValueList(values=kvs)),
            st.lists(st.builds(lambda k, v: KeyValue(key=k, value=v), _keys, children), max_size=4),
        ),
    )


_values = _scalars
for _level in range(3):  # values nested up to 3 containers deep
    _values = _scalars | _containers(_values)
_key_values = st.lists(
    st.one_of(st.builds(lambda k, v: KeyValue(key=k, value=v), _keys, _values), st.builds(KeyValue, key=_keys)),
    max_size=6,
)
_unknown = st.one_of(
    st.builds(lambda n, v: _field(n, 0, v), st.integers(17, 5000), st.integers(0, 2**64 - 1)),
    st.builds(lambda n, b: _field(n, 1, b), st.integers(17, 5000), st.binary(min_size=8, max_size=8)),
    st.builds(lambda n, b: _field(n, 2, b), st.integers(17, 5000), st.binary(max_size=10)),
    st.builds(lambda n, b: _field(n, 5, b), st.integers(17, 5000), st.binary(min_size=4, max_size=4)),
)
_trace_ids = st.binary(min_size=16, max_size=16) | st.sampled_from([b"", bytes(16), b"\x01" * 15])
_span_ids = st.binary(min_size=8, max_size=8) | st.sampled_from([b"", bytes(8), b"\x01" * 9])


@st.composite
def _spans(draw: st.DrawFn) -> Span:
    span = Span(
        trace_id=draw(_trace_ids),
        span_id=draw(_span_ids),
        parent_span_id=draw(st.sampled_from([b""]) | _span_ids),
        name=draw(_text | st.text(max_size=70)),
        kind=draw(st.integers(0, 5) | st.integers(-(2**31), 2**31 - 1)),
        start_time_unix_nano=draw(st.integers(0, 2**64 - 1)),
        end_time_unix_nano=draw(st.integers(0, 2**64 - 1)),
        trace_state=draw(_text),
        flags=draw(st.integers(0, 2**32 - 1)),
        dropped_attributes_count=draw(st.integers(0, 3)),
        attributes=draw(_key_values),
        events=draw(
            st.lists(
                st.builds(
                    lambda n, t, a: Span.Event(name=n, time_unix_nano=t, attributes=a),
                    _text,
                    st.integers(0, 2**64 - 1),
                    _key_values,
                ),
                max_size=3,
            )
        ),
        links=draw(
            st.lists(
                st.builds(
                    lambda t, s, a: Span.Link(trace_id=t, span_id=s, attributes=a, trace_state="x"),
                    _trace_ids,
                    _span_ids,
                    _key_values,
                ),
                max_size=2,
            )
        ),
    )
    if draw(st.booleans()):
        span.status.CopyFrom(Status(code=draw(st.integers(0, 3)), message=draw(_text)))  # type: ignore[arg-type]
    if draw(st.booleans()):  # unknown fields survive a parse and are written back by SerializeToString
        span = Span.FromString(span.SerializeToString() + draw(_unknown))
    return span


@st.composite
def _requests(draw: st.DrawFn) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    for _ in range(draw(st.integers(0, 3))):
        resource_spans = request.resource_spans.add(schema_url=draw(_text))
        if draw(st.booleans()):
            resource_spans.resource.attributes.extend(draw(_key_values))
            if draw(st.booleans()):
                resource_spans.resource.attributes.append(_kv("service.name", draw(_text)))
        for _ in range(draw(st.integers(0, 3))):
            scope_spans = resource_spans.scope_spans.add()
            if draw(st.booleans()):
                scope_spans.scope.CopyFrom(
                    InstrumentationScope(name=draw(_text), version=draw(_text), attributes=draw(_key_values))
                )
            scope_spans.spans.extend(draw(st.lists(_spans(), max_size=3)))
    return request


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_requests(), st.sampled_from([LIMIT, 10, 0, 1 << 20]), st.binary(max_size=12) | _unknown)
def test_generated_requests_decode_like_upb(request: ExportTraceServiceRequest, limit: int, tail: bytes) -> None:
    body = request.SerializeToString()
    _agrees(body, limit)
    _agrees(body + tail, limit)  # random or unknown top-level bytes appended


@settings(max_examples=150, deadline=None)
@given(st.lists(_spans().filter(lambda s: len(s.trace_id) == 16 and len(s.span_id) == 8), min_size=1, max_size=4))
def test_generated_valid_spans_mostly_take_the_fast_path(spans: list[Span]) -> None:
    for span in spans:
        span.trace_id = b"\x01" + span.trace_id[1:]
        span.span_id = b"\x01" + span.span_id[1:]
    body = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])])
    _agrees(body.SerializeToString(), 1 << 20)


# --- fuzz: arbitrary and damaged bodies never crash, and rows always match upb ----------------------------


@settings(max_examples=1000, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes(body: bytes) -> None:
    _agrees(body)


_VALID = [bench_like_request(1).SerializeToString(), *INVALID.values()]


@settings(max_examples=1500, deadline=None)
@given(
    st.sampled_from(_VALID),
    st.lists(
        st.tuples(
            st.sampled_from(["flip", "truncate", "insert", "delete"]), st.integers(0, 1 << 20), st.integers(0, 255)
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_mutated_bodies(body: bytes, mutations: list[tuple[str, int, int]]) -> None:
    data = bytearray(body)
    for kind, where, byte in mutations:
        if not data:
            break
        at = where % len(data)
        if kind == "flip":
            data[at] ^= 1 << (byte % 8)
        elif kind == "truncate":
            del data[at:]
        elif kind == "insert":
            data.insert(at, byte)
        else:
            del data[at]
    _agrees(bytes(data))


def test_no_leak_over_many_decodes() -> None:
    bodies = [bench_like_request(1).SerializeToString(), *INVALID.values(), b"\x0a\x05\x12\x03\x12\x01"]
    for body in bodies:
        _otlpfast.decode(body, LIMIT)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(300):
            for body in bodies:
                _otlpfast.decode(body, LIMIT)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 50_000, f"{grown} bytes kept after {300 * len(bodies)} decodes"


def test_mutated_bodies_under_the_debug_allocator() -> None:
    """PYTHONMALLOC=debug catches buffer overruns and misuse of the allocator in the C code."""
    code = textwrap.dedent(
        """
        import random, sys
        from passhat.collector.ingest import _otlpfast
        bodies = [bytes.fromhex(h) for h in sys.argv[1:]]
        rng = random.Random(4)
        for _ in range(3000):
            data = bytearray(rng.choice(bodies))
            for _ in range(rng.randint(1, 3)):
                if data:
                    data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            if data and rng.random() < 0.3:
                del data[rng.randrange(len(data)):]
            _otlpfast.decode(bytes(data), 64)
        print("ok")
        """
    )
    hexes = [body.hex() for body in _VALID[:12]]
    out = subprocess.run(
        [sys.executable, "-c", code, *hexes],
        env={**os.environ, "PYTHONMALLOC": "debug"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
