"""The compiled OTLP decoder (collector/_otlpfast.c): see passhat.collector.ingest._otlp.decode_protobuf."""

from typing import Any

SpanRow = tuple[
    str,  # trace_id hex
    str,  # span_id hex
    str | None,  # parent_span_id hex, None when empty
    str,  # name
    int,  # start_time_unix_nano
    int,  # end_time_unix_nano (raw)
    int,  # kind
    int,  # status code
    str | None,  # status message, None when empty
    str | None,  # service.name when the resource attribute is a str
    str | None,  # scope name, None when empty
    dict[str, Any],  # attributes
    dict[str, Any],  # resource attributes (one dict shared by the spans of a ResourceSpans)
    list[tuple[str, int, dict[str, Any]]],  # events: (name, time_unix_nano, attributes)
]

def decode(body: bytes, max_attribute_bytes: int, /) -> list[SpanRow] | None: ...
