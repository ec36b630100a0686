"""A tool traced by both sides is one tool call: a framework's own tool span (pydantic-ai, the OpenAI Agents SDK and
LangGraph through OpenInference) and the `@passhat.tool` span of the same call count once in the ticket's tool
calls, its trace tree (linked to the LLM call that asked for it) and its page; two calls of the same tool are two."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

import passhat
from passhat.collector.store import NormalizedSpan, ToolCallRow
from passhat.collector.store._tool_twins import merge_tool_twins
from passhat.collector.ui._trace import waterfall
from tests.collector.ingest.chat_completions_server import chat_completions_server
from tests.collector.server import Collector


@pytest.fixture
def sdk(collector: Collector) -> Iterator[passhat.Passhat]:
    instance = passhat.configure(
        endpoint=collector.url, api_key=collector.shop_key, capture_content=True, make_global=False
    )
    yield instance
    instance.shutdown()


def _nodes(tree: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    stack = list(tree["roots"])
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(node["children"])
    return out


def _counted(client: httpx.Client, ticket_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The ticket's tool calls, and the trace tree's nodes that carry a tool call."""
    detail = client.get(f"/api/tickets/{ticket_id}").json()
    tree = client.get(f"/api/tickets/{ticket_id}/trace").json()
    return detail["tool_calls"], [n for n in _nodes(tree) if n["tool_call"]]


def _tool_spans(client: httpx.Client, ticket_id: str) -> list[dict[str, Any]]:
    tree = client.get(f"/api/tickets/{ticket_id}/trace").json()
    return [n for n in _nodes(tree) if n["span"]["operation"] == "execute_tool"]


def test_pydantic_ai_tool_wrapped_by_passhat_is_counted_once(collector: Collector, sdk: passhat.Passhat) -> None:
    from pydantic_ai import Agent, InstrumentationSettings
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.models.test import TestModel

    settings = InstrumentationSettings(tracer_provider=sdk.tracer_provider)
    agent = Agent(TestModel(), name="support", capabilities=[Instrumentation(settings=settings)])

    @agent.tool_plain
    @sdk.tool(kind="lookup", empty=lambda result: "no order" in result)
    def lookup_order(order_id: str) -> str:
        """Look up an order by its id."""
        return f"no order {order_id}"

    with sdk.ticket("T-TWIN-1", task_type="order_status"):
        asyncio.run(agent.run("Where is my order?"))
    assert sdk.flush(30)
    with collector.client(collector.shop_key) as client:
        calls, nodes = _counted(client, "T-TWIN-1")
        spans = _tool_spans(client, "T-TWIN-1")
        trace_id = client.get("/api/tickets/T-TWIN-1").json()["attempts"][0]["trace_id"]
    assert len(spans) == 2  # both spans are kept as they came
    assert [c["tool_name"] for c in calls] == ["lookup_order"]
    [call] = calls
    assert call["outcome"] == "empty"  # passhat's rule (its `empty` predicate) wins over the framework's "ok"
    assert call["call_id"]  # the framework's tool-call id, which links it to the model's request
    [node] = nodes
    assert node["requested_by"] is not None
    [twin] = [n for n in spans if n["duplicate_of"]]
    assert twin["duplicate_of"] == node["span"]["span_id"] and twin["tool_call"] is None
    rows = waterfall(collector.store.get_trace("shop", trace_id))  # what the ticket page draws
    assert [row.name for row in rows if row.kind == "tool"] == ["execute_tool lookup_order"]


def test_two_calls_of_one_tool_are_two_calls(collector: Collector, sdk: passhat.Passhat) -> None:
    from pydantic_ai import Agent, InstrumentationSettings
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    def respond(messages: list[Any], info: Any) -> ModelResponse:
        returned = [p for m in messages for p in getattr(m, "parts", ()) if isinstance(p, ToolReturnPart)]
        if not returned:  # two calls of the same tool in one step: pydantic-ai runs them concurrently
            return ModelResponse(
                parts=[
                    ToolCallPart("lookup_order", {"order_id": "O-1"}, tool_call_id="c1"),
                    ToolCallPart("lookup_order", {"order_id": "O-2"}, tool_call_id="c2"),
                ]
            )
        return ModelResponse(parts=[TextPart("Both have shipped.")])

    settings = InstrumentationSettings(tracer_provider=sdk.tracer_provider)
    agent = Agent(FunctionModel(respond), name="support", capabilities=[Instrumentation(settings=settings)])

    @agent.tool_plain
    @sdk.tool
    async def lookup_order(order_id: str) -> str:
        await asyncio.sleep(0.01)
        return f"order {order_id} has shipped"

    with sdk.ticket("T-TWIN-2", task_type="order_status"):
        asyncio.run(agent.run("Where are O-1 and O-2?"))
    assert sdk.flush(30)
    with collector.client(collector.shop_key) as client:
        calls, nodes = _counted(client, "T-TWIN-2")
    assert sorted(c["call_id"] for c in calls) == ["c1", "c2"]
    assert sorted(c["arguments"] for c in calls) == ['{"order_id":"O-1"}', '{"order_id":"O-2"}']
    assert len(nodes) == 2


def test_openai_agents_sdk_tool_wrapped_by_passhat_is_counted_once(collector: Collector, sdk: passhat.Passhat) -> None:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_trace_processors
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    set_trace_processors([])
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=sdk.tracer_provider)
    try:

        @function_tool
        @sdk.tool
        def lookup_order(order_id: str) -> str:
            """Look up an order by its id."""
            return f"order {order_id} has shipped"

        with chat_completions_server({"order_id": "O-1"}) as (url, _), sdk.ticket("T-TWIN-3", task_type="orders"):
            client = AsyncOpenAI(base_url=url, api_key="x")
            model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client)
            agent = Agent(name="Support", instructions="Help.", tools=[lookup_order], model=model)
            asyncio.run(Runner.run(agent, "Where is order O-1?"))
        assert sdk.flush(30)
    finally:
        instrumentor.uninstrument()
    with collector.client(collector.shop_key) as http:
        calls, nodes = _counted(http, "T-TWIN-3")
    assert [c["tool_name"] for c in calls] == ["lookup_order"]
    assert len(nodes) == 1


def test_langgraph_tool_wrapped_by_passhat_is_counted_once(collector: Collector, sdk: passhat.Passhat) -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.tools import tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
    from openinference.instrumentation.langchain import LangChainInstrumentor

    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=sdk.tracer_provider)
    try:

        @sdk.tool
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
        graph.add_node("tools", ToolNode([tool(lookup_order)]))
        graph.add_edge(START, "agent")
        graph.add_conditional_edges("agent", tools_condition)
        graph.add_edge("tools", "agent")
        with sdk.ticket("T-TWIN-4", task_type="orders"):
            graph.compile(name="orders").invoke({"messages": [HumanMessage("Where is O-1?")]})
        assert sdk.flush(30)
    finally:
        instrumentor.uninstrument()
    with collector.client(collector.shop_key) as http:
        calls, nodes = _counted(http, "T-TWIN-4")
    assert [c["tool_name"] for c in calls] == ["lookup_order"]
    assert len(nodes) == 1


def _tool_span(span_id: str, parent: str | None, start: int, end: int, scope: str) -> NormalizedSpan:
    call = ToolCallRow("t", span_id, parent, "lookup", "ok", start, end)
    return NormalizedSpan(
        "t", span_id, parent, "execute_tool lookup", start, end, "execute_tool", scope_name=scope, tool_call=call
    )


def test_twins_need_two_instrumentations_and_one_span_inside_the_other() -> None:
    framework = _tool_span("a", None, 0, 100, "openinference")
    passhat_span = _tool_span("b", None, 10, 90, "passhat")  # not a child: the framework's span was not current
    later = _tool_span("c", None, 200, 300, "passhat")  # another call, after it
    recursive = _tool_span("d", "c", 210, 290, "passhat")  # the same instrumentation inside: a call of its own
    spans = [framework, passhat_span, later, recursive]
    assert merge_tool_twins(spans) == {"b": "a"}
    assert [s.span_id for s in spans if s.tool_call is not None] == ["a", "c", "d"]
    assert passhat_span.duplicate_of == "a"
