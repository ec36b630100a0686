"""Builders of OTLP trace requests for the tests: passhat, GenAI, OpenInference and OpenLLMetry shapes."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status


def any_value(value: Any) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, bytes):
        return AnyValue(bytes_value=value)
    if isinstance(value, (list, tuple)):
        return AnyValue(array_value=ArrayValue(values=[any_value(v) for v in value]))
    if isinstance(value, dict):
        return AnyValue(
            kvlist_value=KeyValueList(values=[KeyValue(key=k, value=any_value(v)) for k, v in value.items()])
        )
    return AnyValue(string_value=str(value))


def attrs(mapping: Mapping[str, Any]) -> list[KeyValue]:
    return [KeyValue(key=k, value=any_value(v)) for k, v in mapping.items()]


def span(
    trace_id: bytes,
    span_id: bytes,
    name: str,
    attributes: Mapping[str, Any],
    *,
    parent: bytes = b"",
    start_ns: int | None = None,
    duration_ns: int = 1_000_000,
    events: Sequence[tuple[str, Mapping[str, Any]]] = (),
    status: int = 0,
    status_message: str = "",
) -> Span:
    start = start_ns if start_ns is not None else time.time_ns() - 10_000_000_000
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        kind=Span.SPAN_KIND_INTERNAL,
        start_time_unix_nano=start,
        end_time_unix_nano=start + duration_ns,
        attributes=attrs(attributes),
        events=[Span.Event(name=n, time_unix_nano=start + i, attributes=attrs(a)) for i, (n, a) in enumerate(events)],
        status=Status(code=status, message=status_message),  # type: ignore[arg-type]
    )


def request(spans: Sequence[Span], *, service: str = "shop-agent") -> ExportTraceServiceRequest:
    return ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(
                resource=Resource(attributes=attrs({"service.name": service})),
                scope_spans=[ScopeSpans(spans=list(spans))],
            )
        ]
    )


def state_write(
    table: str, key: Mapping[str, Any], before: Mapping[str, Any], after: Mapping[str, Any]
) -> tuple[str, dict[str, Any]]:
    return (
        "passhat.state_write",
        {
            "passhat.state_write.table": table,
            "passhat.state_write.key": json.dumps(key),
            "passhat.state_write.op": "update",
            "passhat.state_write.before": json.dumps(before),
            "passhat.state_write.after": json.dumps(after),
            "passhat.state_write.changed": list(after),
        },
    )


def passhat_ticket(
    ticket_id: str,
    *,
    task_type: str = "refund",
    tools: int = 8,
    writes_per_tool: int = 3,
    source: str = "production",
    start_ns: int | None = None,
) -> list[Span]:
    """A realistic passhat SDK trace: the ticket root, `tools` tool spans, state writes on each."""
    trace_id = os.urandom(16)
    root_id = os.urandom(8)
    start = start_ns if start_ns is not None else time.time_ns() - 10_000_000_000
    children = []
    for i in range(tools):
        events = [
            state_write("orders", {"id": f"O-{i}-{j}"}, {"status": "delivered"}, {"status": "refunded"})
            for j in range(writes_per_tool)
        ]
        children.append(
            span(
                trace_id,
                os.urandom(8),
                f"execute_tool tool_{i}",
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": f"tool_{i}",
                    "gen_ai.tool.call.id": f"toolu_{i}",
                    "gen_ai.tool.type": "function",
                    "passhat.tool.outcome": "empty" if i == 1 else "ok",
                },
                parent=root_id,
                start_ns=start + (i + 1) * 1_000_000,
                events=events,
            )
        )
    root = span(
        trace_id,
        root_id,
        "invoke_agent support",
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "support",
            "gen_ai.conversation.id": f"conv-{ticket_id}",
            "passhat.ticket.id": ticket_id,
            "passhat.task_type": task_type,
            "passhat.source": source,
            "passhat.intent": json.dumps({"order_id": "O-1"}),
            "passhat.domain": "retail",
            "passhat.ticket.outcome": "resolved",
        },
        start_ns=start,
        duration_ns=(tools + 2) * 1_000_000,
        events=[("passhat.customer_message", {"passhat.message.content": "I want a refund"})],
        status=1,
    )
    return [*children, root]


def to_otlp_json(req: ExportTraceServiceRequest) -> dict[str, Any]:
    """OTLP JSON: camelCase fields, hex ids, enums as integers."""
    from google.protobuf import json_format

    document = json_format.MessageToDict(req, use_integers_for_enums=True)
    for rs in document.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for sp in ss.get("spans", []):
                for name in ("traceId", "spanId", "parentSpanId"):
                    if name in sp:
                        import base64

                        sp[name] = base64.b64decode(sp[name]).hex()
    return document
