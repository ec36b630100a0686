"""A framework's spans under one `with passhat.ticket(...)`, through the real SDK and a real collector: one ticket,
found by its baggage on the framework's spans; `configure(set_global=True)` routes any library's spans."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import httpx

import passhat
from tests.collector.server import Collector


def test_framework_spans_inside_a_ticket_carry_its_baggage_and_make_one_ticket(collector: Collector) -> None:
    sdk = passhat.configure(
        endpoint=collector.url, api_key=collector.shop_key, service_name="shop-agent", make_global=False
    )
    framework = sdk.tracer_provider.get_tracer("pydantic-ai")  # what a framework asks the global provider for
    with (
        sdk.ticket("T-9", task_type="refund"),
        framework.start_as_current_span("invoke_agent triage", attributes={"gen_ai.operation.name": "invoke_agent"}),
        framework.start_as_current_span(
            "execute_tool lookup", attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"}
        ),
    ):
        pass
    assert sdk.flush(10)
    sdk.shutdown()
    with httpx.Client(base_url=collector.url, headers={"authorization": f"Bearer {collector.shop_key}"}) as client:
        listed = client.get("/api/tickets").json()["tickets"]
        assert [(t["ticket_id"], t["task_type"]) for t in listed] == [("T-9", "refund")]
        spans = client.get("/api/tickets/T-9").json()["spans"]
    by_name = {s["name"]: s["attributes"] for s in spans}
    assert by_name["invoke_agent triage"]["passhat.ticket.id"] == "T-9"
    assert by_name["execute_tool lookup"]["passhat.task_type"] == "refund"


def test_set_global_sends_spans_of_any_library_to_passhat(collector: Collector) -> None:
    # OpenTelemetry's global provider can be set once per process: a process of its own.
    script = textwrap.dedent(
        f"""
        import passhat
        from opentelemetry import trace

        passhat.configure(endpoint={collector.url!r}, api_key={collector.shop_key!r}, set_global=True)
        library = trace.get_tracer("some.framework")
        agent = {{"gen_ai.operation.name": "invoke_agent"}}
        with passhat.ticket("T-10", task_type="exchange"):
            with library.start_as_current_span("invoke_agent helper", attributes=agent):
                pass
        passhat.shutdown()
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    with httpx.Client(base_url=collector.url, headers={"authorization": f"Bearer {collector.shop_key}"}) as client:
        listed = client.get("/api/tickets").json()["tickets"]
        assert [(t["ticket_id"], t["task_type"]) for t in listed] == [("T-10", "exchange")]
        names = sorted(s["name"] for s in client.get("/api/tickets/T-10").json()["spans"])
    assert names == ["invoke_agent", "invoke_agent helper"]
