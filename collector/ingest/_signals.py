"""OTLP logs and metrics: what passhat keeps of them.

Instrumentations that follow the GenAI event conventions (OpenLLMetry, the OpenTelemetry contrib GenAI
instrumentors) send message content as log records named `gen_ai.*` that point at their span. Each such record
becomes an event span: a child of the span it names, holding one event with the record's attributes and body,
so a trace shows its messages whichever signal carried them. Its span id is a hash of the record, so a
re-delivered record is stored once. Records without trace context and every other log, and all metrics, are
acknowledged and dropped: passhat derives its own numbers from spans.
"""

from __future__ import annotations

import hashlib
import json

from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest, ExportLogsServiceResponse
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from passhat.collector.ingest._otlp import PROTOBUF, OtlpError

GENAI_EVENT_PREFIX = "gen_ai."
EVENT_SPAN_BODY = "body"  # the event attribute holding the log record's body


def _parse(message: Message, body: bytes, media: str, what: str) -> None:
    try:
        if media == PROTOBUF:
            message.ParseFromString(body)
        else:
            document = json.loads(body)
            if not isinstance(document, dict):
                raise ValueError("the JSON body must be an object")
            _hex_ids_to_base64(document)
            json_format.ParseDict(document, message, ignore_unknown_fields=True)
    except (DecodeError, RuntimeError, ValueError, TypeError, AttributeError, json_format.ParseError) as exc:
        raise OtlpError(400, f"the body is not an OTLP {what}: {exc}") from exc


def _hex_ids_to_base64(document: dict[str, object]) -> None:
    """OTLP JSON writes a log record's trace and span ids as hex; protobuf's JSON mapping expects base64."""
    import base64

    for resource_logs in _items(document, "resourceLogs"):
        for scope_logs in _items(resource_logs, "scopeLogs"):
            for record in _items(scope_logs, "logRecords"):
                for name in ("traceId", "spanId"):
                    value = record.get(name)
                    if isinstance(value, str):
                        try:
                            record[name] = base64.b64encode(bytes.fromhex(value)).decode("ascii")
                        except ValueError:
                            record[name] = ""  # not hex: the record has no usable trace context
    return None


def _items(parent: object, name: str) -> list[dict[str, object]]:
    value = parent.get(name) if isinstance(parent, dict) else None
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def logs_as_traces(body: bytes, media: str) -> tuple[ExportTraceServiceRequest, int]:
    """The GenAI event records of a logs request as event spans, and how many records were dropped."""
    logs = ExportLogsServiceRequest()
    _parse(logs, body, media, "ExportLogsServiceRequest")
    traces = ExportTraceServiceRequest()
    dropped = 0
    for resource_logs in logs.resource_logs:
        spans: list[Span] = []
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                event_span = _event_span(record)
                if event_span is None:
                    dropped += 1
                else:
                    spans.append(event_span)
        if spans:
            traces.resource_spans.append(
                ResourceSpans(resource=resource_logs.resource, scope_spans=[ScopeSpans(spans=spans)])
            )
    return traces, dropped


def _event_name(record: LogRecord) -> str:
    if record.event_name:
        return str(record.event_name)
    for kv in record.attributes:  # before `event_name` existed, the name was an attribute
        if kv.key == "event.name" and kv.value.WhichOneof("value") == "string_value":
            return str(kv.value.string_value)
    return ""


def _event_span(record: LogRecord) -> Span | None:
    name = _event_name(record)
    if not name.startswith(GENAI_EVENT_PREFIX) or len(record.trace_id) != 16 or len(record.span_id) != 8:
        return None
    digest = hashlib.sha256(record.SerializeToString(deterministic=True)).digest()
    span_id = digest[:8] if any(digest[:8]) else b"\x00" * 7 + b"\x01"
    time_ns = record.time_unix_nano or record.observed_time_unix_nano
    attributes = [kv for kv in record.attributes if kv.key != "event.name"]
    if record.HasField("body"):
        attributes.append(KeyValue(key=EVENT_SPAN_BODY, value=record.body))
    return Span(
        trace_id=record.trace_id,
        span_id=span_id,
        parent_span_id=record.span_id,
        name=name,
        kind=Span.SPAN_KIND_INTERNAL,
        start_time_unix_nano=time_ns,
        end_time_unix_nano=time_ns,
        events=[Span.Event(name=name, time_unix_nano=time_ns, attributes=attributes)],
    )


def check_metrics(body: bytes, media: str) -> None:
    """Refuse a body that is not a metrics export (a 400 tells a misconfigured exporter); keep nothing."""
    _parse(ExportMetricsServiceRequest(), body, media, "ExportMetricsServiceRequest")


def encode_logs_response(media: str) -> bytes:
    return _encode(ExportLogsServiceResponse(), media)


def encode_metrics_response(media: str) -> bytes:
    return _encode(ExportMetricsServiceResponse(), media)


def _encode(response: Message, media: str) -> bytes:
    if media == PROTOBUF:
        return bytes(response.SerializeToString())
    return json.dumps(json_format.MessageToDict(response)).encode()
