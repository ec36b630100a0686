"""decode_traces on the hot path's inline cases: lists of strings, mixed lists, limits inside lists."""

from __future__ import annotations

import os

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from passhat.collector.ingest._otlp import decode_traces
from tests.collector.ingest.otlp_payloads import any_value


def _request(attributes: dict[str, object]) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = os.urandom(16), os.urandom(8), "execute_tool lookup"
    span.start_time_unix_nano, span.end_time_unix_nano = 1, 2
    for key, value in attributes.items():
        kv = span.attributes.add()
        kv.key = key
        kv.value.CopyFrom(any_value(value))
    event = span.events.add()
    event.name = "passhat.state_write"
    kv = event.attributes.add()
    kv.key = "passhat.state_write.changed"
    kv.value.CopyFrom(any_value(["status", "refund"]))
    return request


def test_lists_decode_inline_and_mixed() -> None:
    decoded = decode_traces(
        _request({"names": ["a", "b"], "mixed": ["x", 3, True, 1.5, ["y"]], "empty": []}), max_attribute_bytes=64
    )
    assert decoded.rejected == []
    span = decoded.spans[0]
    assert span.attributes == {"names": ["a", "b"], "mixed": ["x", 3, True, 1.5, ["y"]], "empty": []}
    assert span.events[0].attributes == {"passhat.state_write.changed": ["status", "refund"]}


def test_a_long_string_inside_a_list_rejects_the_span_naming_the_attribute() -> None:
    decoded = decode_traces(_request({"ok": "fine", "tags": ["short", "z" * 100]}), max_attribute_bytes=64)
    assert decoded.spans == []
    assert len(decoded.rejected) == 1
    assert "attribute 'tags' is 100 bytes" in decoded.rejected[0]
