"""A pydantic-ai agent replayed through the adapter, its model being pydantic-ai's own offline FunctionModel."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from sqlalchemy import text

import passhat
from passhat.sandbox import Sandbox, ScriptedCustomer, TrialResult, run_trial
from passhat.sandbox.agents import pydantic_ai_agent
from tests.sandbox.retail_paths import (
    REFUSED,
    CancelTicket,
    SaysNo,
    Turn,
    assert_asked_then_cancelled,
    assert_refused_and_not_cancelled,
    cancel_ticket,
)


class ScriptedModel:
    """The model's answers in order (one per tool call, then each turn's text), and what it was shown."""

    def __init__(self, turns: list[Turn]) -> None:
        self.answers: list[ModelResponse] = []
        for turn in turns:
            self.answers.extend(
                ModelResponse(parts=[ToolCallPart(s.name, s.arguments, tool_call_id=s.call_id)]) for s in turn.calls
            )
            self.answers.append(ModelResponse(parts=[TextPart(turn.text)]))
        self.tool_names: set[str] = set()
        self.instructions: list[str | None] = []
        self.returns: list[ToolReturnPart] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.tool_names = {tool.name for tool in info.function_tools}
        self.instructions.append(info.instructions)
        last = messages[-1]
        if isinstance(last, ModelRequest):
            self.returns.extend(p for p in last.parts if isinstance(p, ToolReturnPart))
        return self.answers.pop(0)


async def _trial(retail: Sandbox, ticket: CancelTicket, *, wrong_entity: bool) -> tuple[TrialResult, ScriptedModel]:
    model = ScriptedModel(ticket.turns(wrong_entity=wrong_entity))
    agent = Agent(FunctionModel(model), name="support")  # the team's agent, as they wrote it
    return await run_trial(retail, ticket.scenario, 0, pydantic_ai_agent(agent)), model


async def test_a_pydantic_ai_agent_solves_the_cancellation_with_the_trials_tools(retail: Sandbox) -> None:
    ticket = cancel_ticket(retail)
    result, model = await _trial(retail, ticket, wrong_entity=False)
    assert result.passed, (result.record.verdict, result.record.infra_error)
    assert result.agent == "pydantic-ai:support"
    assert [c.name for c in result.record.tool_calls] == ["find_customer_by_email", "get_order", "cancel_pending_order"]
    assert {"find_customer_by_email", "cancel_pending_order", "get_order"} <= model.tool_names
    assert model.instructions[0] == retail.domain.policy.strip()
    first: Any = model.returns[0]
    assert first.tool_call_id == "call_1"
    assert json.loads(first.content) == {"customer_id": ticket.scenario.intent["customer_id"]}
    assert not model.answers  # every scripted answer was used: the adapter ran each turn once


async def test_a_pydantic_ai_agent_cancelling_the_other_order_is_graded_wrong_entity(retail: Sandbox) -> None:
    ticket = cancel_ticket(retail)
    result, _ = await _trial(retail, ticket, wrong_entity=True)
    assert not result.passed
    assert result.record.tool_calls[-1].arguments == {
        "order_id": ticket.sibling,
        "reason": ticket.scenario.intent["reason"],
    }
    assert result.signature is not None and result.signature.label == "wrong_entity"


async def test_a_factory_builds_one_pydantic_ai_agent_per_trial(retail: Sandbox) -> None:
    ticket = cancel_ticket(retail)
    built: list[str] = []

    def make(context: Any) -> Agent[None, str]:
        built.append(context.scenario.scenario_id)
        return Agent(FunctionModel(ScriptedModel(ticket.turns())), name="per-trial")

    result = await run_trial(retail, ticket.scenario, 0, pydantic_ai_agent(make))
    assert result.passed and built == [ticket.scenario.scenario_id]


async def test_the_team_s_agent_with_its_own_tools_is_replayed_with_the_trial_s_in_their_place(
    retail: Sandbox,
) -> None:
    """The agent as the team wrote it: tools of the same names as the domain's, bound to production. Each is
    replaced by the trial's of the same name (recorded and graded); production is never called."""

    ticket = cancel_ticket(retail)
    production: list[str] = []
    agent = Agent(FunctionModel(ScriptedModel(ticket.turns())), name="support")

    @agent.tool_plain
    def find_customer_by_email(email: str) -> str:
        production.append("find_customer_by_email")
        return "production"

    @agent.tool_plain
    @passhat.tool  # monitored too: the trial's tool still takes its place
    def get_order(order_id: str) -> str:
        production.append("get_order")
        return "production"

    @agent.tool_plain
    def cancel_pending_order(order_id: str, reason: str) -> str:
        production.append("cancel_pending_order")
        return "production"

    @agent.tool
    def count_orders(ctx: RunContext[Any]) -> int:  # not served by the domain: bound to the trial's database
        with ctx.deps.connect() as connection:
            return int(connection.execute(text("SELECT count(*) FROM orders")).scalar_one())

    result = await run_trial(
        retail, ticket.scenario, 0, pydantic_ai_agent(agent, deps=lambda context, tools: tools.engine)
    )
    assert result.record.infra_error is None
    assert result.passed, result.record.verdict
    assert production == []
    assert [c.name for c in result.record.tool_calls] == ["find_customer_by_email", "get_order", "cancel_pending_order"]


async def test_deps_bind_the_agent_s_own_tools_to_the_trial_s_database(retail: Sandbox) -> None:

    ticket = cancel_ticket(retail)
    counted: list[int] = []
    answers = iter(
        [
            ModelResponse(parts=[ToolCallPart("count_pending", {}, tool_call_id="own_1")]),
            *ScriptedModel(ticket.turns()).answers,
        ]
    )
    agent = Agent(FunctionModel(lambda messages, info: next(answers)), name="support")

    @agent.tool
    def count_pending(ctx: RunContext[Any]) -> int:
        with ctx.deps.connect() as connection:
            found = int(connection.execute(text("SELECT count(*) FROM orders WHERE status = 'pending'")).scalar_one())
        counted.append(found)
        return found

    result = await run_trial(
        retail, ticket.scenario, 0, pydantic_ai_agent(agent, deps=lambda context, tools: tools.engine)
    )
    assert result.record.infra_error is None and result.passed
    with retail.memory_copy().engine.connect() as connection:  # the seeded state the trial started from
        seeded = int(connection.execute(text("SELECT count(*) FROM orders WHERE status = 'pending'")).scalar_one())
    assert counted == [seeded]


async def test_a_model_that_never_calls_a_real_tool_is_the_agent_s_failure_not_the_harness_s(retail: Sandbox) -> None:
    """pydantic-ai gives up on a model whose tool calls never validate (`UnexpectedModelBehavior`): the trial is the
    agent's failure (`agent_error`), graded and counted, with the framework's reason in its evidence."""
    ticket = cancel_ticket(retail)
    agent = Agent(
        FunctionModel(lambda messages, info: ModelResponse(parts=[ToolCallPart("cancel_every_order", {})])),
        name="support",
    )
    result = await run_trial(retail, ticket.scenario, 0, pydantic_ai_agent(agent))
    assert result.record.termination_reason == "agent_error" and result.record.infra_error is None
    assert not result.passed and result.signature is not None and result.signature.is_agent_failure
    assert "agent_error (UnexpectedModelBehavior: " in result.signature.evidence


def approval_agent(
    ticket: CancelTicket, after_the_answer: str, production: list[str], *, wrapped: bool = False
) -> tuple[Agent[Any, Any], Any]:
    """The team's agent whose `cancel_pending_order` requires approval (its output types include
    `DeferredToolRequests`, as pydantic-ai asks): its model verifies the customer, reads the order and calls the
    cancellation with no question of its own; then ``after_the_answer``. ``wrapped``: the approval is a toolset's
    (`FunctionToolset(...).approval_required(rule)`), not the tool's own `requires_approval`."""
    from pydantic_ai import DeferredToolRequests
    from pydantic_ai.toolsets import FunctionToolset

    def cancel_pending_order(order_id: str, reason: str) -> str:
        """The team's own write, against production."""
        production.append(order_id)
        return "production"

    def get_order(order_id: str) -> str:
        """The team's own read, against production."""
        production.append(order_id)
        return "production"

    first, second, third = ticket.turns()
    model = ScriptedModel([first, Turn((*second.calls, *third.calls), after_the_answer)])
    if wrapped:
        own = FunctionToolset([cancel_pending_order, get_order]).approval_required(
            lambda ctx, definition, arguments: definition.name == "cancel_pending_order" and bool(arguments)
        )
        return Agent(
            FunctionModel(model), name="support", output_type=[str, DeferredToolRequests], toolsets=[own]
        ), model
    agent: Agent[Any, Any] = Agent(FunctionModel(model), name="support", output_type=[str, DeferredToolRequests])
    agent.tool_plain(requires_approval=True)(cancel_pending_order)
    return agent, model


@pytest.mark.parametrize("wrapped", [False, True], ids=["requires_approval", "approval_required toolset"])
async def test_a_tool_that_requires_approval_asks_the_customer_and_runs_on_their_yes(
    retail: Sandbox, wrapped: bool
) -> None:
    """The run ends asking approval for the trial's `cancel_pending_order` (the team's requires it); the agent's turn
    asks, stating the order and the reason; the customer's yes approves it; the write runs after that yes."""
    production: list[str] = []
    ticket = cancel_ticket(retail)
    agent, model = approval_agent(ticket, ticket.turns()[2].text, production, wrapped=wrapped)
    result = await run_trial(retail, ticket.scenario, 0, pydantic_ai_agent(agent))
    assert_asked_then_cancelled(result, ticket)
    assert production == [] and not model.answers


async def test_a_tool_that_requires_approval_is_denied_on_the_customer_s_no(retail: Sandbox) -> None:
    ticket = cancel_ticket(retail)
    agent, model = approval_agent(ticket, REFUSED, [])
    result = await run_trial(
        retail, ticket.scenario, 0, pydantic_ai_agent(agent),
        customer_factory=lambda context: SaysNo(ScriptedCustomer.for_trial(context)),
    )  # fmt: skip
    assert_refused_and_not_cancelled(result)
    assert not model.answers
