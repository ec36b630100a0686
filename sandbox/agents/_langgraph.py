"""LangGraph (and LangChain) agents in a trial: the trial's tools as LangChain tools, the policy as the system message.

`langgraph_agent(build)` is an AgentFactory; `build(tools, context)` returns your compiled graph (or any
runnable taking and returning `{"messages": [...]}`) wired with `tools`, the trial's MCP tools as LangChain
`StructuredTool`s whose calls go through the trial's Toolbox (recorded and graded). Each turn invokes the graph
on the conversation so far; the agent's reply is the last AI message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from passhat.sandbox.agents._conversation import AgentFactory, Message, Toolbox, TrialContext
from passhat.sandbox.agents._framework import agent_reply, customer_since, require

EXTRA = "langgraph"

GraphBuilder = Callable[[list[Any], TrialContext], Any]
"""Your graph, given the trial's tools (LangChain `BaseTool`s) and its context."""


def langchain_tools(tools: Toolbox, listed: Sequence[dict[str, Any]]) -> list[Any]:
    """The trial's tools as LangChain `StructuredTool`s (a tool error goes back to the model as its text)."""
    require("langchain_core", EXTRA)
    from langchain_core.tools import StructuredTool

    def forward(name: str) -> Callable[..., Any]:
        async def call(**arguments: Any) -> str:
            return (await tools.call(name, arguments)).text

        return call

    return [
        StructuredTool(
            name=t["name"], description=t["description"] or t["name"], args_schema=t["input_schema"],
            coroutine=forward(t["name"]),
        )
        for t in listed
    ]  # fmt: skip


def _text(message: Any) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


class LangGraphAdapter:
    """One trial of a LangGraph agent."""

    def __init__(self, build: GraphBuilder, context: TrialContext) -> None:
        self._build = build
        self._context = context
        self._graph: Any = None
        self._messages: list[Any] = []
        self._seen = 0
        self.label = f"langgraph:{getattr(build, '__name__', 'graph')}"

    @property
    def messages(self) -> list[Any]:
        """The conversation as the graph holds it: the policy, the customer's, the model's and the tools' messages."""
        return list(self._messages)

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        """Invoke the graph on the conversation so far; the reply is its last AI message."""
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

        if self._graph is None:
            self._graph = self._build(langchain_tools(tools, await tools.list_tools()), self._context)
            self._messages = [SystemMessage(self._context.policy)]
        self._messages.append(HumanMessage(customer_since(conversation, self._seen)))
        self._seen = len(conversation)
        state = await self._graph.ainvoke({"messages": self._messages})
        self._messages = list(state["messages"])
        replies = [m for m in self._messages if isinstance(m, AIMessage)]
        return agent_reply(_text(replies[-1]) if replies else "")


def langgraph_agent(build: GraphBuilder) -> AgentFactory:
    """An AgentFactory for the graph `build(tools, context)` returns (built once per trial, with its tools)."""
    require("langgraph", EXTRA)
    if not callable(build):
        raise TypeError(
            "langgraph_agent takes a function (tools, context) -> graph: a compiled graph's tools are fixed, "
            "so passhat builds it per trial with the trial's own tools"
        )
    return lambda context: LangGraphAdapter(build, context)
