"""A ticket opened inside another, through the real SDK and a real collector: two tickets, each with its tool calls
(before, the inner one was a span of the outer's trace, and the collector, one ticket per trace, kept the outer)."""

from __future__ import annotations

import httpx

import passhat
from tests.collector.server import Collector


def test_a_ticket_opened_inside_another_is_counted_with_its_own_tool_calls(collector: Collector) -> None:
    sdk = passhat.configure(
        endpoint=collector.url,
        api_key=collector.shop_key,
        service_name="shop-agent",
        capture_content=True,
        make_global=False,
    )

    @sdk.tool
    def lookup(order_id: str) -> dict[str, str]:
        return {"order_id": order_id}

    with sdk.ticket("T-1", task_type="refund"):
        lookup("O-1")
        with sdk.ticket("T-2", task_type="exchange"):
            lookup("O-2")
            lookup("O-3")
    assert sdk.flush(10)
    sdk.shutdown()
    with httpx.Client(base_url=collector.url, headers={"authorization": f"Bearer {collector.shop_key}"}) as client:
        listed = client.get("/api/tickets").json()["tickets"]
        assert sorted((t["ticket_id"], t["task_type"]) for t in listed) == [("T-1", "refund"), ("T-2", "exchange")]
        tools = {
            ticket_id: sorted(
                span["attributes"]["gen_ai.tool.call.arguments"]
                for span in client.get(f"/api/tickets/{ticket_id}").json()["spans"]
                if span["name"] == "execute_tool lookup"
            )
            for ticket_id in ("T-1", "T-2")
        }
    assert tools == {"T-1": ['{"order_id":"O-1"}'], "T-2": ['{"order_id":"O-2"}', '{"order_id":"O-3"}']}
