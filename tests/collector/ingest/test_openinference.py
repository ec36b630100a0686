"""OpenInference's own decorators (openinference-instrumentation, offline) through its OpenTelemetry exporter to a
real collector: the chain is the one ticket, typed by the task-type mapping; the tool links to the LLM call."""

from __future__ import annotations

import json

import httpx
import pytest
from openinference.instrumentation import TracerProvider, get_llm_output_message_attributes
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode

from passhat.collector import CollectorSettings
from tests.collector.server import Collector


@pytest.fixture
def collector_settings() -> CollectorSettings:
    return CollectorSettings(key_cache_s=0.0, task_types={"handle_ticket": "refund"})


def test_openinference_decorated_agent_is_one_ticket_with_linked_tool_calls(collector: Collector) -> None:
    provider = TracerProvider()
    exporter = OTLPSpanExporter(
        endpoint=f"{collector.url}/v1/traces", headers={"Authorization": f"Bearer {collector.shop_key}"}
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("support-app")

    @tracer.tool(name="lookup_order", description="Find an order")
    def lookup_order(order_id: str) -> dict[str, str]:
        return {"order_id": order_id, "status": "delivered"}

    @tracer.agent
    def agent(question: str) -> str:
        with tracer.start_as_current_span("plan", openinference_span_kind="llm") as llm:
            llm.set_attributes(
                get_llm_output_message_attributes(
                    [
                        {
                            "role": "assistant",
                            "tool_calls": [
                                {
                                    "id": "call_7",
                                    "function": {"name": "lookup_order", "arguments": '{"order_id": "O-1"}'},
                                }
                            ],
                        }
                    ]
                )
            )
            llm.set_status(Status(StatusCode.OK))
        with tracer.start_as_current_span("lookup_order", openinference_span_kind="tool") as tool:
            tool.set_attribute("tool_call.id", "call_7")
            tool.set_attribute("tool.name", "lookup_order")
            lookup_order("O-1")  # the decorated function: a TOOL span of its own, nested
        return "Delivered."

    @tracer.chain
    def handle_ticket(question: str) -> str:
        return agent(question)

    assert handle_ticket("where is O-1?") == "Delivered."
    provider.shutdown()
    with httpx.Client(base_url=collector.url, headers={"authorization": f"Bearer {collector.shop_key}"}) as client:
        listed = client.get("/api/tickets").json()["tickets"]
        assert [t["task_type"] for t in listed] == ["refund"]
        trace_id = listed[0]["trace_id"]
        detail = client.get(f"/api/tickets/{trace_id}").json()
        tree = client.get(f"/api/traces/{trace_id}").json()
    decorated = [c for c in detail["tool_calls"] if c["call_id"] is None]
    assert [json.loads(c["arguments"]) for c in decorated] == [{"order_id": "O-1"}]
    assert [c["outcome"] for c in detail["tool_calls"]] == ["ok", "ok"]
    spans = {s["span_id"]: s["name"] for s in detail["spans"]}

    def walk(node: dict[str, object]) -> list[dict[str, object]]:
        children = node["children"]
        assert isinstance(children, list)
        return [node, *[n for c in children for n in walk(c)]]

    linked = [n for root in tree["roots"] for n in walk(root) if n["requested_by"]]
    assert [spans[str(n["requested_by"])] for n in linked] == ["plan"]
