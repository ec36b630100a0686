"""The orchestrator's termination reasons, a user's own agent factory, and trials over stdio and HTTP."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

import pytest

from passhat.sandbox import (
    AgentError,
    FlawConfig,
    Message,
    ReferenceAgent,
    RunConfig,
    Sandbox,
    Toolbox,
    TrialContext,
    broken_by_harness,
    run_trial,
    run_trials,
)
from passhat.sandbox.agents._resolve import resolve_agent


class Hammer:
    """Calls a tool with an unknown order id again and again."""

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        await tools.call("get_order", {"order_id": "#W0"})
        return Message("agent", "Let me look again. Which order was it?", asks=("order_id",))


class Chatter:
    """Never acts, keeps asking the customer for its order number."""

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        return Message("agent", "Could you tell me the order number again?", asks=("order_id",))


class Crasher:
    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        raise RuntimeError("agent bug")


def factory(agent: object) -> object:
    return lambda context: agent


async def test_too_many_tool_errors_end_the_trial(retail: Sandbox) -> None:
    scenario = retail.scenarios("order_status_inquiry", 1)[0]
    result = await run_trial(retail, scenario, 0, factory(Hammer()), config=RunConfig(max_tool_errors=3))  # type: ignore[arg-type]
    assert result.record.termination_reason == "tool_error_limit"
    assert len(result.record.tool_calls) == 3
    assert result.signature is not None and result.signature.label != "infra_error"


async def test_the_step_limit_ends_a_conversation_that_goes_nowhere(retail: Sandbox) -> None:
    scenario = retail.scenarios("order_status_inquiry", 1)[0]
    result = await run_trial(retail, scenario, 0, factory(Chatter()), config=RunConfig(max_turns=4))  # type: ignore[arg-type]
    assert result.record.termination_reason == "step_limit"
    assert len(result.record.transcript) == 1 + 2 * 4
    assert not result.passed


async def test_an_agent_that_raises_is_recorded_not_propagated(retail: Sandbox) -> None:
    scenario = retail.scenarios("order_status_inquiry", 1)[0]
    result = await run_trial(retail, scenario, 0, factory(Crasher()))  # type: ignore[arg-type]
    assert result.record.termination_reason == "infra_error"
    assert "agent bug" in (result.record.infra_error or "")


class GivesUp:
    """Looks the order up, then fails its turn as a framework does when the agent's model loops or misbehaves."""

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        await tools.call("get_order", {"order_id": "#W0"})
        raise AgentError("GraphRecursionError: Recursion limit of 25 reached without hitting a stop condition")


async def test_an_agent_s_own_failure_is_graded_and_counted_not_a_harness_failure(retail: Sandbox) -> None:
    """`AgentError` (what the framework adapters raise when the agent's model loops, misbehaves or passes a limit)
    ends the trial as the agent's failure: graded on the state it left, with a signature that says why, in every
    figure. Any other exception stays a harness failure (above)."""
    from passhat.collector.reliability import agent_trials

    scenario = retail.scenarios("cancel_pending_order", 1)[0]
    result = await run_trial(retail, scenario, 0, factory(GivesUp()))  # type: ignore[arg-type]
    assert result.record.termination_reason == "agent_error"
    assert result.record.infra_error is None and not result.passed
    assert result.signature is not None and result.signature.label not in ("infra_error", "simulator_error")
    assert "agent_error (GraphRecursionError: Recursion limit of 25" in result.signature.evidence
    assert [call.name for call in result.record.tool_calls] == ["get_order"]
    assert not broken_by_harness(result)
    crashed = await run_trial(retail, scenario, 0, factory(Crasher()))  # type: ignore[arg-type]
    assert broken_by_harness(crashed)
    rows = [
        SimpleNamespace(failure_label=r.signature.label, failure_evidence=r.signature.evidence)
        for r in (result, crashed)
        if r.signature is not None
    ]
    assert agent_trials(rows) == rows[:1]  # in every figure; the crash in none


async def test_the_timeout_ends_a_trial(retail: Sandbox) -> None:
    class Sleeper:
        async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
            import asyncio

            await asyncio.sleep(5)
            return Message("agent", "done", final=True)

    scenario = retail.scenarios("order_status_inquiry", 1)[0]
    result = await run_trial(retail, scenario, 0, factory(Sleeper()), config=RunConfig(timeout=0.2))  # type: ignore[arg-type]
    assert result.record.termination_reason == "timeout"


async def test_a_users_own_agent_factory_runs_by_module_and_function(retail: Sandbox) -> None:
    agent_factory = resolve_agent("tests.sandbox.custom_agent:make")
    refusals = await run_trials(retail, retail.scenarios("cancel_shipped_order", 3), 1, agent_factory)
    cancellations = await run_trials(retail, retail.scenarios("cancel_pending_order", 3), 1, agent_factory)
    assert all(r.passed for r in refusals)
    assert not any(r.passed for r in cancellations)


def test_the_trial_context_exposes_policy_and_script(retail: Sandbox) -> None:
    scenario = retail.scenarios("exchange_variant", 1)[0]
    context = TrialContext(retail.domain, scenario, 0, "run")
    assert context.policy == retail.domain.policy
    assert context.script.goal.startswith("Exchange")


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_trials_pass_over_real_stdio_and_http_transports(retail: Sandbox, transport: str) -> None:
    scenarios = retail.scenarios("change_pending_address", 2) + retail.scenarios("return_to_gift_card", 1)
    results = await run_trials(
        retail,
        scenarios,
        1,
        ReferenceAgent.factory(FlawConfig.off()),
        config=RunConfig(transport=transport),  # type: ignore[arg-type]
    )
    assert [(r.passed, r.record.termination_reason) for r in results] == [(True, "customer_stop")] * 3


class DirectWriter:
    """An agent that changes its backend through a database session, not through MCP tools."""

    def __init__(self, context: TrialContext) -> None:
        self.intent = context.scenario.intent  # a test double may peek; a real agent would ask

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        from sqlalchemy import update

        from passhat.sandbox.domains.retail import models

        assert tools.engine is not None
        new = {f"ship_{key}": value for key, value in self.intent["address"].items()}
        with tools.engine.begin() as connection:
            connection.execute(
                update(models.orders).where(models.orders.c.order_id == self.intent["order_id"]).values(**new)
            )
        return Message("agent", "Your order will ship to the new address.", final=True)


async def test_an_agent_may_use_its_database_session_and_is_graded_on_state(retail: Sandbox) -> None:
    scenarios = retail.scenarios("change_pending_address", 3)
    results = await run_trials(retail, scenarios, 1, DirectWriter)
    assert all(r.passed for r in results)
    assert all(r.record.tool_calls == [] for r in results)
