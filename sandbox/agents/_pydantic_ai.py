"""pydantic-ai agents in a trial: the trial's tools as the agent's native tools, the policy as its instructions.

`pydantic_ai_agent(agent)` (or a factory `(TrialContext) -> Agent`) is an AgentFactory. Each turn runs the
pydantic-ai agent on what the customer said, with the conversation so far as its message history and the
domain's MCP tools as a `FunctionToolset` whose calls go through the trial's Toolbox (recorded and graded).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from passhat.sandbox.agents._conversation import AgentFactory, Message, Toolbox, TrialContext
from passhat.sandbox.agents._framework import agent_reply, customer_since, require

EXTRA = "pydantic-ai"


def toolset(tools: Toolbox, listed: Sequence[dict[str, Any]]) -> Any:
    """The trial's tools as a pydantic-ai `FunctionToolset` (a tool error goes back to the model as its text)."""
    require("pydantic_ai", EXTRA)
    from pydantic_ai import RunContext, Tool
    from pydantic_ai.toolsets import FunctionToolset

    def forward(name: str) -> Callable[..., Any]:
        async def call(ctx: RunContext[Any], **arguments: Any) -> str:
            return (await tools.call(name, arguments, call_id=ctx.tool_call_id)).text

        return call

    return FunctionToolset(
        [
            Tool.from_schema(forward(t["name"]), t["name"], t["description"], t["input_schema"], takes_ctx=True)
            for t in listed
        ]
    )


class PydanticAIAdapter:
    """One trial of a pydantic-ai agent."""

    def __init__(self, agent: Any, context: TrialContext) -> None:
        self.label = f"pydantic-ai:{getattr(agent, 'name', None) or 'agent'}"
        self._agent = agent
        self._policy = context.policy
        self._history: list[Any] = []
        self._seen = 0
        self._toolset: Any = None

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        """Run the agent on the customer's new message, its tools being the trial's."""
        if self._toolset is None:
            self._toolset = toolset(tools, await tools.list_tools())
        said = customer_since(conversation, self._seen)
        self._seen = len(conversation)
        result = await self._agent.run(
            said, message_history=self._history, toolsets=[self._toolset], instructions=self._policy
        )
        self._history = list(result.all_messages())
        return agent_reply(str(result.output))


def pydantic_ai_agent(agent: Any) -> AgentFactory:
    """An AgentFactory for a pydantic-ai `Agent`, or for a function `(TrialContext) -> Agent` building one per trial."""
    pydantic_ai = require("pydantic_ai", EXTRA)
    built: Callable[[TrialContext], Any]
    if isinstance(agent, pydantic_ai.Agent):
        built = lambda context: agent  # noqa: E731  (one agent object; each trial keeps its own history)
    elif callable(agent):
        built = agent
    else:
        raise TypeError(f"pydantic_ai_agent takes a pydantic_ai.Agent or a factory for one, got {type(agent).__name__}")
    return lambda context: PydanticAIAdapter(built(context), context)
