"""Every common agent trace shape, sent over real HTTP as OTLP protobuf and JSON: one ticket per trace, the right
task type, tool calls linked to the LLM call that asked for them (docs/sdk.md, "What the collector reads")."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from passhat.collector import CollectorSettings
from passhat.collector.store import Store
from tests.collector.ingest.otlp_payloads import request, span, to_otlp_json
from tests.collector.server import Collector, new_key, running_collector


@pytest.fixture(params=["protobuf", "json"])
def encoding(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def collector_settings() -> CollectorSettings:
    # The OpenAI Agents SDK names every run "Agent workflow" unless told otherwise: mapped to a task type.
    return CollectorSettings(key_cache_s=0.0, task_types={"Agent workflow": "refund"})


def send(client: httpx.Client, spans: list[Any], encoding: str) -> None:
    body = request(spans)
    if encoding == "protobuf":
        response = client.post(
            "/v1/traces", content=body.SerializeToString(), headers={"content-type": "application/x-protobuf"}
        )
    else:
        response = client.post(
            "/v1/traces", content=json.dumps(to_otlp_json(body)), headers={"content-type": "application/json"}
        )
    assert response.status_code == 200, response.text


class Trace:
    """Spans of one trace, started 1 ms apart in the order they are added, exported children first."""

    def __init__(self) -> None:
        self.trace_id = os.urandom(16)
        self.start = time.time_ns() - 10_000_000_000
        self.spans: list[Any] = []

    def add(self, name: str, attributes: dict[str, Any], parent: bytes = b"", **kw: Any) -> bytes:
        span_id = os.urandom(8)
        start = self.start + len(self.spans) * 1_000_000
        self.spans.append(
            span(self.trace_id, span_id, name, attributes, parent=parent, start_ns=start, duration_ns=10**8, **kw)
        )
        return span_id

    @property
    def hex(self) -> str:
        return self.trace_id.hex()

    def exported(self) -> list[Any]:
        return list(reversed(self.spans))  # a BatchSpanProcessor exports a parent after its children


def tickets(client: httpx.Client) -> list[tuple[str, str]]:
    return [(t["ticket_id"], t["task_type"]) for t in client.get("/api/tickets").json()["tickets"]]


def tool_links(client: httpx.Client, trace_id: str) -> dict[str, tuple[str | None, str | None]]:
    """Each tool call of the trace: its name -> (its arguments, the name of the LLM span that asked for it)."""
    tree = client.get(f"/api/traces/{trace_id}").json()
    nodes: dict[str, Any] = {}

    def walk(node: dict[str, Any]) -> None:
        nodes[node["span"]["span_id"]] = node
        for child in node["children"]:
            walk(child)

    for root in tree["roots"]:
        walk(root)
    links = {}
    for node in nodes.values():
        call = node["tool_call"]
        if call is not None:
            asker = nodes[node["requested_by"]]["span"]["name"] if node["requested_by"] else None
            links[call["tool_name"]] = (call["arguments"], asker)
    return links


def test_a_passhat_ticket_around_a_framework_agent_is_one_ticket(collector: Collector, encoding: str) -> None:
    trace = Trace()
    root = trace.add(
        "invoke_agent",
        {"gen_ai.operation.name": "invoke_agent", "passhat.ticket.id": "T-1", "passhat.task_type": "refund"},
    )
    agent = trace.add(
        "invoke_agent triage", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage"}, root
    )
    trace.add("invoke_agent refunds", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "refunds"}, agent)
    with collector.client(collector.shop_key) as client:
        send(client, trace.exported(), encoding)
        assert tickets(client) == [("T-1", "refund")]
        traffic = client.get("/api/traffic", params={"days": 1}).json()["traffic"]
        assert [(t["task_type"], t["tickets"]) for t in traffic] == [("refund", 1)]


def test_genai_workflow_root_is_the_ticket_and_its_tool_calls_link_to_the_chat(
    collector: Collector, encoding: str
) -> None:
    trace = Trace()
    workflow = trace.add(
        "invoke_workflow support_pipeline",
        {"gen_ai.operation.name": "invoke_workflow", "gen_ai.agent.name": "support_pipeline"},
    )
    agent = trace.add("invoke_agent triage", {"gen_ai.operation.name": "invoke_agent"}, workflow)
    output = [
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_1", "name": "lookup", "arguments": {}}]}
    ]
    trace.add(
        "generate_content gemini",
        {"gen_ai.operation.name": "generate_content", "gen_ai.output.messages": json.dumps(output)},
        agent,
    )
    trace.add(
        "execute_tool lookup",
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup", "gen_ai.tool.call.id": "call_1"},
        agent,
    )
    trace.add("embeddings", {"gen_ai.operation.name": "embeddings"}, agent)
    with collector.client(collector.shop_key) as client:
        send(client, trace.exported(), encoding)
        assert tickets(client) == [(trace.hex, "support_pipeline")]
        assert tool_links(client, trace.hex) == {"lookup": (None, "generate_content gemini")}
        operations = [s["operation"] for s in client.get(f"/api/tickets/{trace.hex}").json()["spans"]]
        assert sorted(operations) == [
            "embeddings",
            "execute_tool",
            "generate_content",
            "invoke_agent",
            "invoke_workflow",
        ]


def test_openai_agents_shape_via_openinference_chain_root_mapped_to_a_task_type(
    collector: Collector, encoding: str
) -> None:
    trace = Trace()
    chain = trace.add("Agent workflow", {"openinference.span.kind": "CHAIN"})
    agent = trace.add("Support agent", {"openinference.span.kind": "AGENT", "agent.name": "Support agent"}, chain)
    trace.add(
        "response",
        {
            "openinference.span.kind": "LLM",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_a",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "refund",
        },
        agent,
    )
    trace.add(
        "refund",
        {"openinference.span.kind": "TOOL", "tool.name": "refund", "tool_call.id": "call_a", "input.value": '{"o": 1}'},
        agent,
    )
    with collector.client(collector.shop_key) as client:
        send(client, trace.exported(), encoding)
        assert tickets(client) == [(trace.hex, "refund")]
        assert tool_links(client, trace.hex) == {"refund": ('{"o": 1}', "response")}


def test_openllmetry_workflow_root_unwraps_traceloop_arguments_and_links_tool_calls(
    collector: Collector, encoding: str
) -> None:
    trace = Trace()
    workflow = trace.add(
        "support.workflow",
        {"traceloop.span.kind": "workflow", "traceloop.entity.name": "support", "traceloop.workflow.name": "support"},
    )
    task = trace.add("plan.task", {"traceloop.span.kind": "task", "traceloop.entity.name": "plan"}, workflow)
    trace.add(
        "openai.chat",
        {
            "llm.request.type": "chat",
            "gen_ai.completion.0.tool_calls.0.id": "call_z",
            "gen_ai.completion.0.role": "assistant",
        },
        task,
    )
    trace.add(
        "lookup.tool",
        {
            "traceloop.span.kind": "tool",
            "traceloop.entity.name": "lookup",
            "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"order_id": "O-1"}}),
            "gen_ai.tool.call.id": "call_z",
        },
        task,
    )
    with collector.client(collector.shop_key) as client:
        send(client, trace.exported(), encoding)
        assert tickets(client) == [(trace.hex, "support")]
        assert tool_links(client, trace.hex) == {"lookup": ('{"order_id":"O-1"}', "openai.chat")}


def test_a_root_traceloop_task_is_a_ticket_and_keeps_its_tool_call(collector: Collector, encoding: str) -> None:
    trace = Trace()
    task = trace.add("answer.task", {"traceloop.span.kind": "task", "traceloop.entity.name": "answer"})
    trace.add("search.tool", {"traceloop.span.kind": "tool", "traceloop.entity.name": "search"}, task)
    with collector.client(collector.shop_key) as client:
        send(client, trace.exported(), encoding)
        assert tickets(client) == [(trace.hex, "answer")]
        detail = client.get(f"/api/tickets/{trace.hex}").json()
        assert [c["tool_name"] for c in detail["tool_calls"]] == ["search"]


def test_framework_spans_carrying_the_ticket_baggage_make_that_ticket(collector: Collector, encoding: str) -> None:
    # Another service's spans: passhat.ticket() ran elsewhere, its baggage came along and was copied onto them.
    trace = Trace()
    baggage = {"passhat.ticket.id": "T-77", "passhat.task_type": "exchange"}
    server = trace.add("POST /agent", {"http.request.method": "POST", **baggage})
    agent = trace.add("invoke_agent", {"gen_ai.operation.name": "invoke_agent", **baggage}, server)
    trace.add(
        "execute_tool swap", {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "swap", **baggage}, agent
    )
    with collector.client(collector.shop_key) as client:
        send(client, trace.exported(), encoding)
        assert tickets(client) == [("T-77", "exchange")]
        detail = client.get("/api/tickets/T-77").json()
        assert [c["tool_name"] for c in detail["tool_calls"]] == ["swap"]


def llm_only_trace() -> Trace:
    trace = Trace()
    trace.add("chat gpt-4o", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"})
    return trace


def test_an_llm_only_trace_is_stored_and_queryable_as_a_tree_without_a_ticket(
    collector: Collector, encoding: str
) -> None:
    trace = llm_only_trace()
    with collector.client(collector.shop_key) as client:
        send(client, trace.exported(), encoding)
        assert tickets(client) == []
        tree = client.get(f"/api/traces/{trace.hex}").json()
        assert (tree["span_count"], tree["ticket"], tree["roots"][0]["span"]["operation"]) == (1, None, "chat")


@pytest.fixture
def root_ticket_collector(sql_store: Store) -> Iterator[Collector]:
    key = new_key(sql_store, "shop")
    settings = CollectorSettings(key_cache_s=0.0, root_tickets=True)
    with running_collector(sql_store, settings) as running:
        yield Collector(running.url, sql_store, key, key)


def test_in_root_ticket_mode_each_root_span_of_an_llm_only_app_is_a_ticket(
    root_ticket_collector: Collector, encoding: str
) -> None:
    trace = llm_only_trace()
    with root_ticket_collector.client(root_ticket_collector.shop_key) as client:
        send(client, trace.exported(), encoding)
        assert tickets(client) == [(trace.hex, "chat gpt-4o")]


def test_a_tickets_trace_is_its_latest_attempt_as_a_tree(collector: Collector) -> None:
    trace = Trace()
    root = trace.add("invoke_agent", {"gen_ai.operation.name": "invoke_agent", "passhat.ticket.id": "T-3"})
    trace.add("execute_tool a", {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "a"}, root)
    with collector.client(collector.shop_key) as client:
        send(client, trace.exported(), "protobuf")
        tree = client.get("/api/tickets/T-3/trace").json()
        assert tree["ticket"]["ticket_id"] == "T-3"
        [top] = tree["roots"]
        assert [c["tool_call"]["tool_name"] for c in top["children"]] == ["a"]
        assert client.get("/api/tickets/T-404/trace").status_code == 404
        assert client.get(f"/api/traces/{'0' * 31}1").status_code == 404


def test_ticket_listing_filters_by_time_and_outcome(collector: Collector) -> None:
    trace = Trace()
    trace.add(
        "invoke_agent",
        {"gen_ai.operation.name": "invoke_agent", "passhat.ticket.id": "T-4", "passhat.ticket.outcome": "escalated"},
    )
    with collector.client(collector.shop_key) as client:
        send(client, trace.exported(), "protobuf")

        def listed(**params: str) -> list[str]:
            return [t["ticket_id"] for t in client.get("/api/tickets", params=params).json()["tickets"]]

        assert listed(outcome="escalated") == ["T-4"]
        assert listed(outcome="resolved") == []
        assert listed(until="2000-01-01T00:00:00Z") == []
        assert listed(since="2000-01-01T00:00:00Z", until="2999-01-01T00:00:00Z") == ["T-4"]


def test_an_llm_call_traced_twice_is_marked_a_duplicate_and_tools_link_to_the_outer_span(
    collector: Collector, encoding: str
) -> None:
    trace = Trace()
    root = trace.add("invoke_agent", {"gen_ai.operation.name": "invoke_agent", "passhat.ticket.id": "T-8"})
    ours = trace.add(
        "chat claude",
        {
            "gen_ai.operation.name": "chat",
            "passhat.chat.tool_call_ids": ["toolu_1"],
            "gen_ai.usage.input_tokens": 120,
            "gen_ai.usage.output_tokens": 30,
        },
        root,
    )
    theirs = trace.add(
        "anthropic.messages.create",
        {
            "openinference.span.kind": "LLM",
            "llm.output_messages.0.message.tool_calls.0.tool_call.id": "toolu_1",
            "llm.token_count.prompt": 120,
            "llm.token_count.completion": 30,
            "llm.token_count.prompt_details.cache_read": 64,  # only this instrumentation reports it
        },
        ours,
    )
    trace.add(
        "execute_tool refund",
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "refund", "gen_ai.tool.call.id": "toolu_1"},
        root,
    )
    with collector.client(collector.shop_key) as client:
        send(client, trace.exported(), encoding)
        tree = client.get(f"/api/traces/{trace.hex}").json()
        detail = client.get("/api/tickets/T-8").json()
        traffic = client.get("/api/traffic", params={"days": 2}).json()["traffic"]
    [top] = tree["roots"]
    chat, tool = top["children"]
    assert (chat["duplicate_of"], chat["children"][0]["duplicate_of"]) == (None, ours.hex())
    assert chat["children"][0]["span"]["span_id"] == theirs.hex()
    assert tool["requested_by"] == ours.hex()
    # Both spans are kept, the call counts once: in the trace's and the ticket's usage, and in the traffic.
    once = {
        "model_calls": 1,
        "duplicate_spans": 1,
        "input_tokens": 120,
        "output_tokens": 30,
        "cache_read_input_tokens": 64,
        "cache_creation_input_tokens": None,
    }
    assert tree["span_count"] == 4
    assert tree["usage"] == once
    assert detail["usage"] == once
    assert sum(row["tickets"] for row in traffic) == 1


def test_two_separate_llm_calls_both_count(collector: Collector) -> None:
    trace = Trace()
    root = trace.add("invoke_agent", {"gen_ai.operation.name": "invoke_agent"})
    for _ in range(2):
        trace.add("chat", {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 10}, root)
    with collector.client(collector.shop_key) as client:
        send(client, trace.exported(), "protobuf")
        usage = client.get(f"/api/traces/{trace.hex}").json()["usage"]
    assert (usage["model_calls"], usage["duplicate_spans"], usage["input_tokens"]) == (2, 0, 20)


def test_in_root_ticket_mode_an_llm_call_traced_twice_is_one_ticket(
    root_ticket_collector: Collector, encoding: str
) -> None:
    trace = Trace()
    outer = trace.add("chat gpt-4o", {"gen_ai.operation.name": "chat"})
    trace.add("openai.chat", {"llm.request.type": "chat"}, outer)
    with root_ticket_collector.client(root_ticket_collector.shop_key) as client:
        send(client, trace.exported(), encoding)
        assert tickets(client) == [(trace.hex, "chat gpt-4o")]
        assert sum(row["tickets"] for row in client.get("/api/traffic").json()["traffic"]) == 1


def test_openllmetry_tool_spans_without_ids_link_to_their_llm_call_by_name_and_order(
    collector: Collector, encoding: str
) -> None:
    trace = Trace()
    workflow = trace.add("support.workflow", {"traceloop.span.kind": "workflow", "traceloop.entity.name": "support"})
    first = trace.add(
        "openai.chat",
        {
            "llm.request.type": "chat",
            "gen_ai.completion.0.tool_calls.0.name": "lookup",
            "gen_ai.completion.0.tool_calls.0.id": "call_a",
            "gen_ai.completion.0.tool_calls.1.name": "lookup",
            "gen_ai.completion.0.tool_calls.1.id": "call_b",
        },
        workflow,
    )
    tool = {"traceloop.span.kind": "tool"}
    lookups = [trace.add("lookup.tool", {**tool, "traceloop.entity.name": "lookup"}, workflow) for _ in range(2)]
    second = trace.add(
        "openai.chat",
        {
            "llm.request.type": "chat",
            "gen_ai.completion.0.tool_calls.0.name": "refund",
            "gen_ai.completion.0.tool_calls.1.name": "lookup",
        },
        workflow,
    )
    refund = trace.add("refund.tool", {**tool, "traceloop.entity.name": "refund"}, workflow)
    third_lookup = trace.add("lookup.tool", {**tool, "traceloop.entity.name": "lookup"}, workflow)
    stray = trace.add("audit.tool", {**tool, "traceloop.entity.name": "audit"}, workflow)  # nobody asked for it
    with collector.client(collector.shop_key) as client:
        send(client, trace.exported(), encoding)
        tree = client.get(f"/api/traces/{trace.hex}").json()
    [top] = tree["roots"]
    asked = {child["span"]["span_id"]: child["requested_by"] for child in top["children"]}
    assert [asked[span.hex()] for span in lookups] == [first.hex(), first.hex()]
    assert asked[refund.hex()] == second.hex()
    assert asked[third_lookup.hex()] == second.hex()
    assert asked[stray.hex()] is None
