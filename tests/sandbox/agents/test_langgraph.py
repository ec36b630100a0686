"""A LangGraph agent replayed through the adapter, its model being LangChain's own offline fake chat model."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from passhat.sandbox import Sandbox, TrialContext, TrialResult, run_trial
from passhat.sandbox.agents import langgraph_agent
from tests.sandbox.retail_paths import CancelTicket, Turn, cancel_ticket


def scripted_model(turns: list[Turn]) -> GenericFakeChatModel:
    """LangChain's fake chat model answering with the script: each tool call as an AI message, then the text."""
    answers: list[AIMessage] = []
    for turn in turns:
        answers.extend(
            AIMessage("", tool_calls=[{"name": s.name, "args": s.arguments, "id": s.call_id}]) for s in turn.calls
        )
        answers.append(AIMessage(turn.text))
    return GenericFakeChatModel(messages=iter(answers))


def support_graph(model: Any, tools: list[Any]) -> Any:
    """The team's graph: the model, and a tool node it hands calls to until it answers (a ReAct loop)."""

    async def think(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", think)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "model")
    return graph.compile()


async def _trial(retail: Sandbox, ticket: CancelTicket, *, wrong_entity: bool) -> tuple[TrialResult, list[Any]]:
    model = scripted_model(ticket.turns(wrong_entity=wrong_entity))
    seen: list[Any] = []

    def build(tools: list[Any], context: TrialContext) -> Any:
        seen.extend(tools)
        return support_graph(model, tools)

    return await run_trial(retail, ticket.scenario, 0, langgraph_agent(build)), seen


async def test_a_langgraph_agent_solves_the_cancellation_with_the_trials_tools(retail: Sandbox) -> None:
    ticket = cancel_ticket(retail)
    result, tools = await _trial(retail, ticket, wrong_entity=False)
    assert result.passed, (result.record.verdict, result.record.infra_error)
    assert [c.name for c in result.record.tool_calls] == ["find_customer_by_email", "get_order", "cancel_pending_order"]
    assert {"find_customer_by_email", "get_order", "cancel_pending_order"} <= {t.name for t in tools}
    schema = next(t for t in tools if t.name == "cancel_pending_order").args
    assert {"order_id", "reason"} <= set(schema)  # the MCP tool's JSON schema, as LangChain reads it
    assert result.record.transcript[-1][0] == "customer"


async def test_a_langgraph_agent_cancelling_the_other_order_is_graded_wrong_entity(retail: Sandbox) -> None:
    ticket = cancel_ticket(retail)
    result, _ = await _trial(retail, ticket, wrong_entity=True)
    assert not result.passed
    assert result.record.tool_calls[-1].arguments["order_id"] == ticket.sibling
    assert result.signature is not None and result.signature.label == "wrong_entity"


async def test_the_tool_result_reaches_the_graph_as_a_tool_message(retail: Sandbox) -> None:
    ticket = cancel_ticket(retail)
    model = scripted_model(ticket.turns())
    graphs: list[Any] = []

    def build(tools: list[Any], context: TrialContext) -> Any:
        graphs.append(support_graph(model, tools))
        return graphs[-1]

    adapter_factory = langgraph_agent(build)
    adapters: list[Any] = []

    def keep(context: TrialContext) -> Any:
        adapters.append(adapter_factory(context))
        return adapters[-1]

    result = await run_trial(retail, ticket.scenario, 0, keep)
    assert result.passed
    returned = [m for m in adapters[0].messages if isinstance(m, ToolMessage)]
    assert returned[0].tool_call_id == "call_1"
    assert json.loads(str(returned[0].content)) == {"customer_id": ticket.scenario.intent["customer_id"]}
    assert adapters[0].messages[0].content == retail.domain.policy  # the policy is the system message


async def test_the_team_s_compiled_graph_with_its_own_tools_runs_the_trial_s_in_their_place(retail: Sandbox) -> None:
    from langchain_core.tools import tool

    production: list[str] = []

    @tool
    def find_customer_by_email(email: str) -> str:
        """The team's own lookup, against production."""
        production.append(email)
        return "production"

    @tool
    def get_order(order_id: str) -> str:
        """The team's own lookup, against production."""
        production.append(order_id)
        return "production"

    @tool
    def cancel_pending_order(order_id: str, reason: str) -> str:
        """The team's own write, against production."""
        production.append(order_id)
        return "production"

    ticket = cancel_ticket(retail)
    graph = support_graph(
        scripted_model(ticket.turns()), [find_customer_by_email, get_order, cancel_pending_order]
    )  # compiled, as the team runs it in production
    result = await run_trial(retail, ticket.scenario, 0, langgraph_agent(graph))
    assert result.record.infra_error is None and result.passed, result.record.verdict
    assert production == []
    assert [c.name for c in result.record.tool_calls] == ["find_customer_by_email", "get_order", "cancel_pending_order"]
