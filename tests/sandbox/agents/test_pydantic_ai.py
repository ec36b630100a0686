"""A pydantic-ai agent replayed through the adapter, its model being pydantic-ai's own offline FunctionModel."""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from passhat.sandbox import Sandbox, TrialResult, run_trial
from passhat.sandbox.agents import pydantic_ai_agent
from tests.sandbox.retail_paths import CancelTicket, Turn, cancel_ticket


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
