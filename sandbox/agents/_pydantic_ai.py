"""pydantic-ai agents in a trial: the trial's tools as the agent's native tools, the policy as its instructions.

`pydantic_ai_agent(agent)` (or a factory `(TrialContext) -> Agent`) is an AgentFactory. Each turn runs the
pydantic-ai agent on what the customer said, with the conversation so far as its message history and the
domain's MCP tools as a `FunctionToolset` whose calls go through the trial's Toolbox (recorded and graded).

The team's own agent is taken as it is, with its own tools: a tool the domain serves takes the place of the
agent's tool of the same name (that call is the trial's, recorded and graded); the agent's other tools stay, and
`deps` binds them to the trial's backend (`deps=lambda context, tools: Clinic(tools.engine)`: a tool reading
`ctx.deps` then reads the trial's database, never production). A tool of yours that requires approval
(`requires_approval=True`) makes the trial's tool of its name require it too: the run ends with its
`DeferredToolRequests`, the agent's turn asks the customer (``approval_question``), and the customer's yes
approves the call (anything else denies it) in the run that goes on (`deferred_tool_results`). See docs/agents.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from passhat.sandbox.agents._conversation import AgentFactory, Message, Toolbox, TrialContext
from passhat.sandbox.agents._framework import (
    ApprovalQuestion,
    TrialBinding,
    agent_failure,
    agent_reply,
    approved,
    ask_about,
    ask_approval,
    checked_binding,
    checked_question,
    customer_since,
    failure_types,
    require,
)

AGENT_FAILURES = ("UnexpectedModelBehavior", "UsageLimitExceeded")
"""pydantic-ai's exceptions that are the agent's failure: its model misbehaved past the retries (output that never
validated, a content filter, output cut at the token limit) or the run passed its usage limits. One that is also a
`ModelAPIError` (the model server's answer) stays a harness failure."""

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


DepsFactory = TrialBinding
"""Builds the agent's `deps` for one trial from its context and its Toolbox (`tools.engine`: its database)."""


class PydanticAIAdapter:
    """One trial of a pydantic-ai agent."""

    def __init__(
        self,
        agent: Any,
        context: TrialContext,
        deps: DepsFactory | None = None,
        approval_question: ApprovalQuestion = ask_approval,
    ) -> None:
        self.label = f"pydantic-ai:{getattr(agent, 'name', None) or 'agent'}"
        self._question = approval_question
        self._waiting: list[Any] = []  # the calls the run ended asking approval for (ToolCallParts)
        self._agent = agent
        self._context = context
        self._policy = context.policy
        self._make_deps = deps
        self._deps: Any = None
        self._history: list[Any] = []
        self._seen = 0
        self._toolsets: list[Any] | None = None

    def _with_trial_tools(self, trial: Any, names: frozenset[str]) -> list[Any]:
        """The agent's own toolsets without the tools the trial serves, then the trial's: no name is defined twice.
        The trial's tools of the names whose tool of yours requires approval require it too."""
        own = [
            each.filtered(lambda ctx, definition: definition.name not in names) if names else each
            for each in self._agent.toolsets
        ]
        rules = [(ruled & names, rule) for ruled, rule in _approval_rules(self._agent.toolsets) if ruled & names]
        if rules:

            def required(ctx: Any, definition: Any, arguments: dict[str, Any]) -> bool:
                return any(definition.name in ruled and rule(ctx, definition, arguments) for ruled, rule in rules)

            trial = trial.approval_required(required)
        return [*own, trial]

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        """Run the agent on the customer's new message, the trial's tools in place of its own of the same names."""
        if self._toolsets is None:
            listed = await tools.list_tools()
            self._toolsets = self._with_trial_tools(toolset(tools, listed), frozenset(t["name"] for t in listed))
            if self._make_deps is not None:
                self._deps = self._make_deps(self._context, tools)
        since = conversation[self._seen :]
        self._seen = len(conversation)
        options: dict[str, Any] = {"message_history": self._history, "instructions": self._policy}
        if self._make_deps is not None:
            options["deps"] = self._deps
        said: str | None = customer_since(since, 0)
        if self._waiting:  # the customer's answer approves (a yes) or denies the calls it was asked about
            from pydantic_ai import DeferredToolResults

            yes = approved(since)
            options["deferred_tool_results"] = DeferredToolResults(
                approvals={call.tool_call_id: yes for call in self._waiting}
            )
            self._waiting, said = [], None
        failures = failure_types("pydantic_ai.exceptions", AGENT_FAILURES)
        server = failure_types("pydantic_ai.exceptions", ("ModelAPIError",))
        try:
            with self._agent.override(toolsets=self._toolsets, tools=[]):
                result = await self._agent.run(said, **options)
        except failures as exc:
            if isinstance(exc, server):
                raise
            raise agent_failure(exc) from exc
        self._history = list(result.all_messages())
        asked = list(getattr(result.output, "approvals", None) or ())  # a DeferredToolRequests: calls to approve
        if asked:
            self._waiting = asked
            return ask_about([(call.tool_name, call.args_as_dict()) for call in asked], self._question)
        return agent_reply(str(result.output))


ApprovalRule = Callable[[Any, Any, dict[str, Any]], bool]


def _approval_rules(toolsets: Sequence[Any]) -> list[tuple[frozenset[str], ApprovalRule]]:
    """Where your toolsets require approval, as (tool names, rule (ctx, tool definition, arguments) -> bool): each
    function tool with `requires_approval`, and each `ApprovalRequiredToolset` (`.approval_required(...)`) over the
    function tools it wraps, with its own rule. Toolsets of other kinds (an MCP server's) are not looked into."""
    from pydantic_ai.toolsets import CombinedToolset, FunctionToolset, WrapperToolset
    from pydantic_ai.toolsets.approval_required import ApprovalRequiredToolset

    def always(ctx: Any, definition: Any, arguments: dict[str, Any]) -> bool:
        return True

    def names(toolset: Any) -> frozenset[str]:
        if isinstance(toolset, FunctionToolset):
            return frozenset(toolset.tools)
        if isinstance(toolset, WrapperToolset):
            return names(toolset.wrapped)
        if isinstance(toolset, CombinedToolset):
            return frozenset().union(*(names(each) for each in toolset.toolsets))
        return frozenset()

    rules: list[tuple[frozenset[str], ApprovalRule]] = []

    def visit(toolset: Any) -> None:
        if isinstance(toolset, ApprovalRequiredToolset):
            rules.append((names(toolset.wrapped), toolset.approval_required_func))
        if isinstance(toolset, FunctionToolset):
            gated = frozenset(name for name, tool in toolset.tools.items() if getattr(tool, "requires_approval", False))
            if gated:
                rules.append((gated, always))
        elif isinstance(toolset, WrapperToolset):
            visit(toolset.wrapped)
        elif isinstance(toolset, CombinedToolset):
            for each in toolset.toolsets:
                visit(each)

    for each in toolsets:
        visit(each)
    return rules


def pydantic_ai_agent(
    agent: Any, *, deps: DepsFactory | None = None, approval_question: ApprovalQuestion = ask_approval
) -> AgentFactory:
    """An AgentFactory for a pydantic-ai `Agent`, or for a function `(TrialContext) -> Agent` building one per trial.

    The agent keeps its own tools; those the domain serves are replaced by the trial's of the same name.
    ``deps(context, tools)`` builds the run's `deps` per trial, so the agent's own tools use the trial's backend.
    ``approval_question(tool_name, arguments)``: what the agent asks before a call of a tool that requires approval
    (your app's wording; by default `ask_approval`, which states the action and every argument).
    """
    pydantic_ai = require("pydantic_ai", EXTRA)
    built: Callable[[TrialContext], Any]
    if isinstance(agent, pydantic_ai.Agent):
        built = lambda context: agent  # noqa: E731  (one agent object; each trial keeps its own history)
    elif callable(agent):
        built = agent
    else:
        raise TypeError(f"pydantic_ai_agent takes a pydantic_ai.Agent or a factory for one, got {type(agent).__name__}")
    make_deps = checked_binding("pydantic_ai_agent", "deps", deps)
    question = checked_question("pydantic_ai_agent", approval_question)
    return lambda context: PydanticAIAdapter(built(context), context, make_deps, question)
