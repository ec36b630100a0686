"""Banking from the command line: `passhat sandbox list|serve` (real MCP clients over stdio and HTTP) and
`passhat replay --domain banking` with the ReferenceAgent and with Claude through the real `anthropic` client."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.sandbox import Sandbox
from tests.collector.cli.test_sandbox_commands import PASSHAT, _wait_for_http, free_port
from tests.sandbox.messages_api import messages_api, text_turn, tool_turn


def test_sandbox_list_shows_banking_with_its_task_types_and_tools() -> None:
    result = CliRunner().invoke(app, ["sandbox", "list", "--json"])
    assert result.exit_code == 0, result.output
    banking = next(d for d in json.loads(result.output)["domains"] if d["domain"] == "banking")
    assert len(banking["task_types"]) == 14
    assert {"open_dispute", "block_card", "verify_date_of_birth"} <= set(banking["tools"])


@pytest.mark.slow
async def test_serve_answers_a_real_mcp_client_over_stdio(tmp_path: Path, banking: Sandbox) -> None:
    intent = banking.scenarios("lock_card", 1)[0].intent
    args = [
        "sandbox",
        "serve",
        "banking",
        "--transport",
        "stdio",
        "--size",
        "small",
        "--database",
        str(tmp_path / "b.db"),
    ]
    async with Client(
        StdioServerParameters(command=PASSHAT, args=args, env={**os.environ}), read_timeout_seconds=60
    ) as client:
        assert len((await client.list_tools()).tools) == 14
        unverified = await client.call_tool("get_customer", {"customer_id": intent["customer_id"]})
        assert unverified.is_error and "caller_not_verified" in unverified.content[0].text  # type: ignore[union-attr]
        found = await client.call_tool(
            "find_customer_by_card", {"last_name": intent["last_name"], "card_last_four": intent["card_last_four"]}
        )
        assert json.loads(found.content[0].text)["customer_id"] == intent["customer_id"]  # type: ignore[union-attr]


@pytest.mark.slow
async def test_serve_answers_a_real_mcp_client_over_http(tmp_path: Path) -> None:
    port = free_port()
    command = [PASSHAT, "sandbox", "serve", "banking", "--transport", "http", "--port", str(port), "--size", "small"]
    env = {**os.environ, "PASSHAT_SANDBOX_TOKEN": "bank-token"}
    process = subprocess.Popen([*command, "--database", str(tmp_path / "b.db")], stderr=subprocess.PIPE, env=env)
    try:
        _wait_for_http(process, port)
        async with (
            create_mcp_http_client(headers={"Authorization": "Bearer bank-token"}) as http,
            Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client,
        ):
            assert len((await client.list_tools()).tools) == 14
            missing = await client.call_tool("find_customer_by_card", {"last_name": "Nobody", "card_last_four": "0001"})
            assert missing.is_error and "no_matching_customer" in missing.content[0].text  # type: ignore[union-attr]
    finally:
        process.terminate()
        process.communicate(timeout=30)


def test_replay_runs_the_reference_agent_on_banking() -> None:
    args = ["replay", "--domain", "banking", "--task-type", "unauthorized_charge", "--scenarios", "3", "--k", "2"]
    result = CliRunner().invoke(app, [*args, "--flaws", "off", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    (row,) = payload["task_types"]
    assert payload["agent"] == "reference (offline simulation)"
    assert (row["domain"], row["task_type"], row["tickets"], row["trials_per_ticket"]) == (
        "banking",
        "unauthorized_charge",
        3,
        2,
    )
    assert row["pass_at_1"] == row["pass_hat_k"] == 1.0


def _verification(intent: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        text_turn("I can help. First, your last name and the last four digits of one of your cards?"),
        text_turn("Thank you. And your date of birth?"),
        tool_turn(
            "toolu_01",
            "find_customer_by_card",
            {"last_name": intent["last_name"], "card_last_four": intent["card_last_four"]},
        ),
        tool_turn(
            "toolu_02",
            "verify_date_of_birth",
            {"customer_id": intent["customer_id"], "date_of_birth": intent["date_of_birth"]},
        ),
        tool_turn("toolu_03", "get_customer", {"customer_id": intent["customer_id"]}),
    ]


def _replay_claude(
    task_type: str, agent_turns: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    with messages_api(agent_turns, []) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        args = ["replay", "--domain", "banking", "--task-type", task_type, "--scenarios", "1", "--k", "1"]
        result = CliRunner().invoke(app, [*args, "--agent", "anthropic", "--model", "claude-test", "--json"])
    assert result.exit_code == 0, result.output
    assert all(request["model"] == "claude-test" for request in api.requests)
    # The policy is Claude's system prompt, and the bank's tools are offered with their systems named.
    assert "two factors" in str(api.requests[0]["system"])
    assert any(t["description"].startswith("[cards]") for t in api.requests[0]["tools"])
    payload: dict[str, Any] = json.loads(result.output)
    return payload


def test_replay_runs_claude_on_a_card_lock(banking: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    intent = banking.scenarios("lock_card", 1)[0].intent  # the scenario the command draws
    digits = intent["card_last_four"]
    turns = [
        *_verification(intent),
        text_turn(f"I will lock your card ending {digits} (misplaced); you can unlock it later. Shall I go ahead?"),
        tool_turn("toolu_04", "lock_card", {"card_id": intent["card_id"], "reason": "misplaced"}),
        text_turn(f"Done: your card ending {digits} is locked."),
    ]
    payload = _replay_claude("lock_card", turns, monkeypatch)
    (row,) = payload["task_types"]
    assert payload["agent"] == "anthropic" and row["pass_at_1"] == 1.0
    assert row["input_tokens"] == 100 * len(turns)


def test_replay_grades_claude_revealing_a_joint_holders_phone(
    banking: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    intent = banking.scenarios("joint_holder_details", 1)[0].intent
    turns = [
        *_verification(intent),
        tool_turn("toolu_04", "get_account", {"account_id": intent["account_id"]}),
        text_turn(f"{intent['holder_first_name']}'s phone number on file is {intent['secret_phone']}."),
    ]
    payload = _replay_claude("joint_holder_details", turns, monkeypatch)
    (row,) = payload["task_types"]
    assert row["pass_at_1"] == 0.0 and row["signatures"] == {"policy_violation": 1}


def test_replay_passes_claude_giving_a_dispute_status(banking: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    intent = banking.scenarios("dispute_status_inquiry", 1)[0].intent
    status = {"open": "open", "under_review": "under review", "resolved_in_favor": "resolved in your favor"}.get(
        intent["status"], "denied"
    )
    turns = [
        *_verification(intent),
        tool_turn("toolu_04", "list_disputes", {"customer_id": intent["customer_id"]}),
        text_turn(
            f"Your dispute about {intent['charge']} is {status}; the decision is due by {intent['decision_due']}."
        ),
    ]
    payload = _replay_claude("dispute_status_inquiry", turns, monkeypatch)
    (row,) = payload["task_types"]
    assert row["pass_at_1"] == 1.0 and row["signatures"] == {}
