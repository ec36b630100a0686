"""An OpenAI Agents SDK agent replayed through the adapter: offline with the SDK's own ScriptedModel, and over the
Chat Completions wire format with its OpenAIChatCompletionsModel pointed at a local server."""

from __future__ import annotations

import json
from typing import Any

from agents import Agent, OpenAIChatCompletionsModel
from agents.testing import ScriptedModel, assistant_message, function_call
from openai import AsyncOpenAI

from passhat.sandbox import Sandbox, TrialResult, run_trial
from passhat.sandbox.agents import openai_agents_agent
from tests.sandbox.chat_completions_api import chat_completions_api, text_turn, tool_turn
from tests.sandbox.retail_paths import CancelTicket, Turn, cancel_ticket


def scripted(turns: list[Turn]) -> ScriptedModel:
    steps: list[Any] = []
    for turn in turns:
        steps.extend([function_call(s.name, s.arguments, call_id=s.call_id)] for s in turn.calls)
        steps.append([assistant_message(turn.text)])
    return ScriptedModel(steps)


async def _trial(retail: Sandbox, ticket: CancelTicket, *, wrong_entity: bool) -> tuple[TrialResult, ScriptedModel]:
    model = scripted(ticket.turns(wrong_entity=wrong_entity))
    agent = Agent(name="support", model=model)  # the team's agent, as they wrote it (no tools, no instructions)
    return await run_trial(retail, ticket.scenario, 0, openai_agents_agent(agent)), model


async def test_an_agents_sdk_agent_solves_the_cancellation_with_the_trials_tools(retail: Sandbox) -> None:
    ticket = cancel_ticket(retail)
    result, model = await _trial(retail, ticket, wrong_entity=False)
    assert result.passed, (result.record.verdict, result.record.infra_error)
    assert result.agent == "openai-agents:support"
    assert [c.name for c in result.record.tool_calls] == ["find_customer_by_email", "get_order", "cancel_pending_order"]
    first = model.first_call
    assert first is not None
    assert first.system_instructions == retail.domain.policy
    assert {"cancel_pending_order", "get_order"} <= {tool.name for tool in first.tools}
    assert model.remaining_steps == 0


async def test_an_agents_sdk_agent_cancelling_the_other_order_is_graded_wrong_entity(retail: Sandbox) -> None:
    ticket = cancel_ticket(retail)
    result, _ = await _trial(retail, ticket, wrong_entity=True)
    assert not result.passed
    assert result.record.tool_calls[-1].arguments["order_id"] == ticket.sibling
    assert result.signature is not None and result.signature.label == "wrong_entity"


async def test_an_agents_sdk_agent_on_a_chat_completions_server_is_graded_like_any_trial(retail: Sandbox) -> None:
    ticket = cancel_ticket(retail)
    answers = []
    for turn in ticket.turns():
        answers.extend(tool_turn(s.call_id, s.name, s.arguments) for s in turn.calls)
        answers.append(text_turn(turn.text))
    with chat_completions_api(answers) as api:
        client = AsyncOpenAI(api_key="k", base_url=api.url, max_retries=0)
        agent = Agent(name="support", model=OpenAIChatCompletionsModel(model="local", openai_client=client))
        result = await run_trial(retail, ticket.scenario, 0, openai_agents_agent(agent))
        await client.close()
    assert result.passed, (result.record.verdict, result.record.infra_error)
    tool_replies = [m for m in api.requests[2]["messages"] if m["role"] == "tool"]
    assert tool_replies[0]["tool_call_id"] == "call_1"
    assert json.loads(tool_replies[0]["content"]) == {"customer_id": ticket.scenario.intent["customer_id"]}
    assert api.requests[0]["messages"][0]["content"] == retail.domain.policy


async def test_the_team_s_agent_with_its_own_tools_gets_the_trial_s_in_their_place(retail: Sandbox) -> None:
    from agents import function_tool

    production: list[str] = []

    @function_tool
    def get_order(order_id: str) -> str:
        """The team's own lookup, against production."""
        production.append(order_id)
        return "production"

    @function_tool
    def store_hours() -> str:
        """A tool the domain does not serve: kept."""
        return "9 to 5"

    ticket = cancel_ticket(retail)
    model = scripted(ticket.turns())
    agent = Agent(name="support", model=model, tools=[get_order, store_hours])
    result = await run_trial(retail, ticket.scenario, 0, openai_agents_agent(agent))
    assert result.record.infra_error is None and result.passed
    assert production == []
    first = model.first_call
    assert first is not None
    names = [tool.name for tool in first.tools]
    assert names.count("get_order") == 1 and "store_hours" in names
