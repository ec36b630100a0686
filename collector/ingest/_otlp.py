"""OTLP/HTTP trace requests: body limits, gzip, protobuf and JSON decoding, per-span validation.

Whole-request problems raise `OtlpError` (a 4xx with a message); problems confined to one span reject that
span only and are reported back as an OTLP partial success.
"""

from __future__ import annotations

import base64
import json
import zlib
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from passhat.collector.ingest._normalize import DEFAULT_RULES, TicketRules, normalize_span

try:  # the compiled fast path is optional: an install without a C compiler decodes with upb only
    from passhat.collector.ingest import _otlpfast
except ImportError:  # pragma: no cover - exercised only where the extension could not be built
    _otlpfast = None  # type: ignore[assignment]
from passhat.collector.store import NormalizedSpan, SpanEvent, StatusCode

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
_STATUS: dict[int, StatusCode] = {0: "unset", 1: "ok", 2: "error"}
_ZERO_TRACE = bytes(16)
_ZERO_SPAN = bytes(8)
MAX_TIME_NS = 2**63 - 1
"""The latest time a span or event may carry: OTLP's are uint64, the stores' columns int64."""


class OtlpError(Exception):
    """A request the collector refuses as a whole: `status` is the HTTP status, the message says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(slots=True)
class DecodedTraces:
    """The spans of one request that passed validation, and one reason per rejected span."""

    spans: list[NormalizedSpan] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)


def decompress(body: bytes, encoding: str | None, *, limit: int) -> bytes:
    """The request body, gunzipped when `Content-Encoding` says so, never larger than `limit` bytes."""
    encoding = (encoding or "identity").strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "x-gzip", "deflate"):
        raise OtlpError(415, f"Content-Encoding {encoding!r} is not supported: send gzip or no encoding")
    wbits = zlib.MAX_WBITS | 16 if encoding != "deflate" else zlib.MAX_WBITS
    inflater = zlib.decompressobj(wbits)
    try:
        out = inflater.decompress(body, limit + 1)
        if len(out) > limit:
            raise OtlpError(413, f"the decompressed body exceeds the {limit}-byte limit")
        if not inflater.eof:
            raise OtlpError(400, f"the {encoding} stream is truncated")
    except zlib.error as exc:
        raise OtlpError(400, f"the {encoding} stream is corrupt: {exc}") from exc
    return out


def parse_request(body: bytes, content_type: str) -> ExportTraceServiceRequest:
    """Decode an `ExportTraceServiceRequest` from protobuf or OTLP JSON."""
    request = ExportTraceServiceRequest()
    if content_type == PROTOBUF:
        try:
            request.ParseFromString(body)
        except (DecodeError, RuntimeError, ValueError) as exc:
            raise OtlpError(400, f"the body is not a protobuf ExportTraceServiceRequest: {exc}") from exc
        return request
    try:
        document = json.loads(body)
    except RecursionError as exc:
        raise OtlpError(400, "the JSON body nests arrays or objects too deeply to decode") from exc
    except (ValueError, UnicodeDecodeError) as exc:  # also an integer of more than 4,300 digits
        raise OtlpError(400, f"the body is not valid JSON: {_short(exc)}") from exc
    if not isinstance(document, dict):
        raise OtlpError(400, "the JSON body must be an object with a resourceSpans list")
    try:
        _hex_ids_to_base64(document)
        json_format.ParseDict(document, request, ignore_unknown_fields=True)
    except RecursionError as exc:
        raise OtlpError(400, "the JSON body nests attribute values too deeply to decode") from exc
    except OverflowError as exc:  # 1e999 where an integer is expected
        raise OtlpError(400, f"the JSON body has a number out of range: {_short(exc)}") from exc
    except (json_format.ParseError, TypeError, ValueError, AttributeError) as exc:
        raise OtlpError(400, f"the JSON body is not an OTLP ExportTraceServiceRequest: {_short(exc)}") from exc
    return request


def _short(exc: BaseException) -> str:
    """An exception's message, cut: a parser's may quote a large part of the body. The end stays: protobuf's
    JSON parser names the field path first and the problem last."""
    text = str(exc)
    return text if len(text) <= 400 else text[:100] + " ... " + text[-300:]


def _hex_ids_to_base64(document: dict[str, Any]) -> None:
    """OTLP JSON writes trace and span ids as hex; protobuf's JSON mapping expects base64 for bytes."""
    for resource_spans in _list(document, "resourceSpans", "resource_spans"):
        for scope_spans in _list(resource_spans, "scopeSpans", "scope_spans"):
            for span in _list(scope_spans, "spans"):
                if not isinstance(span, dict):
                    continue
                _convert_ids(span)
                for link in _list(span, "links"):
                    if isinstance(link, dict):
                        _convert_ids(link)


def _list(parent: Any, *names: str) -> list[Any]:
    if not isinstance(parent, dict):
        return []
    for name in names:
        value = parent.get(name)
        if isinstance(value, list):
            return value
    return []


def _convert_ids(obj: dict[str, Any]) -> None:
    for name in ("traceId", "trace_id", "spanId", "span_id", "parentSpanId", "parent_span_id"):
        value = obj.get(name)
        if isinstance(value, str):
            try:
                raw = bytes.fromhex(value)
            except ValueError:  # not hex: marked with the text sent, which validation rejects saying so
                raw = _NOT_HEX + value[:40].encode("utf-8", "replace")
            obj[name] = base64.b64encode(raw).decode("ascii")


_NOT_HEX = b"\x00passhat:not-hex:"
"""Stands for an id of OTLP JSON that is not hex (followed by the start of its text), until validation."""


def _not_hex(value: bytes) -> str | None:
    """The text of an id that was not hex in OTLP JSON, or None."""
    return value[len(_NOT_HEX) :].decode("utf-8", "replace") if value.startswith(_NOT_HEX) else None


class _TooLargeError(Exception):
    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size
        self.key = "?"


def _value(value: AnyValue, limit: int) -> Any:
    which = value.WhichOneof("value")
    if which == "string_value":
        text = value.string_value
        if len(text) > limit:
            raise _TooLargeError(len(text))
        return text
    if which == "int_value":
        return value.int_value
    if which == "bool_value":
        return value.bool_value
    if which == "double_value":
        return value.double_value
    if which == "array_value":
        return [_value(v, limit) for v in value.array_value.values]
    if which == "kvlist_value":
        return _attributes(value.kvlist_value.values, limit)
    if which == "bytes_value":
        if len(value.bytes_value) > limit:
            raise _TooLargeError(len(value.bytes_value))
        return base64.b64encode(value.bytes_value).decode("ascii")
    return None


def _attributes(pairs: Any, limit: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    kv: KeyValue
    for kv in pairs:
        value = kv.value
        # This loop is the ingest hot path: strings (most attributes) and lists of strings are decoded
        # inline; each access of a upb sub-message costs a wrapper object, so every one is made once.
        which = value.WhichOneof("value")
        try:
            if which == "string_value":
                text = value.string_value
                if len(text) > limit:
                    raise _TooLargeError(len(text))
                out[kv.key] = text
            elif which == "array_value":
                items: list[Any] = []
                for item in value.array_value.values:
                    if item.WhichOneof("value") == "string_value":
                        text = item.string_value
                        if len(text) > limit:
                            raise _TooLargeError(len(text))
                        items.append(text)
                    else:
                        items.append(_value(item, limit))
                out[kv.key] = items
            else:
                out[kv.key] = _value(value, limit)
        except _TooLargeError as exc:
            exc.key = kv.key  # the outermost key names the attribute
            raise
    return out


def decode_traces(
    request: ExportTraceServiceRequest, *, max_attribute_bytes: int, rules: TicketRules = DEFAULT_RULES
) -> DecodedTraces:
    """Validate and normalise every span of a request; reject (with a reason) only the spans at fault."""
    decoded = DecodedTraces()
    for r_index, resource_spans in enumerate(request.resource_spans):
        try:
            resource = _attributes(resource_spans.resource.attributes, max_attribute_bytes)
        except _TooLargeError as exc:
            count = sum(len(s.spans) for s in resource_spans.scope_spans)
            reason = _value_problem(exc, max_attribute_bytes)
            decoded.rejected.extend([f"resourceSpans[{r_index}]: resource attribute {reason}"] * count)
            continue
        service = resource.get("service.name")
        service_name = service if isinstance(service, str) else None
        for scope_spans in resource_spans.scope_spans:
            scope_name = scope_spans.scope.name or None
            for span in scope_spans.spans:
                trace_id, span_id, parent_id = span.trace_id, span.span_id, span.parent_span_id
                problem = _invalid_ids(trace_id, span_id, parent_id)
                if problem:
                    decoded.rejected.append(f"{_label(span)}: {problem}")
                    continue
                try:
                    attributes = _attributes(span.attributes, max_attribute_bytes)
                    events = [
                        SpanEvent(e.name, e.time_unix_nano, _attributes(e.attributes, max_attribute_bytes))
                        for e in span.events
                    ]
                except _TooLargeError as exc:
                    decoded.rejected.append(f"{_label(span)}: attribute {_value_problem(exc, max_attribute_bytes)}")
                    continue
                problem = _invalid_times(span.start_time_unix_nano, span.end_time_unix_nano, events)
                if problem:
                    decoded.rejected.append(f"{_label(span)}: {problem}")
                    continue
                if len(span.name) > max_attribute_bytes:
                    decoded.rejected.append(
                        f"{_label(span)}: the span name is above the {max_attribute_bytes}-byte limit"
                    )
                    continue
                decoded.spans.append(
                    normalize_span(
                        trace_id=trace_id.hex(),
                        span_id=span_id.hex(),
                        parent_span_id=parent_id.hex() or None,
                        name=span.name,
                        start_time_ns=span.start_time_unix_nano,
                        end_time_ns=max(span.end_time_unix_nano, span.start_time_unix_nano),
                        kind=int(span.kind),
                        status=_STATUS.get(int(span.status.code), "unset"),
                        status_message=span.status.message or None,
                        service_name=service_name,
                        scope_name=scope_name,
                        attributes=attributes,
                        resource_attributes=resource,
                        events=events,
                        rules=rules,
                    )
                )
    return decoded


def decode_protobuf(body: bytes, *, max_attribute_bytes: int, rules: TicketRules = DEFAULT_RULES) -> DecodedTraces:
    """`decode_traces(parse_request(body, PROTOBUF))`, through the compiled decoder when it can take the body.

    The C decoder answers None for anything not plain (an invalid id, an over-long value, malformed or unusual
    wire data...): those bodies take the upb path, which gives the exact rejections or the 400.
    """
    rows = _otlpfast.decode(body, max_attribute_bytes) if _otlpfast is not None else None
    if rows is None:
        return decode_traces(parse_request(body, PROTOBUF), max_attribute_bytes=max_attribute_bytes, rules=rules)
    decoded = DecodedTraces()
    append = decoded.spans.append
    for (
        trace_id,
        span_id,
        parent_id,
        name,
        start,
        end,
        kind,
        status_code,
        status_message,
        service_name,
        scope_name,
        attributes,
        resource,
        events,
    ) in rows:
        append(
            normalize_span(
                trace_id=trace_id,
                span_id=span_id,
                parent_span_id=parent_id,
                name=name,
                start_time_ns=start,
                end_time_ns=max(end, start),
                kind=kind,
                status=_STATUS.get(status_code, "unset"),
                status_message=status_message,
                service_name=service_name,
                scope_name=scope_name,
                attributes=attributes,
                resource_attributes=resource,
                events=[SpanEvent(e_name, e_time, e_attributes) for e_name, e_time, e_attributes in events],
                rules=rules,
            )
        )
    return decoded


def _label(span: Any) -> str:
    text = _not_hex(span.span_id)
    return f"span {span.span_id.hex() or '?' if text is None else repr(text)} ({span.name[:80]!r})"


def _invalid_ids(trace_id: bytes, span_id: bytes, parent_span_id: bytes) -> str | None:
    if len(trace_id) != 16 or trace_id == _ZERO_TRACE:
        return _not_hex_said("trace_id", trace_id, 32) or (
            f"trace_id must be 16 non-zero bytes (32 hex characters), got {len(trace_id)} bytes"
        )
    if len(span_id) != 8 or span_id == _ZERO_SPAN:
        return _not_hex_said("span_id", span_id, 16) or (
            f"span_id must be 8 non-zero bytes (16 hex characters), got {len(span_id)} bytes"
        )
    if len(parent_span_id) not in (0, 8):
        return _not_hex_said("parent_span_id", parent_span_id, 16) or (
            f"parent_span_id must be empty or 8 bytes, got {len(parent_span_id)} bytes"
        )
    return None


def _not_hex_said(name: str, value: bytes, size: int) -> str | None:
    """Why an id of the wrong length is refused, when it was text that is not hex (a marked id is never 8 or 16
    bytes long, so the check costs nothing to a valid span)."""
    text = _not_hex(value)
    return (
        None if text is None else f"{name} {text!r} is not hex: OTLP JSON writes it as {size} hex characters (0-9, a-f)"
    )


def _value_problem(exc: _TooLargeError, limit: int) -> str:
    return f"{exc.key!r} is {exc.size} bytes, above the {limit}-byte limit"


def _invalid_times(start_ns: int, end_ns: int, events: list[SpanEvent]) -> str | None:
    # OTLP times are uint64; the stores' columns are int64, so a time past 2262 would fail the whole commit.
    if start_ns > MAX_TIME_NS or end_ns > MAX_TIME_NS:
        return f"start and end times must be below 2^63 ns (year 2262), got {start_ns} and {end_ns}"
    late = next((e for e in events if e.time_ns > MAX_TIME_NS), None)
    if late is not None:
        return f"event {late.name[:80]!r}: its time must be below 2^63 ns (year 2262), got {late.time_ns}"
    return None


def encode_response(rejected: list[str], content_type: str) -> bytes:
    """An `ExportTraceServiceResponse`: empty when everything was accepted, else a partial success."""
    response = ExportTraceServiceResponse()
    if rejected:
        response.partial_success.rejected_spans = len(rejected)
        shown = rejected[:20]
        more = f" (and {len(rejected) - len(shown)} more)" if len(rejected) > len(shown) else ""
        response.partial_success.error_message = "; ".join(shown) + more
    if content_type == PROTOBUF:
        return response.SerializeToString()
    return json.dumps(json_format.MessageToDict(response)).encode()


def encode_status(code: int, message: str, content_type: str) -> bytes:
    """A google.rpc.Status body, as OTLP/HTTP asks for 4xx answers (protobuf or JSON like the request)."""
    from google.rpc.status_pb2 import Status

    grpc_code = {400: 3, 401: 16, 403: 7, 408: 4, 413: 8, 415: 3, 429: 8}.get(code, 2)
    if content_type == PROTOBUF:
        encoded: bytes = Status(code=grpc_code, message=message).SerializeToString()
        return encoded
    return json.dumps({"code": grpc_code, "message": message}).encode()
