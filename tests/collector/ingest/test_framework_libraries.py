"""Real third-party instrumentation against a local collector over HTTP OTLP: pydantic-ai (its TestModel and its
own OpenTelemetry instrumentation), the OpenAI Agents SDK (through OpenInference's processor), LangGraph
(through OpenInference's LangChain instrumentor) and OpenLLMetry (`opentelemetry-instrumentation-openai`).
Models are offline: pydantic-ai's TestModel, langchain-core's fake chat model, and a local Chat Completions
server the real `openai` client talks to. Each trace must make exactly one ticket of the right task type, with
its tool calls linked to the LLM call that asked for them.

Every library sends its spans through passhat's own tracer provider (`configure(make_global=False)`), the way
`configure(set_global=True)` routes them in an app."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

import passhat
from passhat.collector import CollectorSettings
from passhat.collector.store import Store
from tests.collector.ingest.chat_completions_server import chat_completions_server
from tests.collector.server import Collector, new_key, running_collector


@pytest.fixture
def sdk(collector: Collector) -> Iterator[passhat.Passhat]:
    instance = passhat.configure(
        endpoint=collector.url,
        api_key=collector.shop_key,
        service_name="shop-agent",
        capture_content=True,
        make_global=False,
    )
    yield instance
    instance.shutdown()


def _flushed(sdk: passhat.Passhat) -> None:
    assert sdk.flush(30)


def _tree(client: httpx.Client, trace_id: str) -> dict[str, Any]:
    response = client.get(f"/api/traces/{trace_id}")
    assert response.status_code == 200, response.text
    tree: dict[str, Any] = response.json()
    return tree


def _nodes(tree: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    stack = list(tree["roots"])
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(node["children"])
    return out


def _tool_links(tree: dict[str, Any]) -> list[tuple[str, str | None]]:
    """(tool name, the operation and name of the span that asked for it) of each tool call, by start time."""
    nodes = {n["span"]["span_id"]: n for n in _nodes(tree)}
    tools = sorted((n for n in nodes.values() if n["tool_call"]), key=lambda n: n["span"]["start_time"])
    links = []
    for node in tools:
        asker = nodes.get(node["requested_by"] or "")
        links.append((node["tool_call"]["tool_name"], asker["span"]["operation"] if asker else None))
    return links


def _tickets(client: httpx.Client) -> list[dict[str, Any]]:
    tickets: list[dict[str, Any]] = client.get("/api/tickets").json()["tickets"]
    return tickets


# --- pydantic-ai: TestModel, built-in OpenTelemetry instrumentation -------------------------------------------


def _pydantic_agent(sdk: passhat.Passhat) -> Any:
    from pydantic_ai import Agent, InstrumentationSettings
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.models.test import TestModel

    settings = InstrumentationSettings(tracer_provider=sdk.tracer_provider, include_content=True)
    agent = Agent(TestModel(), name="support", capabilities=[Instrumentation(settings=settings)])

    @agent.tool_plain
    def lookup_order(order_id: str) -> str:
        """Look up an order by its id."""
        return f"order {order_id} has shipped"

    return agent


def test_pydantic_ai_agent_is_one_ticket_typed_by_its_name_with_linked_tool_calls(
    collector: Collector, sdk: passhat.Passhat
) -> None:
    result = asyncio.run(_pydantic_agent(sdk).run("Where is my order?"))  # a loop of its own, closed
    assert "shipped" in result.output
    _flushed(sdk)
    with collector.client(collector.shop_key) as client:
        [ticket] = _tickets(client)
        assert ticket["task_type"] == "support"
        assert ticket["ticket_id"] == ticket["trace_id"]  # no passhat ticket around it: keyed by its trace
        tree = _tree(client, ticket["trace_id"])
    assert _tool_links(tree) == [("lookup_order", "chat")]
    assert tree["usage"]["model_calls"] == 2
    assert tree["usage"]["input_tokens"] > 0


def test_pydantic_ai_agent_inside_a_passhat_ticket_is_that_one_ticket(
    collector: Collector, sdk: passhat.Passhat
) -> None:
    agent = _pydantic_agent(sdk)
    with sdk.ticket("T-PAI-1", task_type="order_status"):
        asyncio.run(agent.run("Where is my order?"))
    _flushed(sdk)
    with collector.client(collector.shop_key) as client:
        assert [(t["ticket_id"], t["task_type"]) for t in _tickets(client)] == [("T-PAI-1", "order_status")]
        tree = client.get("/api/tickets/T-PAI-1/trace").json()
        traffic = client.get("/api/traffic", params={"days": 2}).json()["traffic"]
    assert [(row["task_type"], row["tickets"]) for row in traffic] == [("order_status", 1)]
    [root] = tree["roots"]
    assert root["ticket"]["ticket_id"] == "T-PAI-1"
    assert _tool_links(tree) == [("lookup_order", "chat")]


# --- the OpenAI Agents SDK, through OpenInference's tracing processor ------------------------------------------


@pytest.fixture
def mapped_collector(sql_store: Store) -> Iterator[Collector]:
    """The Agents SDK names every run "Agent workflow": the `task_types` setting maps it to a task type."""
    key = new_key(sql_store, "shop")
    settings = CollectorSettings(key_cache_s=0.0, task_types={"Agent workflow": "order_status"})
    with running_collector(sql_store, settings) as running:
        yield Collector(running.url, sql_store, key, key)


def test_openai_agents_sdk_run_is_one_ticket_mapped_to_its_task_type(mapped_collector: Collector) -> None:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_trace_processors
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    # The SDK's own processor exports to OpenAI's tracing service when OPENAI_API_KEY is set: only OpenInference's
    # processor (OpenTelemetry spans, to passhat) is kept.
    set_trace_processors([])
    sdk = passhat.configure(endpoint=mapped_collector.url, api_key=mapped_collector.shop_key, make_global=False)
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=sdk.tracer_provider)
    try:

        @function_tool
        def lookup_order(order_id: str) -> str:
            """Look up an order by its id."""
            return f"order {order_id} has shipped"

        with chat_completions_server({"order_id": "O-1"}) as (url, requests):
            model = OpenAIChatCompletionsModel(
                model="gpt-4o-mini", openai_client=AsyncOpenAI(base_url=url, api_key="x")
            )
            agent = Agent(name="Support", instructions="Help the customer.", tools=[lookup_order], model=model)
            result = asyncio.run(Runner.run(agent, "Where is order O-1?"))
        assert result.final_output == "Your order has shipped."
        assert len(requests) == 2
        _flushed(sdk)
    finally:
        instrumentor.uninstrument()
        sdk.shutdown()
    with mapped_collector.client(mapped_collector.shop_key) as client:
        [ticket] = _tickets(client)
        assert ticket["task_type"] == "order_status"
        tree = _tree(client, ticket["trace_id"])
    # The SDK's tool span carries no tool-call id: linked by its name to the generation that asked for it.
    assert _tool_links(tree) == [("lookup_order", "chat")]
    assert [n["tool_call"]["arguments"] for n in _nodes(tree) if n["tool_call"]] == ['{"order_id": "O-1"}']


# --- LangGraph, through OpenInference's LangChain instrumentor ------------------------------------------------


def test_langgraph_graph_is_one_ticket_with_its_tool_call_linked(collector: Collector, sdk: passhat.Passhat) -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.tools import tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
    from openinference.instrumentation.langchain import LangChainInstrumentor

    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=sdk.tracer_provider)
    try:

        @tool
        def lookup_order(order_id: str) -> str:
            """Look up an order by its id."""
            return f"order {order_id} has shipped"

        call = {"name": "lookup_order", "args": {"order_id": "O-1"}, "id": "call_lg_1", "type": "tool_call"}
        model = GenericFakeChatModel(
            messages=iter([AIMessage(content="", tool_calls=[call]), AIMessage(content="It has shipped.")])
        )

        def agent(state: MessagesState) -> dict[str, Any]:
            return {"messages": [model.invoke(state["messages"])]}

        graph = StateGraph(MessagesState)
        graph.add_node("agent", agent)
        graph.add_node("tools", ToolNode([lookup_order]))
        graph.add_edge(START, "agent")
        graph.add_conditional_edges("agent", tools_condition)
        graph.add_edge("tools", "agent")
        out = graph.compile(name="order_status").invoke({"messages": [HumanMessage("Where is O-1?")]})
        assert out["messages"][-1].content == "It has shipped."
        _flushed(sdk)
    finally:
        instrumentor.uninstrument()
    with collector.client(collector.shop_key) as client:
        [ticket] = _tickets(client)  # the graph's CHAIN root; its `agent` node (an AGENT span) is a sub-agent
        assert ticket["task_type"] == "order_status"
        tree = _tree(client, ticket["trace_id"])
    # The model runs in the `agent` node, the tool in the `tools` node: linked across them, by name and order.
    assert _tool_links(tree) == [("lookup_order", "chat")]
    assert tree["usage"]["model_calls"] == 2


# --- OpenLLMetry: opentelemetry-instrumentation-openai on the real client -------------------------------------

# Its module defines a pydantic model with a class-based Config, which pydantic 2 warns about on import.
_OPENLLMETRY_IMPORT = pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20")


@_OPENLLMETRY_IMPORT
def test_openllmetry_chat_calls_inside_a_passhat_ticket_link_the_tool_they_asked_for(
    collector: Collector, sdk: passhat.Passhat
) -> None:
    from openai import OpenAI
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=sdk.tracer_provider)
    try:

        @sdk.tool
        def lookup_order(order_id: str) -> str:
            """Look up an order by its id."""
            return f"order {order_id} has shipped"

        tools: list[Any] = [
            {
                "type": "function",
                "function": {
                    "name": "lookup_order",
                    "description": "Look up an order by its id.",
                    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
                },
            }
        ]
        with chat_completions_server({"order_id": "O-7"}) as (url, _), sdk.ticket("T-OLL-1", task_type="orders"):
            llm = OpenAI(base_url=url, api_key="x")
            messages: list[Any] = [{"role": "user", "content": "Where is O-7?"}]
            first = llm.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools)
            [requested] = first.choices[0].message.tool_calls or []
            messages.append(first.choices[0].message.model_dump(exclude_none=True))
            messages.append({"role": "tool", "tool_call_id": requested.id, "content": lookup_order(order_id="O-7")})
            final = llm.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools)
        assert final.choices[0].message.content == "Your order has shipped."
        _flushed(sdk)
    finally:
        instrumentor.uninstrument()
    with collector.client(collector.shop_key) as client:
        assert [(t["ticket_id"], t["task_type"]) for t in _tickets(client)] == [("T-OLL-1", "orders")]
        tree = client.get("/api/tickets/T-OLL-1/trace").json()
    assert _tool_links(tree) == [("lookup_order", "chat")]
    assert tree["usage"]["model_calls"] == 2
    assert tree["usage"]["input_tokens"] == 41 + 42  # the server's prompt_tokens, each call once


@_OPENLLMETRY_IMPORT
def test_openllmetry_llm_only_app_in_root_ticket_mode_is_one_ticket_per_call(sql_store: Store) -> None:
    from openai import OpenAI
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    key = new_key(sql_store, "shop")
    with running_collector(sql_store, CollectorSettings(key_cache_s=0.0, root_tickets=True)) as running:
        sdk = passhat.configure(endpoint=running.url, api_key=key, make_global=False)
        instrumentor = OpenAIInstrumentor()
        instrumentor.instrument(tracer_provider=sdk.tracer_provider)
        try:
            with chat_completions_server({}) as (url, _):
                llm = OpenAI(base_url=url, api_key="x")
                for question in ("Hello?", "Anyone there?"):
                    llm.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": question}])
            _flushed(sdk)
        finally:
            instrumentor.uninstrument()
            sdk.shutdown()
        with httpx.Client(base_url=running.url, headers={"authorization": f"Bearer {key}"}) as client:
            tickets = _tickets(client)
    assert len(tickets) == 2
    assert {t["task_type"] for t in tickets} == {"openai.chat"}
