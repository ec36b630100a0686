"""LangGraph (and LangChain) agents in a trial: the trial's tools as LangChain tools, the policy as the system message.

`langgraph_agent(build)` is an AgentFactory; `build(tools, context)` returns your compiled graph (or any
runnable taking and returning `{"messages": [...]}`) wired with `tools`, the trial's MCP tools as LangChain
`StructuredTool`s whose calls go through the trial's Toolbox (recorded and graded). Each turn invokes the graph
on the conversation so far; the agent's reply is the last AI message. The team's compiled graph is taken as it
is too: `langgraph_agent(graph)` copies it per trial with the trial's tools in its tool nodes in place of its own
tools of the same names. ``context(trial_context, tools)`` builds, once per trial, the value the graph runs with as
LangGraph's runtime context (`graph.ainvoke(..., context=...)`): your own tools that read it (a `ToolRuntime`
parameter's ``runtime.context``) use the trial's backend (``tools.engine``), never production. A graph with a
checkpointer runs each trial on a thread of its own (`trial_thread`) and is sent each turn's new message only; the
team's compiled graph's checkpointer and store are replaced, in its copy, by new in-memory ones. A graph that stops
at `interrupt(...)` asks the customer (`interrupt_text`), and the answer resumes it (`Command(resume=...)`).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from passhat.sandbox.agents._conversation import AgentFactory, Message, Toolbox, TrialContext
from passhat.sandbox.agents._framework import (
    ApprovalQuestion,
    TrialBinding,
    agent_failure,
    agent_reply,
    approval_request,
    approved,
    ask_approval,
    checked_binding,
    checked_question,
    customer_since,
    failure_types,
    require,
)

EXTRA = "langgraph"

AGENT_FAILURES = ("GraphRecursionError",)
"""LangGraph's exceptions that are the agent's failure: the graph passed its recursion limit (a model looping
between its nodes)."""

GraphBuilder = Callable[[list[Any], TrialContext], Any]
"""Your graph, given the trial's tools (LangChain `BaseTool`s) and its context."""


APPROVAL = "passhat.approval"
"""The key of a trial tool's own `interrupt(...)` value (``approval_required``): the tool awaiting a yes."""


def langchain_tools(
    tools: Toolbox,
    listed: Sequence[dict[str, Any]],
    approval_required: frozenset[str] = frozenset(),
    approval_question: ApprovalQuestion = ask_approval,
) -> list[Any]:
    """The trial's tools as LangChain `StructuredTool`s (a tool error goes back to the model as its text); a call
    invoked with the model's tool call (as LangGraph's `ToolNode` does) keeps the model's id on the trace.

    A tool named in ``approval_required`` first asks the customer with `interrupt(...)` (``approval_question``), as
    your tool that wraps its call in an interrupt does, and runs only on a yes; on anything else the model is told
    the customer did not approve it."""
    require("langchain_core", EXTRA)

    def forward(name: str) -> Callable[..., Any]:
        async def call(call_id: str | None = None, /, **arguments: Any) -> str:
            if name in approval_required:
                from langgraph.types import interrupt

                answer = interrupt({"question": approval_question(name, arguments), APPROVAL: name})
                if not (isinstance(answer, dict) and answer.get("approved") is True):
                    return json.dumps({"error": "not_approved", "message": f"the customer did not approve {name}"})
            return (await tools.call(name, arguments, call_id=call_id)).text

        return call

    return [
        _trial_tool()(
            name=t["name"], description=t["description"] or t["name"], args_schema=t["input_schema"],
            coroutine=forward(t["name"]),
        )
        for t in listed
    ]  # fmt: skip


@functools.cache
def _trial_tool() -> type[Any]:
    """A `StructuredTool` handing its coroutine the model's tool-call id as the first positional argument (no
    argument name can clash with it); LangChain injects `InjectedToolCallId` only into Pydantic schemas, not the
    MCP tools' JSON schemas. Invoked without an id (plain arguments), the coroutine gets none."""
    from langchain_core.tools import StructuredTool

    class TrialTool(StructuredTool):
        def _to_args_and_kwargs(
            self, tool_input: str | dict[str, Any], tool_call_id: str | None
        ) -> tuple[tuple[str, ...], dict[str, Any]]:
            args, kwargs = super()._to_args_and_kwargs(tool_input, tool_call_id)
            return ((tool_call_id, *args) if tool_call_id else args), kwargs

    return TrialTool


def _text(message: Any) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


class LangGraphAdapter:
    """One trial of a LangGraph agent."""

    def __init__(
        self,
        build: GraphBuilder,
        context: TrialContext,
        binding: TrialBinding | None = None,
        approval_required: frozenset[str] = frozenset(),
        approval_question: ApprovalQuestion = ask_approval,
    ) -> None:
        self._approval = approval_required
        self._question = approval_question
        self._build = build
        self._context = context
        self._binding = binding
        self._options: dict[str, Any] = {}
        self._graph: Any = None
        self._messages: list[Any] = []
        self._waiting: list[Any] = []  # the graph's interrupts its next turn resumes
        self._seen = 0
        self.label = f"langgraph:{getattr(build, '__name__', 'graph')}"

    @property
    def messages(self) -> list[Any]:
        """The conversation as the graph holds it: the policy, the customer's, the model's and the tools' messages."""
        return list(self._messages)

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        """Invoke the graph on the conversation so far; the reply is its last AI message."""
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

        sent: list[Any] = []
        if self._graph is None:
            listed = await tools.list_tools()
            unknown = sorted(self._approval - {t["name"] for t in listed})
            if unknown:
                raise ValueError(
                    f"langgraph_agent: approval_required names {', '.join(unknown)}, which the domain does not serve "
                    f"(it serves {', '.join(sorted(t['name'] for t in listed))}): check the names"
                )
            trial_tools = langchain_tools(tools, listed, self._approval, self._question)
            self._graph = self._build(trial_tools, self._context)
            sent.append(SystemMessage(self._context.policy))
            if self._binding is not None:  # the graph's runtime context, built once for the trial
                self._options["context"] = self._binding(self._context, tools)
            if _saver(getattr(self._graph, "checkpointer", None)):  # the conversation is the checkpointer's thread
                self._options["config"] = {"configurable": {"thread_id": trial_thread(self._context)}}
        since = conversation[self._seen :]
        said = customer_since(since, 0)
        self._seen = len(conversation)
        payload: Any
        if self._waiting:  # the graph stopped at interrupt(...): the customer's answer resumes it
            from langgraph.types import Command

            yes = approved(since)
            answers = {
                each.id: {"approved": yes} if _approval_of(each.value) is not None else said for each in self._waiting
            }
            payload = Command(resume=next(iter(answers.values())) if len(answers) == 1 else answers)
        else:
            # A checkpointed graph keeps the conversation in its thread, and is sent only the new messages, as your
            # app sends them; any other graph is sent the whole conversation each turn.
            sent.append(HumanMessage(said))
            self._messages.extend(sent)
            payload = {"messages": sent if "config" in self._options else self._messages}
        try:
            state = await self._graph.ainvoke(payload, **self._options)
        except failure_types("langgraph.errors", AGENT_FAILURES) as exc:
            raise agent_failure(exc) from exc
        self._messages = list(state.get("messages", self._messages))
        self._waiting = list(state.get("__interrupt__", ()))
        if self._waiting:  # what the graph asks the customer (interrupt's value) is the agent's turn
            text = "\n".join(interrupt_text(each.value) for each in self._waiting)
            gated = [_approval_of(each.value) for each in self._waiting]
            if all(name is not None for name in gated):  # the trial's tools asking the customer's yes to them
                return approval_request(text, [str(name) for name in gated])
            return agent_reply(text, waiting=True)
        replies = [m for m in self._messages if isinstance(m, AIMessage)]
        return agent_reply(_text(replies[-1]) if replies else "")


def _approval_of(value: Any) -> str | None:
    """The tool a trial tool's approval interrupt waits on, or None for any other interrupt."""
    name = value.get(APPROVAL) if isinstance(value, dict) else None
    return name if isinstance(name, str) else None


INTERRUPT_KEYS = ("question", "message", "text", "prompt")
"""Keys of an `interrupt({...})` value whose text is what the graph asks the customer, in that order."""


def interrupt_text(value: Any) -> str:
    """What a graph's `interrupt(value)` says to the customer: a string as it is, a mapping's first of
    `INTERRUPT_KEYS` that is a string, anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in INTERRUPT_KEYS:
            if isinstance(value.get(key), str):
                return str(value[key])
    return json.dumps(value, default=str, ensure_ascii=False)


def trial_thread(context: TrialContext) -> str:
    """The checkpointer thread a trial's conversation is kept in: one per trial."""
    return f"passhat-trial:{context.run_id}:{context.scenario.scenario_id}:{context.attempt}"


def _saver(checkpointer: Any) -> bool:
    """Whether ``checkpointer`` is a saver of its own (not None, nor True/False: a subgraph's use of its parent's)."""
    from langgraph.checkpoint.base import BaseCheckpointSaver

    return isinstance(checkpointer, BaseCheckpointSaver)


def _trial_saver(checkpointer: Any) -> Any:
    """A new in-memory saver in place of the team's own; None, True or False as they are."""
    if not _saver(checkpointer):
        return checkpointer
    from langgraph.checkpoint.memory import InMemorySaver

    return InMemorySaver()


def _trial_store(store: Any) -> Any:
    """A new, empty in-memory store in place of the team's long-term memory store (if the graph has one)."""
    if store is None:
        return None
    from langgraph.store.memory import InMemoryStore

    return InMemoryStore()


def _compiled_graph(node: Any) -> bool:
    return hasattr(node, "invoke") and hasattr(getattr(node, "builder", None), "nodes")


def with_trial_tools(graph: Any) -> GraphBuilder:
    """A builder for the team's compiled graph as it is: per trial, a copy of its graph whose `ToolNode`s run the
    trial's tools in place of their tools of the same names (their other tools stay), compiled again.

    The graph's model nodes are left as they are: the model asks for the tools by the names it knows, and the
    tool node runs the trial's tool of that name (recorded and graded) instead of the production one. A node that
    is itself a compiled graph (a supervisor's agents) is copied the same way, down to its own tool nodes; a graph
    invoked from inside a node's own function is out of reach, as any tool it holds.
    """
    from langgraph.prebuilt import ToolNode

    builder = getattr(graph, "builder", None)
    if not _compiled_graph(graph) or builder is None:
        raise TypeError(f"langgraph_agent: {type(graph).__name__} is not a compiled StateGraph (graph.compile())")

    def build(tools: list[Any], context: TrialContext) -> Any:
        served = {tool.name for tool in tools}
        copied = copy.copy(builder)
        copied.nodes = dict(builder.nodes)
        for name, spec in builder.nodes.items():
            node = spec.runnable
            if isinstance(node, ToolNode):
                own = [tool for tool_name, tool in node.tools_by_name.items() if tool_name not in served]
                replaced = ToolNode([*own, *tools], name=node.name or name, handle_tool_errors=node._handle_tool_errors)
                copied.nodes[name] = dataclasses.replace(spec, runnable=replaced)
            elif _compiled_graph(node):  # a subgraph as a node (a supervisor's agents): its tool nodes too
                copied.nodes[name] = dataclasses.replace(spec, runnable=with_trial_tools(node)(tools, context))
        # Your checkpointer and store (memory, SQLite, PostgreSQL...) are never the trial's: a trial's conversation
        # and what its graph remembers go to its own, in memory, and are dropped with it.
        compiled = copied.compile(
            checkpointer=_trial_saver(graph.checkpointer), store=_trial_store(getattr(graph, "store", None)),
            name=graph.name,
        )  # fmt: skip
        # What the team set on the compiled graph (`graph.with_config(recursion_limit=...)`) holds in the trial too.
        return compiled.with_config(graph.config) if getattr(graph, "config", None) else compiled

    build.__name__ = str(getattr(graph, "name", None) or "graph")
    return build


def langgraph_agent(
    build: GraphBuilder | Any,
    *,
    context: TrialBinding | None = None,
    approval_required: Iterable[str] = (),
    approval_question: ApprovalQuestion = ask_approval,
) -> AgentFactory:
    """An AgentFactory for the graph `build(tools, context)` returns (built once per trial, with its tools), or for
    the team's compiled graph as it is (its tool nodes run the trial's tools in place of theirs, by name).

    ``context(trial_context, tools)`` builds the graph's runtime context per trial (`ainvoke(..., context=...)`),
    so the graph's own tools that read it use the trial's backend (``tools.engine``).
    ``approval_required``: the tools whose call your own tool wraps in an `interrupt(...)` asking the customer's yes
    (LangGraph cannot tell from outside): the trial's tools of those names do the same, asking
    ``approval_question(tool_name, arguments)`` (by default `ask_approval`), and run only on the customer's yes."""
    require("langgraph", EXTRA)
    binding = checked_binding("langgraph_agent", "context", context)
    question = checked_question("langgraph_agent", approval_question)
    if isinstance(approval_required, str) or not all(isinstance(name, str) for name in approval_required):
        raise TypeError(
            "langgraph_agent: approval_required is a list of tool names (['cancel_pending_order']), got "
            f"{approval_required!r}"
        )
    gated = frozenset(approval_required)
    if hasattr(build, "builder") and hasattr(build, "invoke"):
        build = with_trial_tools(build)
    if not callable(build):
        raise TypeError(
            "langgraph_agent takes a compiled graph (graph.compile(): passhat builds it per trial with the trial's "
            f"tools in place of its own) or a function (tools, context) -> graph, got {type(build).__name__}"
        )
    return lambda trial: LangGraphAdapter(build, trial, binding, gated, question)
