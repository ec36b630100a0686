"""OpenAI Agents SDK agents in a trial: the trial's tools as `FunctionTool`s, the policy as the instructions.

`openai_agents_agent(agent)` (or a factory `(TrialContext) -> Agent`) is an AgentFactory. Each turn runs the
agent (a copy with the trial's tools in place of its own tools of the same names, the domain's policy as its
instructions unless it has its own) with `Runner.run` on the conversation so far; the trial's tools' calls go
through the trial's Toolbox (recorded and graded).
The SDK's own tracing stays off: the trial is traced by passhat. ``context(trial_context, tools)`` builds, once per
trial, the run's context (`Runner.run(..., context=...)`): your own tools that read it (``ctx.context`` of their
`RunContextWrapper`) use the trial's backend (``tools.engine``), never production.
``next_turn`` says which agent takes the customer's next message, as your app does: ``"agent"`` (the default) your
agent each time (`Runner.run(agent, ...)` every turn), ``"last_agent"`` the one that gave the last answer (the
SDK's `result.last_agent`, kept by an app whose triage agent hands the conversation off to a specialist).
A tool of yours that needs approval (`needs_approval`) keeps it on the trial's tool of its name: the run stops
there, the agent's turn asks the customer (``approval_question``), and the customer's yes approves the call (a
no rejects it), as your app's `state.approve(...)` / `state.reject(...)` would.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import Any, Literal, get_args

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

EXTRA = "openai-agents"

AGENT_FAILURES = (
    "MaxTurnsExceeded",
    "ModelBehaviorError",
    "ModelRefusalError",
    "InputGuardrailTripwireTriggered",
    "OutputGuardrailTripwireTriggered",
)
"""The Agents SDK's exceptions that are the agent's failure: it passed its turn limit, its model answered what the
SDK could not use or refused, or one of the agent's own guardrails stopped the run."""

NextTurn = Literal["agent", "last_agent"]


def function_tools(tools: Toolbox, listed: Sequence[dict[str, Any]]) -> list[Any]:
    """The trial's tools as Agents SDK `FunctionTool`s (a tool error goes back to the model as its text)."""
    require("agents", EXTRA)
    from agents import FunctionTool

    def forward(name: str) -> Callable[[Any, str], Any]:
        async def call(context: Any, arguments: str) -> str:
            try:
                parsed = json.loads(arguments or "{}")
            except ValueError:
                parsed = None
            if not isinstance(parsed, dict):
                return json.dumps({"error": "invalid_argument", "message": "arguments must be a JSON object"})
            call_id = getattr(context, "tool_call_id", None)
            return (await tools.call(name, parsed, call_id=call_id)).text

        return call

    return [
        FunctionTool(
            name=t["name"], description=t["description"], params_json_schema=t["input_schema"],
            on_invoke_tool=forward(t["name"]), strict_json_schema=False,
        )
        for t in listed
    ]  # fmt: skip


class OpenAIAgentsAdapter:
    """One trial of an OpenAI Agents SDK agent."""

    def __init__(
        self,
        agent: Any,
        context: TrialContext,
        binding: TrialBinding | None = None,
        next_turn: NextTurn = "agent",
        approval_question: ApprovalQuestion = ask_approval,
    ) -> None:
        self.label = f"openai-agents:{getattr(agent, 'name', None) or 'agent'}"
        self._agent = agent
        self._next_turn = next_turn
        self._question = approval_question
        self._waiting: tuple[Any, Any, list[Any]] | None = None  # a run stopped for approvals: state, agent, items
        self._current: Any = None  # the trial's copy of the agent that takes the next turn
        self._context = context
        self._binding = binding
        self._run_context: Any = None
        self._policy = context.policy
        self._ready: Any = None
        self._input: list[Any] = []
        self._seen = 0

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        """Run the agent on the conversation so far, its tools including the trial's."""
        from agents import RunConfig, Runner

        if self._ready is None:
            added = function_tools(tools, await tools.list_tools())
            own = [tool for tool in self._agent.tools if getattr(tool, "name", None) not in _names(added)]
            yours = {getattr(tool, "name", None): tool for tool in self._agent.tools}
            gated = [_gated(tool, yours.get(tool.name)) for tool in added]
            self._ready = self._agent.clone(tools=[*own, *gated], instructions=self._agent.instructions or self._policy)
            behind = _Handoffs(added)
            behind.made[id(self._agent)] = self._ready  # a handoff back to this agent reaches the trial's copy
            self._ready.handoffs = behind.each(self._agent.handoffs)
            if self._binding is not None:  # the run's context, built once for the trial
                self._run_context = self._binding(self._context, tools)
            self._current = self._ready
        said = conversation[self._seen :]
        self._seen = len(conversation)
        if self._waiting is not None:  # the customer's answer approves (a yes) or rejects the calls it was asked
            state, start, items = self._waiting
            self._waiting = None
            yes = approved(said)
            for item in items:
                if yes:
                    state.approve(item)
                else:
                    state.reject(item)
        else:
            self._input.append({"role": "user", "content": customer_since(said, 0)})
            state, start = self._input, self._current
        try:
            result = await Runner.run(
                start, state, context=self._run_context, run_config=RunConfig(tracing_disabled=True)
            )
        except failure_types("agents.exceptions", AGENT_FAILURES) as exc:
            raise agent_failure(exc) from exc
        if result.interruptions:  # calls that need approval: the agent's turn asks the customer
            self._waiting = (result.to_state(), result.last_agent, list(result.interruptions))
            return ask_about([_call_of(item) for item in result.interruptions], self._question)
        self._input = list(result.to_input_list())
        if self._next_turn == "last_agent":  # a copy made for the trial: handoffs only reach copies
            self._current = result.last_agent
        return agent_reply(str(result.final_output or ""))


def _call_of(item: Any) -> tuple[str, dict[str, Any]]:
    """A call awaiting approval (`ToolApprovalItem`) as (tool name, its arguments; none when they do not parse)."""
    try:
        arguments = json.loads(item.arguments or "{}")
    except ValueError:
        arguments = {}
    return str(item.tool_name or item.name), arguments if isinstance(arguments, dict) else {}


def _names(tools: Sequence[Any]) -> set[str]:
    return {str(getattr(tool, "name", "")) for tool in tools}


def _gated(trial: Any, yours: Any) -> Any:
    """The trial's tool, needing approval where your tool of its name does (`FunctionTool.needs_approval`)."""
    needs = getattr(yours, "needs_approval", False)
    return trial if needs is False else dataclasses.replace(trial, needs_approval=needs)


class _Handoffs:
    """The agents the trial's agent hands off to, each a copy whose tools of the trial's names are the trial's
    (its others stay, nothing is added), and so on down their own handoffs: a specialist's `cancel_order` is the
    trial's, never production's. Copies are made once per agent (handoffs may go back and forth) and kept here,
    since the SDK holds handed-off agents by weak reference."""

    def __init__(self, trial_tools: list[Any]) -> None:
        self.trial = {str(tool.name): tool for tool in trial_tools}
        self.made: dict[int, Any] = {}

    def each(self, handoffs: Sequence[Any]) -> list[Any]:
        import weakref

        from agents import Agent, Handoff

        copied: list[Any] = []
        for item in handoffs:
            if isinstance(item, Agent):
                copied.append(self.agent(item))
            elif isinstance(item, Handoff):  # `handoff(agent, ...)`: its callbacks kept, the agent it returns copied
                original = item.on_invoke_handoff

                async def invoke(context: Any, arguments: str, original: Any = original) -> Any:
                    return self.agent(await original(context, arguments))

                replaced = dataclasses.replace(item, on_invoke_handoff=invoke)
                reference = getattr(item, "_agent_ref", None)  # the SDK's link to its agent (recent versions)
                target = reference() if reference is not None else None
                if target is not None:
                    replaced._agent_ref = weakref.ref(self.agent(target))
                copied.append(replaced)
            else:
                copied.append(item)
        return copied

    def agent(self, agent: Any) -> Any:
        made = self.made.get(id(agent))
        if made is not None:
            return made
        tools = [
            _gated(self.trial[name], tool) if name in self.trial else tool
            for tool in agent.tools
            for name in [str(getattr(tool, "name", ""))]
        ]
        made = self.made[id(agent)] = agent.clone(tools=tools)
        made.handoffs = self.each(agent.handoffs)
        return made


def openai_agents_agent(
    agent: Any,
    *,
    context: TrialBinding | None = None,
    next_turn: NextTurn = "agent",
    approval_question: ApprovalQuestion = ask_approval,
) -> AgentFactory:
    """An AgentFactory for an Agents SDK `Agent`, or for a function `(TrialContext) -> Agent` building one per trial.

    ``context(trial_context, tools)`` builds the run's context per trial (`Runner.run(..., context=...)`), so the
    agent's own tools that read it (``ctx.context``) use the trial's backend (``tools.engine``).
    ``next_turn``: which agent takes each customer message after the first, as your app does it: ``"agent"`` (your
    agent each time) or ``"last_agent"`` (the agent that gave the last answer, `result.last_agent`)."""
    sdk = require("agents", EXTRA)
    binding = checked_binding("openai_agents_agent", "context", context)
    if next_turn not in get_args(NextTurn):
        raise ValueError(
            f"openai_agents_agent: next_turn must be 'agent' (each customer message goes to your agent, as "
            f"Runner.run(agent, ...) every turn does) or 'last_agent' (to the agent that answered last, as an app "
            f"that keeps result.last_agent does), got {next_turn!r}"
        )
    built: Callable[[TrialContext], Any]
    if isinstance(agent, sdk.Agent):
        built = lambda context: agent  # noqa: E731  (one agent object; each trial keeps its own input)
    elif callable(agent):
        built = agent
    else:
        raise TypeError(f"openai_agents_agent takes an agents.Agent or a factory for one, got {type(agent).__name__}")
    question = checked_question("openai_agents_agent", approval_question)
    return lambda trial: OpenAIAgentsAdapter(built(trial), trial, binding, next_turn, question)
