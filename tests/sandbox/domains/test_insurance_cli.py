"""The insurance domain from the command line: `passhat sandbox list|serve insurance` answering real MCP clients
over stdio and HTTP, and `passhat replay --domain insurance` with the ReferenceAgent and with Claude through
the real `anthropic` client against the local Messages-API test server."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from anthropic import AsyncAnthropic
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from sqlalchemy import func, select
from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.sandbox import Sandbox, run_trial
from passhat.sandbox.agents._anthropic import AnthropicAgent
from passhat.sandbox.domains.insurance import models as m
from tests.collector.cli.test_sandbox_commands import PASSHAT, _wait_for_http, free_port
from tests.sandbox.messages_api import messages_api, text_turn, tool_turn


def test_sandbox_list_shows_insurance_with_its_task_types_and_tools() -> None:
    result = CliRunner().invoke(app, ["sandbox", "list", "--json"])
    assert result.exit_code == 0, result.output
    listed = next(d for d in json.loads(result.output)["domains"] if d["domain"] == "insurance")
    assert len(listed["task_types"]) == 14
    assert {"file_claim", "report_incident", "authorize_rental", "issue_total_loss_payment"} <= set(listed["tools"])


async def test_serve_insurance_answers_a_real_mcp_client_over_stdio(tmp_path: Path) -> None:
    database = str(tmp_path / "i.db")
    params = StdioServerParameters(
        command=PASSHAT,
        args=["sandbox", "serve", "insurance", "--transport", "stdio", "--size", "small", "--database", database],
        env={**os.environ},
    )
    async with Client(params, read_timeout_seconds=60) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert len(tools) == 20 and {"find_policyholder_by_email", "file_claim"} <= tools
        missing = await client.call_tool("find_policyholder_by_email", {"email": "nobody@example.net"})
        assert missing.is_error and "policyholder_not_found" in missing.content[0].text  # type: ignore[union-attr]
        refused = await client.call_tool("get_policy", {"policy_id": "AUT-000000-A"})
        assert refused.is_error and "caller_not_verified" in refused.content[0].text  # type: ignore[union-attr]


@pytest.mark.slow
async def test_serve_insurance_answers_a_real_mcp_client_over_http(tmp_path: Path) -> None:
    port = free_port()
    command = [PASSHAT, "sandbox", "serve", "insurance", "--transport", "http", "--port", str(port), "--size", "small"]
    env = {**os.environ, "PASSHAT_SANDBOX_TOKEN": "claims-token"}
    process = subprocess.Popen([*command, "--database", str(tmp_path / "i.db")], stderr=subprocess.PIPE, env=env)
    try:
        _wait_for_http(process, port)
        async with (
            create_mcp_http_client(headers={"Authorization": "Bearer claims-token"}) as http,
            Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client,
        ):
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert len(tools) == 20 and tools["schedule_inspection"].description.startswith("[adjusting]")
            result = await client.call_tool("calculate", {"expression": "41000 - 500"})
            assert json.loads(result.content[0].text) == {"result": 40500.0}  # type: ignore[union-attr]
    finally:
        process.terminate()
        process.communicate(timeout=30)


def test_replay_runs_the_reference_agent_on_insurance() -> None:
    args = ["replay", "--domain", "insurance", "--task-type", "theft_claim", "--scenarios", "3", "--k", "2"]
    result = CliRunner().invoke(app, [*args, "--flaws", "off", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    (row,) = payload["task_types"]
    assert payload["agent"] == "reference (offline simulation)"
    assert (row["domain"], row["task_type"], row["tickets"], row["trials_per_ticket"]) == (
        "insurance",
        "theft_claim",
        3,
        2,
    )
    assert row["pass_at_1"] == row["pass_hat_k"] == 1.0 and row["signatures"] == {}


def _replay_claude(task_type: str, agent_turns: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> Any:
    with messages_api(agent_turns, []) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        args = ["replay", "--domain", "insurance", "--task-type", task_type, "--scenarios", "1", "--k", "1"]
        result = CliRunner().invoke(app, [*args, "--agent", "anthropic", "--model", "claude-test", "--json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)["task_types"]
    assert row["input_tokens"] == 100 * len(agent_turns) and not api.turns["agent"]
    return row, api.requests


def test_claude_updates_a_claim_contact_from_the_command_line(
    insurance: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    intent = insurance.scenarios("update_claim_contact", 1)[0].intent  # the scenario the command draws
    claim_id, phone = intent["claim_id"], intent["new_phone"]
    turns = [
        text_turn("I can help with that. What is the email on your account, and your policy number?"),
        tool_turn("toolu_01", "find_policyholder_by_email", {"email": intent["email"]}),
        tool_turn("toolu_02", "find_claims", {"policy_id": intent["policy_id"]}),
        text_turn(f"I will change the contact phone of claim {claim_id} to {phone}. Shall I proceed?"),
        tool_turn("toolu_03", "update_claim_contact", {"claim_id": claim_id, "contact_phone": phone}),
        text_turn(f"Done: your adjuster will reach you at {phone} about claim {claim_id}."),
    ]
    row, requests = _replay_claude("update_claim_contact", turns, monkeypatch)
    assert row["pass_at_1"] == 1.0, row
    assert requests[0]["system"] == insurance.domain.policy
    assert {tool["name"] for tool in requests[0]["tools"]} >= {"update_claim_contact", "file_claim"}


def test_claude_answers_a_coverage_question_and_a_wrong_answer_fails(
    insurance: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    intent = insurance.scenarios("coverage_inquiry", 1)[0].intent
    first, second = intent["answer"]
    lookups = [
        text_turn("Sure. Could you give me your policy number and your last name?"),
        tool_turn(
            "toolu_01",
            "find_policyholder_by_policy",
            {"policy_id": intent["policy_id"], "last_name": intent["last_name"]},
        ),
        tool_turn("toolu_02", "get_policy", {"policy_id": intent["policy_id"]}),
    ]
    said = f"Your {intent['coverage_kind']} coverage: ${first} and {second}."
    row, _ = _replay_claude("coverage_inquiry", [*lookups, text_turn(said)], monkeypatch)
    assert row["pass_at_1"] == 1.0, row
    # The same lookups with a made-up figure: the read-only check holds the agent to the seeded coverage.
    wrong = f"Your {intent['coverage_kind']} coverage: $999,999.00 and 99 days (or $99,999.00)."
    row, _ = _replay_claude("coverage_inquiry", [*lookups, text_turn(wrong)], monkeypatch)
    assert row["pass_at_1"] == 0.0 and sum(row["signatures"].values()) == 1


async def test_claude_recovers_from_the_police_report_refusal_in_a_theft_chain(insurance: Sandbox) -> None:
    intent = insurance.scenarios("theft_claim", 1)[0].intent
    with insurance.template.connect() as connection:
        next_incident = int(connection.execute(select(func.max(m.incidents.c.incident_id))).scalar() or 0) + 1
        next_claim = int(connection.execute(select(func.max(m.claims.c.claim_id))).scalar() or 0) + 1
    incident = {
        "policy_id": intent["policy_id"],
        "vehicle_id": intent["vehicle_id"],
        "kind": "theft",
        "occurred_on": intent["occurred_on"],
        "location": intent["location"],
        "description": intent["description"],
    }
    claim = {
        "policy_id": intent["policy_id"],
        "incident_id": next_incident,
        "coverage": "comprehensive",
        "contact_phone": intent["phone"],
    }
    turns = [
        text_turn("I'm sorry to hear that. What is your email, and your policy number?"),
        tool_turn("toolu_01", "find_policyholder_by_email", {"email": intent["email"]}),
        tool_turn("toolu_02", "get_policy", {"policy_id": intent["policy_id"]}),
        tool_turn("toolu_03", "find_claims", {"policy_id": intent["policy_id"]}),
        text_turn(
            f"I will record the theft of your {intent['vehicle']} and open a comprehensive claim. Where did it "
            "happen, and what is the best phone number to reach you? Shall I proceed?"
        ),
        tool_turn("toolu_04", "report_incident", incident),
        text_turn("For a theft I need the police report number. What is it?"),
        tool_turn("toolu_05", "report_incident", {**incident, "police_report_number": intent["police_report_number"]}),
        tool_turn("toolu_06", "file_claim", claim),
        text_turn(f"Your claim number is {next_claim}, under your comprehensive coverage."),
    ]
    with messages_api(turns, []) as api:
        client = AsyncAnthropic(api_key="test-key", base_url=api.url, max_retries=0)
        result = await run_trial(
            insurance, insurance.scenarios("theft_claim", 1)[0], 0,
            lambda context: AnthropicAgent(context, model="claude-test", client=client),
        )  # fmt: skip
        await client.close()
    assert result.passed, result.record.verdict
    assert [c.error_type for c in result.record.tool_calls] == [None, None, None, "police_report_required", None, None]
    refused = [
        block
        for message in api.requests[6]["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result" and block["tool_use_id"] == "toolu_04"
    ]
    assert refused[0]["is_error"] is True and "police_report_required" in str(refused[0]["content"])
