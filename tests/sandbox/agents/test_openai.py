"""OpenAIAgent and OpenAICustomer through the real `openai` client against a local Chat Completions server."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai import AsyncOpenAI
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import passhat
from passhat.sandbox import DomainError, Sandbox, run_trial
from passhat.sandbox.agents import resolve_agent
from passhat.sandbox.agents._openai import OpenAIAgent, OpenAICustomer
from tests.sandbox.chat_completions_api import chat_completions_api, is_customer, text_turn, tool_turn
from tests.sandbox.retail_paths import CancelTicket, Turn, cancel_ticket


def chat_turns(turns: list[Turn]) -> list[dict[str, Any]]:
    """The scripted agent's turns as Chat Completions answers: one per tool call, then the turn's text."""
    answers = []
    for turn in turns:
        answers.extend(tool_turn(step.call_id, step.name, step.arguments) for step in turn.calls)
        answers.append(text_turn(turn.text))
    return answers


def tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "tool"]


async def _run(retail: Sandbox, ticket: CancelTicket, *, wrong_entity: bool, runtime: passhat.Passhat | None = None):
    with chat_completions_api(chat_turns(ticket.turns(wrong_entity=wrong_entity))) as api:
        client = AsyncOpenAI(api_key="test-key", base_url=api.url, max_retries=0)
        result = await run_trial(
            retail,
            ticket.scenario,
            0,
            lambda context: OpenAIAgent(context, model="gpt-test", client=client),
            runtime=runtime,
        )
        await client.close()
    return result, api


async def test_an_openai_compatible_model_cancels_the_order_and_passes(retail: Sandbox) -> None:
    ticket = cancel_ticket(retail)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    runtime = passhat.configure(tracer_provider=provider, make_global=False)
    result, api = await _run(retail, ticket, wrong_entity=False, runtime=runtime)
    assert result.passed, result.record.verdict
    assert result.record.termination_reason == "customer_stop"
    assert [c.name for c in result.record.tool_calls] == ["find_customer_by_email", "get_order", "cancel_pending_order"]
    assert result.agent == "openai:gpt-test"
    first = api.requests[0]
    assert first["messages"][0] == {"role": "system", "content": retail.domain.policy}
    names = {tool["function"]["name"] for tool in first["tools"]}
    assert {"cancel_pending_order", "get_order", "find_customer_by_email"} <= names
    # The tool's answer went back to the model under the model's own call id, as the wire format says.
    sent = tool_messages(api.requests[2])
    assert sent[0]["tool_call_id"] == "call_1"
    assert json.loads(sent[0]["content"]) == {"customer_id": ticket.scenario.intent["customer_id"]}
    assert api.headers[0]["authorization"] == "Bearer test-key"
    spans = exporter.get_finished_spans()
    chats = [s for s in spans if s.name == "chat gpt-test"]
    assert len(chats) == len(api.requests)
    assert all(s.attributes and s.attributes["gen_ai.provider.name"] == "openai" for s in chats)
    tool_ids = [
        s.attributes["gen_ai.tool.call.id"] for s in spans if s.name.startswith("execute_tool") and s.attributes
    ]
    assert tool_ids == ["call_1", "call_2", "call_3"]
    assert result.usage.input_tokens == 100 * len(api.requests)


async def test_an_openai_compatible_model_cancelling_the_other_order_fails_as_wrong_entity(retail: Sandbox) -> None:
    ticket = cancel_ticket(retail)
    result, _ = await _run(retail, ticket, wrong_entity=True)
    assert not result.passed
    assert result.record.tool_calls[-1].arguments["order_id"] == ticket.sibling
    assert result.signature is not None and result.signature.label == "wrong_entity"


async def test_a_tool_error_goes_back_to_the_model_as_the_tool_message(retail: Sandbox) -> None:
    scenario = retail.scenarios("cancel_pending_order", 1)[0]
    order_id = scenario.intent["order_id"]
    turns = [
        tool_turn("call_1", "cancel_pending_order", {"order_id": order_id, "reason": "no longer needed"}),
        tool_turn("call_2", "get_order", {"order_id": 17}),  # not even a string: MCP's validation refuses it
        text_turn("I could not cancel it: I need to verify your identity first. What is your email?"),
    ]
    with chat_completions_api(turns) as api:
        client = AsyncOpenAI(api_key="k", base_url=api.url, max_retries=0)
        result = await run_trial(
            retail, scenario, 0, lambda context: OpenAIAgent(context, model="m", client=client), config=None
        )
        await client.close()
    assert result.record.tool_calls[0].error_type == "precondition_failed"
    sent = tool_messages(api.requests[1])
    assert sent[0]["tool_call_id"] == "call_1" and "precondition_failed" in sent[0]["content"]
    assert not result.passed and result.signature is not None


async def test_an_openai_compatible_model_can_play_the_customer(retail: Sandbox) -> None:
    ticket = cancel_ticket(retail)
    intent = ticket.scenario.intent
    customer_turns = [
        text_turn(f"Hi, please cancel my order {ticket.order_id}, it's {intent['reason']}."),
        text_turn(f"It's {intent['email']}."),
        text_turn("Yes, please go ahead. ###CONSENT###"),
        text_turn("Thank you! ###STOP###"),
    ]
    with chat_completions_api(chat_turns(ticket.turns()), customer_turns) as api:
        client = AsyncOpenAI(api_key="k", base_url=api.url, max_retries=0)
        result = await run_trial(
            retail,
            ticket.scenario,
            0,
            lambda context: OpenAIAgent(context, model="m", client=client),
            customer_factory=lambda context: OpenAICustomer(context, model="m", client=client),
        )
        await client.close()
    assert result.passed, result.record.verdict
    assert result.record.termination_reason == "customer_stop"
    assert result.record.transcript[-1] == ("customer", "Thank you!")
    yes = result.record.transcript.index(("customer", "Yes, please go ahead."))
    assert result.record.consents == {yes: "*"}  # the marker is a recorded fact, not left in the text
    customer_requests = [r for r in api.requests if is_customer(r)]
    assert len(customer_requests) == 4
    assert intent["email"] in customer_requests[0]["messages"][0]["content"]  # the customer knows its facts


def test_the_openai_agent_without_a_key_or_server_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(DomainError, match="set OPENAI_API_KEY"):
        resolve_agent("openai")


@pytest.mark.slow
def test_replay_runs_an_openai_compatible_model_from_the_command_line(
    retail: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from passhat.collector.cli import app

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a local server needs no key once its URL is given
    scenario = retail.scenarios("cancel_pending_order", 1)[0]  # the scenario the command draws
    turns = CancelTicket(scenario, sibling="").turns()
    with chat_completions_api(chat_turns(turns)) as api:
        outcome = CliRunner().invoke(
            app,
            [
                "bench", "--domain", "retail", "--task-type", "cancel_pending_order", "--scenarios", "1",
                "--k", "1", "--agent", "openai", "--model", "local-model", "--base-url", api.url, "--json",
            ],
        )  # fmt: skip
    assert outcome.exit_code == 0, outcome.output
    report = json.loads(outcome.stdout)  # warnings of the trials' HTTP servers may go to stderr
    assert report["agent"] == "openai"
    assert report["task_types"][0]["pass_at_1"] == 1.0
    assert {r["model"] for r in api.requests} == {"local-model"}
    assert report["task_types"][0]["input_tokens"] == 100 * len(api.requests)


def test_a_base_url_without_its_scheme_is_one_clear_error_before_any_trial(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from passhat.collector.cli import app

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    outcome = CliRunner().invoke(
        app,
        [
            "bench", "--domain", "retail", "--task-type", "cancel_pending_order", "--scenarios", "1", "--k", "1",
            "--agent", "openai", "--model", "m", "--base-url", "localhost:11434/v1",
        ],
    )  # fmt: skip
    assert outcome.exit_code == 2, outcome.output
    assert outcome.stderr.startswith(
        "passhat: error: the Chat Completions server's URL (--base-url, OPENAI_BASE_URL or agent.base_url)"
    )
    assert "got 'localhost:11434/v1'" in outcome.stderr and outcome.stdout == ""


def test_a_model_server_refusing_every_call_is_a_harness_failure_whose_fix_points_at_the_model_api(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from typer.testing import CliRunner

    from passhat.collector.cli import app

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with chat_completions_api([]) as api:  # no recorded turn: every agent call is answered 400
        outcome = CliRunner().invoke(
            app,
            [
                "bench", "--domain", "retail", "--task-type", "cancel_pending_order", "--scenarios", "1",
                "--k", "1", "--agent", "openai", "--model", "local-model", "--base-url", api.url, "--json",
            ],
        )  # fmt: skip
    report = json.loads(outcome.stdout)
    assert report["task_types"] == []  # never counted as the agent's failure
    (group,) = report["harness_failures"]
    assert group["error_type"] == "ModelServerError" and "no recorded agent turn left" in group["message"], group
    # The error names the server and the model, and so does its fix.
    assert group["message"].startswith(f"the openai model server at {api.url} (model 'local-model') answered 400")
    assert group["fix"].startswith(f"the agent's model server at {api.url} failed: its own log says why"), group
