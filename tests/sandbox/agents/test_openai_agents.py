"""An OpenAI Agents SDK agent replayed through the adapter: offline with the SDK's own ScriptedModel, and over the
Chat Completions wire format with its OpenAIChatCompletionsModel pointed at a local server."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from agents import Agent, OpenAIChatCompletionsModel, RunContextWrapper
from agents.testing import ScriptedModel, assistant_message, function_call
from openai import AsyncOpenAI
from sqlalchemy import Engine, text

from passhat.sandbox import Sandbox, ScriptedCustomer, TrialResult, run_trial
from passhat.sandbox.agents import openai_agents_agent
from tests.sandbox.chat_completions_api import chat_completions_api, text_turn, tool_turn
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
    """What the team's own tools reach their backend through (the run's context)."""

    engine: Engine


def scripted(turns: list[Turn], first: tuple[Any, ...] = ()) -> ScriptedModel:
    """The SDK's scripted model answering with the script (after ``first``, steps of the team's own)."""
    steps: list[Any] = list(first)
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


async def test_the_run_context_binds_the_agent_s_own_tools_to_the_trial_s_database(retail: Sandbox) -> None:
    """A tool the domain does not serve stays on the team's agent; `context=` hands it the trial's database as the
    run's context (``ctx.context``), as pydantic-ai's `deps` do."""
    from agents import function_tool

    counted: list[int] = []

    @function_tool
    def count_pending(ctx: RunContextWrapper[Desk]) -> int:
        """How many orders are pending (the team's own tool: it reads the database it is given)."""
        with ctx.context.engine.connect() as connection:
            found = int(connection.execute(text("SELECT count(*) FROM orders WHERE status = 'pending'")).scalar_one())
        counted.append(found)
        return found

    ticket = cancel_ticket(retail)
    model = scripted(ticket.turns(), first=([function_call("count_pending", {}, call_id="own_1")],))
    agent = Agent(name="support", model=model, tools=[count_pending])
    result = await run_trial(
        retail, ticket.scenario, 0, openai_agents_agent(agent, context=lambda context, tools: Desk(tools.engine))
    )
    assert result.record.infra_error is None and result.passed, result.record.verdict
    with retail.memory_copy().engine.connect() as connection:  # the seeded state the trial started from
        seeded = int(connection.execute(text("SELECT count(*) FROM orders WHERE status = 'pending'")).scalar_one())
    assert counted == [seeded]
    with pytest.raises(TypeError, match="context must be a function"):
        openai_agents_agent(agent, context=Desk(retail.memory_copy().engine))  # the value, not a function making it


async def test_an_agent_past_its_turn_limit_is_the_agent_s_failure(retail: Sandbox) -> None:
    """A model that keeps calling tools passes the SDK's turn limit (`MaxTurnsExceeded`): the agent's failure
    (`agent_error`), graded and counted, not a harness failure."""
    ticket = cancel_ticket(retail)
    email = ticket.scenario.intent["email"]
    model = ScriptedModel(
        [[function_call("find_customer_by_email", {"email": email}, call_id=f"loop_{n}")] for n in range(30)]
    )
    result = await run_trial(retail, ticket.scenario, 0, openai_agents_agent(Agent(name="support", model=model)))
    assert result.record.termination_reason == "agent_error" and result.record.infra_error is None
    assert not result.passed and result.signature is not None and result.signature.is_agent_failure
    assert "agent_error (MaxTurnsExceeded: " in result.signature.evidence


def production_tool(name: str, called: list[str]) -> Any:
    """The team's own tool of a domain tool's name, against production: each call is noted in ``called``."""
    from agents import FunctionTool

    async def call(context: Any, arguments: str) -> str:
        called.append(name)
        return "production"

    return FunctionTool(
        name=name, description=f"The team's own {name}, against production.", on_invoke_tool=call,
        params_json_schema={"type": "object", "properties": {}, "additionalProperties": True},
        strict_json_schema=False,
    )  # fmt: skip


@pytest.mark.parametrize("wrapped", [False, True], ids=["agent", "handoff()"])
async def test_the_agents_it_hands_off_to_use_the_trial_s_tools_not_production_s(
    retail: Sandbox, wrapped: bool
) -> None:
    """A triage agent hands each turn off to a specialist whose own tools talk to production. The specialist
    replayed is a copy whose tools of the trial's names are the trial's: production is never called."""
    from agents import Handoff, function_tool, handoff

    production: list[str] = []

    @function_tool
    def store_hours() -> str:
        """A tool the domain does not serve: kept."""
        return "9 to 5"

    ticket = cancel_ticket(retail)
    names = ("find_customer_by_email", "get_order", "cancel_pending_order")
    specialist = Agent(name="cancellations", tools=[*(production_tool(n, production) for n in names), store_hours])
    transfer = Handoff.default_tool_name(specialist)
    steps: list[Any] = []
    for turn in ticket.turns():  # each turn starts at the triage agent, which hands off
        steps.append([function_call(transfer, {}, call_id=f"handoff_{len(steps)}")])
        steps.extend([function_call(s.name, s.arguments, call_id=s.call_id)] for s in turn.calls)
        steps.append([assistant_message(turn.text)])
    model = ScriptedModel(steps)
    specialist.model = model
    triage = Agent(name="triage", model=model, handoffs=[handoff(specialist) if wrapped else specialist])
    result = await run_trial(retail, ticket.scenario, 0, openai_agents_agent(triage))
    assert result.record.infra_error is None and result.passed, result.record.verdict
    assert production == []
    assert [c.name for c in result.record.tool_calls] == list(names)
    assert [tool.name for tool in specialist.tools][-1] == "store_hours"  # the team's agent itself is untouched


@pytest.mark.parametrize("next_turn", ["agent", "last_agent"])
async def test_the_next_customer_message_goes_to_the_agent_the_app_gives_it(retail: Sandbox, next_turn: str) -> None:
    """Triage hands off once, in the first turn. With ``next_turn="last_agent"`` (an app that keeps
    ``result.last_agent``) the specialist takes every later message itself, and triage's model is asked once; with
    the default each message starts at triage again, which hands off again."""
    from agents import Handoff

    ticket = cancel_ticket(retail)
    turns = ticket.turns()
    assert len(turns) > 1
    production: list[str] = []
    names = ("find_customer_by_email", "get_order", "cancel_pending_order")
    specialist = Agent(
        name="cancellations", model=scripted(turns), tools=[production_tool(n, production) for n in names]
    )
    transfer = Handoff.default_tool_name(specialist)
    handoffs = 1 if next_turn == "last_agent" else len(turns)
    triage_model = ScriptedModel([function_call(transfer, {}, call_id=f"handoff_{n}")] for n in range(handoffs))
    triage = Agent(name="triage", model=triage_model, handoffs=[specialist])
    result = await run_trial(retail, ticket.scenario, 0, openai_agents_agent(triage, next_turn=next_turn))  # type: ignore[arg-type]
    assert result.record.infra_error is None and result.passed, result.record.verdict
    assert len(triage_model.calls) == handoffs and triage_model.remaining_steps == 0
    assert [c.name for c in result.record.tool_calls] == list(names) and production == []


def test_a_next_turn_it_does_not_know_is_refused_with_both_choices() -> None:
    with pytest.raises(ValueError, match=r"next_turn must be 'agent' .* or 'last_agent' .*got 'last'"):
        openai_agents_agent(Agent(name="support"), next_turn="last")  # type: ignore[arg-type]


def test_handoffs_that_go_back_and_forth_are_copied_once_and_lead_back_to_the_trial_s_agent() -> None:
    """Triage hands off to a specialist that hands back to triage: each is copied once, the specialist's way back
    reaches the trial's own copy of triage, and the originals are left as they were."""
    from agents import FunctionTool

    from passhat.sandbox.agents._openai_agents import _Handoffs

    def named(name: str) -> Any:
        async def call(context: Any, arguments: str) -> str:
            return name

        return FunctionTool(
            name=name, description=name, params_json_schema={"type": "object", "properties": {}}, on_invoke_tool=call
        )

    production, trial = named("get_order"), named("get_order")
    triage = Agent(name="triage")
    specialist = Agent(name="orders", tools=[production], handoffs=[triage])
    triage.handoffs = [specialist]
    ready = triage.clone(tools=[trial])
    behind = _Handoffs([trial])
    behind.made[id(triage)] = ready
    [copy] = behind.each(triage.handoffs)
    assert copy is not specialist and copy.tools == [trial] and copy.handoffs == [ready]
    assert specialist.tools == [production] and specialist.handoffs == [triage]


def approval_steps(ticket: CancelTicket, after_the_answer: str) -> ScriptedModel:
    """The model verifies the customer, reads the order and calls the cancellation, with no question of its own
    (the tool asks: it needs approval); then ``after_the_answer``."""
    first, second, third = ticket.turns()
    calls = [*second.calls, *third.calls]
    return ScriptedModel(
        [
            [assistant_message(first.text)],
            *([function_call(s.name, s.arguments, call_id=s.call_id)] for s in calls),
            [assistant_message(after_the_answer)],
        ]
    )


async def test_a_tool_that_needs_approval_asks_the_customer_and_runs_on_their_yes(retail: Sandbox) -> None:
    """The team's `cancel_pending_order` needs approval (`needs_approval=True`): the trial's tool of that name does
    too. The run stops there, the agent's turn asks (stating the order and the reason), the customer's yes approves
    it, the trial's cancellation runs, and the consent check sees the yes before the write."""
    production: list[str] = []
    ticket = cancel_ticket(retail)
    gated = dataclasses.replace(production_tool("cancel_pending_order", production), needs_approval=True)
    model = approval_steps(ticket, ticket.turns()[2].text)
    agent = Agent(name="support", model=model, tools=[gated])
    result = await run_trial(retail, ticket.scenario, 0, openai_agents_agent(agent))
    assert_asked_then_cancelled(result, ticket)
    assert production == [] and model.remaining_steps == 0


async def test_a_tool_that_needs_approval_is_not_run_on_the_customer_s_no(retail: Sandbox) -> None:
    """The customer says no: the call is rejected (the model is told so and answers), nothing is written."""
    ticket = cancel_ticket(retail)
    gated = dataclasses.replace(production_tool("cancel_pending_order", []), needs_approval=True)
    model = approval_steps(ticket, REFUSED)
    agent = Agent(name="support", model=model, tools=[gated])
    result = await run_trial(
        retail, ticket.scenario, 0, openai_agents_agent(agent),
        customer_factory=lambda context: SaysNo(ScriptedCustomer.for_trial(context)),
    )  # fmt: skip
    assert_refused_and_not_cancelled(result)
    assert model.remaining_steps == 0


def test_an_approval_question_that_is_not_a_function_is_refused() -> None:
    with pytest.raises(TypeError, match=r"approval_question is a function \(tool_name, arguments\)"):
        openai_agents_agent(Agent(name="support"), approval_question="Shall I?")  # type: ignore[arg-type]
