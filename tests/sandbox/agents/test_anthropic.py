"""AnthropicAgent and LLMCustomer through the real `anthropic` client against a local Messages API server."""

from __future__ import annotations

import json

import pytest
from anthropic import AsyncAnthropic
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import passhat
from passhat.sandbox import RunConfig, Sandbox, run_trial
from passhat.sandbox.agents._anthropic import AnthropicAgent, LLMCustomer
from tests.sandbox.messages_api import messages_api, text_turn, tool_turn


def tool_results(body: dict[str, object]) -> list[dict[str, object]]:
    found = []
    for message in body["messages"]:  # type: ignore[attr-defined]
        if isinstance(message["content"], list):
            found.extend(block for block in message["content"] if block.get("type") == "tool_result")
    return found


async def test_claude_cancels_an_order_over_mcp_with_a_claude_customer(retail: Sandbox) -> None:
    scenario = retail.scenarios("cancel_pending_order", 1)[0]
    intent = scenario.intent
    order_id, reason = intent["order_id"], intent["reason"]
    agent_turns = [
        text_turn("Happy to help. What is the email address on your account?"),
        tool_turn("toolu_01", "find_customer_by_email", {"email": intent["email"]}),
        tool_turn("toolu_02", "get_order", {"order_id": order_id}),
        text_turn(f"Order {order_id} is pending. I will cancel it ({reason}) and refund it. Shall I proceed?"),
        tool_turn("toolu_03", "cancel_pending_order", {"order_id": order_id, "reason": reason}),
        text_turn(f"Done: order {order_id} is cancelled and the refund is on its way."),
    ]
    customer_turns = [
        text_turn(f"Hi, please cancel my order {order_id}, it's {reason}."),
        text_turn(f"It's {intent['email']}."),
        text_turn("Yes, please go ahead. ###CONSENT###"),
        text_turn("Thank you! ###STOP###"),
    ]
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    runtime = passhat.configure(tracer_provider=provider, make_global=False)
    with messages_api(agent_turns, customer_turns) as api:
        client = AsyncAnthropic(api_key="test-key", base_url=api.url, max_retries=0)
        result = await run_trial(
            retail,
            scenario,
            0,
            lambda context: AnthropicAgent(context, model="claude-test", client=client),
            customer_factory=lambda context: LLMCustomer(context, model="claude-test", client=client),
            config=RunConfig(),
            runtime=runtime,
        )
        await client.close()
    chats = [s for s in exporter.get_finished_spans() if s.name == "chat claude-test"]
    assert len(chats) == len(api.requests)
    tool_ids = [
        s.attributes["gen_ai.tool.call.id"]
        for s in exporter.get_finished_spans()
        if s.name.startswith("execute_tool") and s.attributes
    ]
    assert tool_ids == ["toolu_01", "toolu_02", "toolu_03"]
    agent_chats = [s for s in chats if s.attributes and s.attributes["passhat.participant"] == "agent"]
    assert [
        s.attributes["passhat.chat.tool_call_ids"]
        for s in agent_chats
        if s.attributes and "passhat.chat.tool_call_ids" in s.attributes
    ] == [("toolu_01",), ("toolu_02",), ("toolu_03",)]
    assert result.passed, result.record.verdict
    assert result.record.termination_reason == "customer_stop"
    assert [c.name for c in result.record.tool_calls] == ["find_customer_by_email", "get_order", "cancel_pending_order"]
    # The customer model's yes is a recorded fact of its turn (the marker is not left in the text), and the
    # cancellation came in the agent turn after it.
    yes = next(index for index, (role, text) in enumerate(result.record.transcript) if text == "Yes, please go ahead.")
    assert result.record.consents == {yes: "*"}
    assert result.record.tool_calls[-1].turn == yes + 1
    assert result.usage.input_tokens == 100 * len(api.requests)
    agent_requests = [r for r in api.requests if "You are a customer talking" not in str(r["system"])]
    assert agent_requests[0]["system"] == retail.domain.policy
    assert {tool["name"] for tool in agent_requests[0]["tools"]} >= {"cancel_pending_order", "get_order"}
    found = tool_results(agent_requests[2])
    assert found[0]["tool_use_id"] == "toolu_01"
    assert json.loads(str(found[0]["content"])) == {"customer_id": intent["customer_id"]}
    assert found[0]["is_error"] is False
    customer_requests = [r for r in api.requests if "You are a customer talking" in str(r["system"])]
    assert intent["email"] in str(customer_requests[0]["system"])  # the customer knows its facts


async def test_a_tool_error_goes_back_to_claude_as_an_error_result(retail: Sandbox) -> None:
    scenario = retail.scenarios("cancel_pending_order", 1)[0]
    order_id = scenario.intent["order_id"]
    agent_turns = [
        tool_turn("toolu_01", "cancel_pending_order", {"order_id": order_id, "reason": "no longer needed"}),
        text_turn("I could not cancel it: I need to verify your identity first. What is your email?"),
        text_turn("Goodbye."),
    ]
    customer_turns = [text_turn("Cancel my order please."), text_turn("I'd rather not say. ###STOP###")]
    with messages_api(agent_turns, customer_turns) as api:
        client = AsyncAnthropic(api_key="test-key", base_url=api.url, max_retries=0)
        result = await run_trial(
            retail,
            scenario,
            0,
            lambda context: AnthropicAgent(context, model="claude-test", client=client),
            customer_factory=lambda context: LLMCustomer(context, model="claude-test", client=client),
        )
        await client.close()
    assert not result.passed
    assert result.record.tool_calls[0].error_type == "precondition_failed"
    sent = tool_results(api.requests[2])
    assert sent[0]["is_error"] is True and "precondition_failed" in str(sent[0]["content"])
    assert result.signature is not None and result.signature.label == "tool_usage.precondition"


async def test_an_api_failure_of_the_customer_is_a_simulator_error(retail: Sandbox) -> None:
    scenario = retail.scenarios("order_status_inquiry", 1)[0]
    with messages_api([], []) as api:  # no recorded turns: the server answers 400
        client = AsyncAnthropic(api_key="test-key", base_url=api.url, max_retries=0)
        result = await run_trial(
            retail,
            scenario,
            0,
            lambda context: AnthropicAgent(context, model="claude-test", client=client),
            customer_factory=lambda context: LLMCustomer(context, model="claude-test", client=client),
        )
        await client.close()
    assert result.record.termination_reason == "simulator_error"
    assert result.signature is not None and result.signature.label == "simulator_error"
    assert not result.signature.is_agent_failure


def test_the_anthropic_agent_without_a_key_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from passhat.sandbox import DomainError
    from passhat.sandbox.agents._resolve import resolve_agent

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(DomainError, match="set ANTHROPIC_API_KEY"):
        resolve_agent("anthropic")


def test_replay_runs_claude_from_the_command_line(retail: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from passhat.collector.cli import app

    intent = retail.scenarios("cancel_pending_order", 1)[0].intent  # the scenario the command will draw
    order_id, reason = intent["order_id"], intent["reason"]
    agent_turns = [
        text_turn("Happy to help. Could you tell me the email on your account?"),
        tool_turn("toolu_01", "find_customer_by_email", {"email": intent["email"]}),
        tool_turn("toolu_02", "get_order", {"order_id": order_id}),
        text_turn(f"I will cancel order {order_id} ({reason}) and refund it. Shall I proceed?"),
        tool_turn("toolu_03", "cancel_pending_order", {"order_id": order_id, "reason": reason}),
        text_turn(f"Order {order_id} is cancelled and refunded."),
    ]
    with messages_api(agent_turns, []) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        args = ["bench", "--domain", "retail", "--task-type", "cancel_pending_order", "--scenarios", "1", "--k", "1"]
        result = CliRunner().invoke(app, [*args, "--agent", "anthropic", "--model", "claude-test", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    (row,) = payload["task_types"]
    assert payload["agent"] == "anthropic" and row["pass_at_1"] == 1.0
    assert row["input_tokens"] == 100 * len(agent_turns)
    assert all(request["model"] == "claude-test" for request in api.requests)


async def test_a_write_before_the_customer_models_yes_fails_as_a_policy_violation(retail: Sandbox) -> None:
    scenario = retail.scenarios("cancel_pending_order", 1)[0]
    intent = scenario.intent
    order_id, reason = intent["order_id"], intent["reason"]
    agent_turns = [
        text_turn("Happy to help. What is the email address on your account?"),
        tool_turn("toolu_01", "find_customer_by_email", {"email": intent["email"]}),
        tool_turn("toolu_02", "get_order", {"order_id": order_id}),
        tool_turn("toolu_03", "cancel_pending_order", {"order_id": order_id, "reason": reason}),
        text_turn(f"I have cancelled order {order_id} ({reason}). Is that all right?"),
        text_turn("Great, have a nice day."),
    ]
    customer_turns = [
        text_turn(f"Hi, please cancel my order {order_id}, it's {reason}."),
        text_turn(f"It's {intent['email']}."),
        text_turn("Yes, that's fine. ###CONSENT###"),
        text_turn("Thank you! ###STOP###"),
    ]
    with messages_api(agent_turns, customer_turns) as api:
        client = AsyncAnthropic(api_key="test-key", base_url=api.url, max_retries=0)
        result = await run_trial(
            retail,
            scenario,
            0,
            lambda context: AnthropicAgent(context, model="claude-test", client=client),
            customer_factory=lambda context: LLMCustomer(context, model="claude-test", client=client),
        )
        await client.close()
    customer_prompt = next(r["system"] for r in api.requests if "You are a customer talking" in str(r["system"]))
    assert "###CONSENT###" in str(customer_prompt)  # the model is told how to mark its yes
    assert result.record.consents  # the yes came, but after the write
    assert not result.passed and result.signature is not None
    assert result.signature.label == "policy_violation"
    assert "without the customer's yes" in result.signature.evidence
