"""A LangGraph agent replayed through the adapter, its model being LangChain's own offline fake chat model."""

from __future__ import annotations

import dataclasses
import itertools
import json
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, ToolRuntime, tools_condition
from langgraph.runtime import Runtime
from langgraph.types import Command
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sqlalchemy import Engine, text

import passhat
from passhat.sandbox import Sandbox, ScriptedCustomer, ToolResult, TrialContext, TrialResult, run_trial
from passhat.sandbox.agents import langgraph_agent
from passhat.sandbox.agents._langgraph import langchain_tools
from tests.sandbox.retail_paths import (
    REFUSED,
    CancelTicket,
    SaysNo,
    Turn,
    assert_asked_then_cancelled,
    assert_refused_and_not_cancelled,
    cancel_ticket,
)


@dataclasses.dataclass
class Desk:
    """What the team's own tools reach their backend through (LangGraph's runtime context)."""

    engine: Engine


def scripted_model(turns: list[Turn], first: tuple[AIMessage, ...] = ()) -> GenericFakeChatModel:
    """LangChain's fake chat model answering with the script: each tool call as an AI message, then the text
    (after ``first``, answers of the team's own)."""
    answers: list[AIMessage] = list(first)
    for turn in turns:
        answers.extend(
            AIMessage("", tool_calls=[{"name": s.name, "args": s.arguments, "id": s.call_id}]) for s in turn.calls
        )
        answers.append(AIMessage(turn.text))
    return GenericFakeChatModel(messages=iter(answers))


def support_graph(model: Any, tools: list[Any], **compile_with: Any) -> Any:
    """The team's graph: the model, and a tool node it hands calls to until it answers (a ReAct loop); compiled
    ``compile_with`` (a checkpointer; a store, where the model's node notes each answer in its long-term memory)."""

    async def think(state: MessagesState, runtime: Runtime[Any]) -> dict[str, Any]:
        answer = await model.ainvoke(state["messages"])
        if runtime.store is not None:
            await runtime.store.aput(("answers",), str(len(state["messages"])), {"text": str(answer.content)})
        return {"messages": [answer]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", think)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "model")
    return graph.compile(**compile_with)


def production_tools(production: list[str]) -> dict[str, Any]:
    """The team's own tools, against production: each call is recorded in ``production``."""
    from langchain_core.tools import tool

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

    return {each.name: each for each in (find_customer_by_email, get_order, cancel_pending_order)}


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
    production: list[str] = []
    ticket = cancel_ticket(retail)
    graph = support_graph(
        scripted_model(ticket.turns()), list(production_tools(production).values())
    )  # compiled, as the team runs it in production
    result = await run_trial(retail, ticket.scenario, 0, langgraph_agent(graph))
    assert result.record.infra_error is None and result.passed, result.record.verdict
    assert production == []
    assert [c.name for c in result.record.tool_calls] == ["find_customer_by_email", "get_order", "cancel_pending_order"]


async def test_the_runtime_context_binds_the_graph_s_own_tools_to_the_trial_s_database(retail: Sandbox) -> None:
    """A tool the domain does not serve stays in the team's graph; `context=` hands it the trial's database through
    LangGraph's runtime context (a `ToolRuntime` parameter), as pydantic-ai's `deps` do."""
    from langchain_core.tools import tool

    counted: list[int] = []

    @tool
    def count_pending(runtime: ToolRuntime[Desk]) -> int:
        """How many orders are pending (the team's own tool: it reads the database it is given)."""
        with runtime.context.engine.connect() as connection:
            found = int(connection.execute(text("SELECT count(*) FROM orders WHERE status = 'pending'")).scalar_one())
        counted.append(found)
        return found

    ticket = cancel_ticket(retail)
    own = AIMessage("", tool_calls=[{"name": "count_pending", "args": {}, "id": "own_1"}])
    model = scripted_model(ticket.turns(), first=(own,))
    graph = support_graph(model, [count_pending])
    agent = langgraph_agent(graph, context=lambda context, tools: Desk(tools.engine))
    result = await run_trial(retail, ticket.scenario, 0, agent)
    assert result.record.infra_error is None and result.passed, result.record.verdict
    with retail.memory_copy().engine.connect() as connection:  # the seeded state the trial started from
        seeded = int(connection.execute(text("SELECT count(*) FROM orders WHERE status = 'pending'")).scalar_one())
    assert counted == [seeded]
    with pytest.raises(TypeError, match="context must be a function"):
        langgraph_agent(graph, context=Desk(retail.memory_copy().engine))  # the value, not a function making it


def _own_ids(turns: list[Turn]) -> list[Turn]:
    """The script with the model's own ids (`lc_0_a`, ...), not passhat's `call_1`, ... numbering."""
    ids = (f"lc_{n}_a" for n in itertools.count())
    return [
        dataclasses.replace(t, calls=tuple(dataclasses.replace(s, call_id=next(ids)) for s in t.calls)) for t in turns
    ]


@pytest.mark.parametrize("compiled", [False, True], ids=["builder", "compiled-graph"])
async def test_the_tool_spans_carry_the_model_s_tool_call_ids(retail: Sandbox, compiled: bool) -> None:
    ticket = cancel_ticket(retail)
    model = scripted_model(_own_ids(ticket.turns()))
    exporter = InMemorySpanExporter()
    runtime = passhat.configure(make_global=False, send=False, span_processors=[SimpleSpanProcessor(exporter)])
    agent = langgraph_agent(support_graph(model, []) if compiled else lambda tools, _: support_graph(model, tools))
    result = await run_trial(retail, ticket.scenario, 0, agent, runtime=runtime)
    assert result.record.infra_error is None and result.passed, result.record.verdict
    spans = [s for s in exporter.get_finished_spans() if s.name.startswith("execute_tool") and s.attributes]
    assert [s.attributes["gen_ai.tool.call.id"] for s in spans if s.attributes] == ["lc_0_a", "lc_1_a", "lc_2_a"]


class _Toolbox:
    """A stand-in Toolbox recording the call ids it is given."""

    def __init__(self) -> None:
        self.ids: list[str | None] = []

    async def call(self, name: str, arguments: dict[str, Any], *, call_id: str | None = None) -> Any:
        self.ids.append(call_id)
        return ToolResult(name, True, arguments, json.dumps(arguments))


async def test_a_trial_tool_invoked_without_a_call_id_runs_and_leaves_the_id_to_passhat() -> None:
    toolbox = _Toolbox()
    listed = [{"name": "get_order", "description": "", "input_schema": {"type": "object", "properties": {}}}]
    (tool,) = langchain_tools(toolbox, listed)
    assert json.loads(await tool.ainvoke({"order_id": "W1", "call_id": "not the id"})) == {
        "order_id": "W1", "call_id": "not the id"
    }  # fmt: skip
    message = await tool.ainvoke({"name": "get_order", "args": {"order_id": "W2"}, "id": "lc_9", "type": "tool_call"})
    assert isinstance(message, ToolMessage) and message.tool_call_id == "lc_9"
    assert toolbox.ids == [None, "lc_9"]


def _looping_model(ticket: CancelTicket) -> GenericFakeChatModel:
    """A model that looks the customer up again and again, never answering."""
    email = ticket.scenario.intent["email"]
    return GenericFakeChatModel(
        messages=(
            AIMessage("", tool_calls=[{"name": "find_customer_by_email", "args": {"email": email}, "id": f"loop_{n}"}])
            for n in itertools.count()
        )
    )


async def test_a_graph_that_loops_to_its_recursion_limit_is_the_agent_s_failure(retail: Sandbox) -> None:
    """A model that calls a tool for ever runs the graph into LangGraph's recursion limit (`GraphRecursionError`):
    the agent's failure (`agent_error`), graded and counted, not a harness failure."""
    ticket = cancel_ticket(retail)
    model = _looping_model(ticket)
    agent = langgraph_agent(lambda tools, _: support_graph(model, tools).with_config(recursion_limit=20))
    result = await run_trial(retail, ticket.scenario, 0, agent)
    assert result.record.termination_reason == "agent_error" and result.record.infra_error is None
    assert not result.passed and result.signature is not None and result.signature.is_agent_failure
    assert "agent_error (GraphRecursionError: Recursion limit of 20 reached" in result.signature.evidence
    assert len(result.record.tool_calls) >= 9  # the calls it made are the trial's, recorded


async def test_the_team_s_compiled_graph_keeps_its_own_config_in_the_trial(retail: Sandbox) -> None:
    """`graph.with_config(recursion_limit=...)`, set on the compiled graph as production runs it, holds in the
    trial's copy (with the trial's tools in place of its own): the loop ends where it ends in production."""
    ticket = cancel_ticket(retail)
    graph = support_graph(_looping_model(ticket), []).with_config(recursion_limit=12)
    result = await run_trial(retail, ticket.scenario, 0, langgraph_agent(graph))
    assert result.record.termination_reason == "agent_error"
    assert result.signature is not None and "Recursion limit of 12 reached" in result.signature.evidence
    assert 4 <= len(result.record.tool_calls) <= 6


async def test_a_subgraph_s_own_tools_are_the_trial_s_too(retail: Sandbox) -> None:
    """A supervisor graph whose node is the team's specialist agent, itself a compiled graph with production tools:
    the trial's copy replaces the tools inside the subgraph too, and production is never called."""
    production: list[str] = []
    tools = production_tools(production)
    ticket = cancel_ticket(retail)
    specialist = support_graph(scripted_model(ticket.turns()), [tools["get_order"], tools["cancel_pending_order"]])
    supervisor = StateGraph(MessagesState)
    supervisor.add_node("specialist", specialist)
    supervisor.add_edge(START, "specialist")
    supervisor.add_edge("specialist", END)
    result = await run_trial(retail, ticket.scenario, 0, langgraph_agent(supervisor.compile()))
    assert result.record.infra_error is None and result.passed, result.record.verdict
    assert production == []


async def test_a_checkpointed_graph_keeps_each_trial_in_a_thread_of_its_own_never_in_the_team_s_saver(
    retail: Sandbox,
) -> None:
    """The team's graph compiled with a checkpointer and a long-term store, as a multi-turn app is: the trial runs
    (each turn sends the new message only, the thread keeps the rest), and the team's saver and store are never
    written: the trial's are its own, in memory."""
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

    production: list[str] = []
    ticket = cancel_ticket(retail)
    saver, store = InMemorySaver(), InMemoryStore()
    graph = support_graph(
        scripted_model(ticket.turns()), list(production_tools(production).values()), checkpointer=saver, store=store
    )
    adapters: list[Any] = []

    def keep(context: TrialContext) -> Any:
        adapters.append(langgraph_agent(graph)(context))
        return adapters[-1]

    result = await run_trial(retail, ticket.scenario, 0, keep)
    assert result.record.infra_error is None and result.passed, result.record.verdict
    assert production == [] and not saver.storage and store.search(("answers",)) == []
    assert adapters[0]._graph.store.search(("answers",))  # the node's notes went to the trial's own store
    humans = [m for m in adapters[0].messages if isinstance(m, HumanMessage)]
    assert len(humans) == len(ticket.turns()) == len({m.id for m in humans})  # each customer message once


async def test_a_built_graph_with_a_checkpointer_runs_each_trial_on_its_own_thread(retail: Sandbox) -> None:
    """A graph your function builds with a checkpointer of its choosing: each trial is a thread of its own."""
    from langgraph.checkpoint.memory import InMemorySaver

    from passhat.sandbox.agents._langgraph import trial_thread

    ticket = cancel_ticket(retail)
    saver = InMemorySaver()
    contexts: list[TrialContext] = []

    def build(tools: list[Any], context: TrialContext) -> Any:
        contexts.append(context)
        return support_graph(scripted_model(ticket.turns()), tools, checkpointer=saver)

    first = await run_trial(retail, ticket.scenario, 0, langgraph_agent(build))
    second = await run_trial(retail, ticket.scenario, 1, langgraph_agent(build))
    assert first.passed and second.passed, (first.record.verdict, second.record.verdict)
    assert set(saver.storage) == {trial_thread(c) for c in contexts} and len(saver.storage) == 2


def approving_graph(model: Any, checkpointer: Any) -> Any:
    """The team's graph asking the customer before a write: a tool call that cancels stops at `interrupt(...)` with
    the question, and runs only once the answer, given back with `Command(resume=...)`, is a yes."""
    from langgraph.types import interrupt

    production = production_tools([])

    async def think(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    def route(state: MessagesState) -> str:
        calls = state["messages"][-1].tool_calls if isinstance(state["messages"][-1], AIMessage) else []
        if not calls:
            return END
        return "approve" if any(call["name"] == "cancel_pending_order" for call in calls) else "tools"

    def approve(state: MessagesState) -> Command[Any]:
        call = state["messages"][-1].tool_calls[0]
        answer = interrupt({"question": f"Shall I cancel order {call['args']['order_id']}?"})
        if str(answer).strip().lower().startswith("yes"):
            return Command(goto="tools")
        refused = ToolMessage("The customer said no: not cancelled.", tool_call_id=call["id"])
        return Command(goto="model", update={"messages": [refused]})

    graph = StateGraph(MessagesState)
    graph.add_node("model", think)
    graph.add_node("approve", approve, destinations=("tools", "model"))
    graph.add_node("tools", ToolNode(list(production.values())))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", route, {"tools": "tools", "approve": "approve", END: END})
    graph.add_edge("tools", "model")
    return graph.compile(checkpointer=checkpointer)


async def test_a_graph_that_asks_with_interrupt_gets_the_customer_s_answer_as_its_resume(retail: Sandbox) -> None:
    """The question the graph's `interrupt(...)` asks is the agent's turn; the customer's yes resumes the graph
    (`Command(resume=...)`), the write runs after it, and the consent check sees the yes before the write."""
    from langgraph.checkpoint.memory import InMemorySaver

    ticket = cancel_ticket(retail)
    first, second, third = ticket.turns()
    calls = [*second.calls, *third.calls]  # the reads, then the cancel, with no question of the model's between
    model = GenericFakeChatModel(
        messages=iter(
            [
                AIMessage(first.text),
                *(AIMessage("", tool_calls=[{"name": s.name, "args": s.arguments, "id": s.call_id}]) for s in calls),
                AIMessage(third.text),
            ]
        )
    )
    result = await run_trial(retail, ticket.scenario, 0, langgraph_agent(approving_graph(model, InMemorySaver())))
    assert result.record.infra_error is None and result.passed, result.record.verdict
    said = [m.text for m in result.record.conversation if m.role == "agent"]
    assert f"Shall I cancel order {ticket.order_id}?" in said
    assert [c.name for c in result.record.tool_calls] == ["find_customer_by_email", "get_order", "cancel_pending_order"]


def test_what_an_interrupt_asks_is_its_text_its_question_or_its_json() -> None:
    from passhat.sandbox.agents._langgraph import interrupt_text

    assert interrupt_text("Proceed?") == "Proceed?"
    assert interrupt_text({"action": "cancel", "question": "Cancel #W1?"}) == "Cancel #W1?"
    assert interrupt_text({"message": "Approve?", "text": 3}) == "Approve?"
    assert interrupt_text({"tool": "cancel_pending_order", "args": {"order_id": "#W1"}}) == (
        '{"tool": "cancel_pending_order", "args": {"order_id": "#W1"}}'
    )


def gated_graph(ticket: CancelTicket, after_the_answer: str) -> tuple[Any, Any]:
    """The team's checkpointed graph whose own `cancel_pending_order` asks with `interrupt(...)` before it writes
    (how LangGraph adds a yes to a tool); its model calls the cancellation with no question of its own."""
    from langgraph.checkpoint.memory import InMemorySaver

    first, second, third = ticket.turns()
    model = scripted_model([first, Turn((*second.calls, *third.calls), after_the_answer)])
    return support_graph(model, list(production_tools([]).values()), checkpointer=InMemorySaver()), model


@pytest.mark.parametrize("says_no", [False, True], ids=["yes", "no"])
async def test_tools_named_approval_required_ask_with_an_interrupt_and_run_only_on_a_yes(
    retail: Sandbox, says_no: bool
) -> None:
    ticket = cancel_ticket(retail)
    graph, model = gated_graph(ticket, REFUSED if says_no else ticket.turns()[2].text)
    agent = langgraph_agent(graph, approval_required=["cancel_pending_order"])
    customer = (lambda context: SaysNo(ScriptedCustomer.for_trial(context))) if says_no else ScriptedCustomer.for_trial
    result = await run_trial(retail, ticket.scenario, 0, agent, customer_factory=customer)
    if says_no:
        assert_refused_and_not_cancelled(result)
    else:
        assert_asked_then_cancelled(result, ticket)
    assert next(model.messages, None) is None  # the model answered every step of its script, once


async def test_an_approval_required_name_the_domain_does_not_serve_is_named(retail: Sandbox) -> None:
    ticket = cancel_ticket(retail)
    graph, _ = gated_graph(ticket, "")
    result = await run_trial(retail, ticket.scenario, 0, langgraph_agent(graph, approval_required=["cancel_order"]))
    assert result.record.infra_error is not None
    assert "approval_required names cancel_order, which the domain does not serve" in result.record.infra_error
    with pytest.raises(TypeError, match=r"approval_required is a list of tool names"):
        langgraph_agent(graph, approval_required="cancel_pending_order")
