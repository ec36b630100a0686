"""Any OpenTelemetry SDK can send to the collector: the real OTLP/HTTP exporter, protobuf and gzip."""

from __future__ import annotations

import json

import httpx
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Status, StatusCode

from tests.collector.server import Collector


def test_the_opentelemetry_exporter_delivers_tickets(collector: Collector) -> None:
    exporter = OTLPSpanExporter(
        endpoint=f"{collector.url}/v1/traces",
        headers={"Authorization": f"Bearer {collector.shop_key}"},
        compression=Compression.Gzip,
    )
    provider = TracerProvider(resource=Resource.create({"service.name": "otel-agent"}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    with (
        tracer.start_as_current_span(
            "invoke_agent support",
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "passhat.ticket.id": "OT-1",
                "passhat.task_type": "exchange",
                "passhat.intent": json.dumps({"order_id": "O-5"}),
            },
        ),
        tracer.start_as_current_span(
            "execute_tool find_order",
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "find_order"},
        ) as tool,
    ):
        tool.add_event(
            "passhat.state_write",
            {
                "passhat.state_write.table": "orders",
                "passhat.state_write.key": '{"id": "O-5"}',
                "passhat.state_write.op": "update",
                "passhat.state_write.after": '{"status": "exchanged"}',
            },
        )
        tool.set_status(Status(StatusCode.ERROR, "boom"))
    assert provider.force_flush(10_000)
    provider.shutdown()
    with httpx.Client(base_url=collector.url, headers={"authorization": f"Bearer {collector.shop_key}"}) as client:
        detail = client.get("/api/tickets/OT-1").json()
    assert detail["attempts"][0]["task_type"] == "exchange"
    assert detail["attempts"][0]["service_name"] == "otel-agent"
    assert [(c["tool_name"], c["outcome"], c["error_message"]) for c in detail["tool_calls"]] == [
        ("find_order", "error", "boom")
    ]
    assert detail["state_writes"][0]["after"] == {"status": "exchanged"}
