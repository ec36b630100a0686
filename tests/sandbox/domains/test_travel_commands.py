"""The travel domain from the command line: `passhat sandbox list`, `serve` over stdio and HTTP to a real MCP
client, and `passhat replay --domain travel` with the ReferenceAgent and with Claude through the real
`anthropic` client against the local Messages-API test server (recorded turns)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.sandbox import Sandbox
from tests.collector.cli.test_sandbox_commands import _wait_for_http, free_port
from tests.sandbox.messages_api import messages_api, text_turn, tool_turn

PASSHAT = shutil.which("passhat", path=str(Path(sys.executable).parent)) or "passhat"


def test_sandbox_list_shows_travel_with_its_task_types_and_tools() -> None:
    result = CliRunner().invoke(app, ["sandbox", "list", "--json"])
    assert result.exit_code == 0, result.output
    travel = next(d for d in json.loads(result.output)["domains"] if d["domain"] == "travel")
    assert len(travel["task_types"]) == 16
    assert {"split_reservation", "issue_travel_credit", "issue_compensation", "change_seat"} <= set(travel["tools"])


@pytest.mark.slow
async def test_serve_answers_a_real_mcp_client_over_stdio(tmp_path: Path) -> None:
    args = [
        "sandbox",
        "serve",
        "travel",
        "--transport",
        "stdio",
        "--size",
        "small",
        "--database",
        str(tmp_path / "t.db"),
    ]
    params = StdioServerParameters(command=PASSHAT, args=args, env={**os.environ})
    async with Client(params, read_timeout_seconds=60) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert len(tools) == 25 and {"quote_change", "change_flight", "refund_reservation"} <= tools
        found = await client.call_tool("find_customer_by_email", {"email": "nobody@example.com"})
        assert found.is_error and json.loads(found.content[0].text)["error"] == "no_such_record"  # type: ignore[union-attr]
        refused = await client.call_tool("cancel_reservation", {"reservation_id": "AAAAAA", "reason": "illness"})
        assert refused.is_error and "no_such_record" in refused.content[0].text  # type: ignore[union-attr]


@pytest.mark.slow
async def test_serve_answers_a_real_mcp_client_over_http(tmp_path: Path) -> None:
    port = free_port()
    command = [PASSHAT, "sandbox", "serve", "travel", "--transport", "http", "--port", str(port), "--size", "small"]
    env = {**os.environ, "PASSHAT_SANDBOX_TOKEN": "travel-token"}
    process = subprocess.Popen([*command, "--database", str(tmp_path / "t.db")], stderr=subprocess.PIPE, env=env)
    try:
        _wait_for_http(process, port)
        headers = {"Authorization": "Bearer travel-token"}
        async with (
            create_mcp_http_client(headers=headers) as http,
            Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client,
        ):
            listed = (await client.list_tools()).tools
            assert len(listed) == 25
            fares = await client.call_tool("list_fares", {})
            assert {f["fare_class"] for f in json.loads(fares.content[0].text)["fares"]} == {  # type: ignore[union-attr]
                "basic", "saver", "flex", "premium", "business"
            }  # fmt: skip
    finally:
        process.terminate()
        process.communicate(timeout=30)


def test_replay_runs_the_reference_agent_on_travel() -> None:
    args = ["replay", "--domain", "travel", "--task-type", "cancel_nonrefundable", "--scenarios", "3", "--k", "2"]
    result = CliRunner().invoke(app, [*args, "--flaws", "off", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    (row,) = payload["task_types"]
    assert payload["agent"] == "reference (offline simulation)"
    assert (row["domain"], row["task_type"], row["tickets"], row["trials_per_ticket"]) == (
        "travel", "cancel_nonrefundable", 3, 2
    )  # fmt: skip
    assert row["pass_at_1"] == row["pass_hat_k"] == 1.0 and row["pass_hat_k_ci"][0] < 1.0


def _replay_claude(task_type: str, agent_turns: list[dict[str, object]], monkeypatch: pytest.MonkeyPatch) -> dict:
    with messages_api(agent_turns, []) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        args = ["replay", "--domain", "travel", "--task-type", task_type, "--scenarios", "1", "--k", "1"]
        result = CliRunner().invoke(app, [*args, "--agent", "anthropic", "--model", "claude-test", "--json"])
    assert result.exit_code == 0, result.output
    assert len(api.requests) == len(agent_turns) and api.requests[0]["system"].startswith("# Airline")
    payload: dict = json.loads(result.output)
    return payload


def test_claude_answers_a_reservation_inquiry_identified_by_code_and_last_name(
    travel: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    intent = travel.scenarios("reservation_inquiry", 1)[0].intent  # the scenario the command will draw
    code = intent["reservation_id"]
    agent_turns = [
        text_turn("Happy to help. Could you give me your reservation code and your last name?"),
        tool_turn(
            "toolu_01", "find_customer_by_reservation", {"reservation_id": code, "last_name": intent["last_name"]}
        ),
        tool_turn("toolu_02", "get_reservation", {"reservation_id": code}),
        text_turn(
            f"Your flight on {intent['flight_date']} departs at {intent['departs']}; your seat is {intent['seat']}."
        ),
    ]
    (row,) = _replay_claude("reservation_inquiry", agent_turns, monkeypatch)["task_types"]
    assert row["pass_at_1"] == 1.0 and row["input_tokens"] == 100 * len(agent_turns)


def test_claude_cancels_and_credits_a_non_refundable_reservation(
    travel: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    intent = travel.scenarios("cancel_nonrefundable", 1)[0].intent
    code = intent["reservation_id"]
    agent_turns = [
        text_turn("I can help with that. What is the email on your profile?"),
        tool_turn("toolu_01", "find_customer_by_email", {"email": intent["email"]}),
        tool_turn("toolu_02", "get_reservation", {"reservation_id": code}),
        text_turn(
            f"This fare is non-refundable, so I will cancel {code} and turn ${intent['amount']} into a travel "
            "credit. Shall I proceed?"
        ),
        tool_turn("toolu_03", "cancel_reservation", {"reservation_id": code, "reason": intent["reason"]}),
        tool_turn("toolu_04", "issue_travel_credit", {"reservation_id": code}),
        text_turn(f"Done: {code} is cancelled and a travel credit of ${intent['amount']} is on your profile."),
    ]
    (row,) = _replay_claude("cancel_nonrefundable", agent_turns, monkeypatch)["task_types"]
    assert row["pass_at_1"] == 1.0, row


def test_claude_refunding_instead_of_crediting_is_refused_and_fails(
    travel: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    intent = travel.scenarios("cancel_nonrefundable", 1)[0].intent
    code = intent["reservation_id"]
    agent_turns = [
        text_turn("What is the email on your profile?"),
        tool_turn("toolu_01", "find_customer_by_email", {"email": intent["email"]}),
        tool_turn("toolu_02", "cancel_reservation", {"reservation_id": code, "reason": intent["reason"]}),
        tool_turn("toolu_03", "refund_reservation", {"reservation_id": code}),
        text_turn(f"Reservation {code} is cancelled, but I could not refund it."),
    ]
    (row,) = _replay_claude("cancel_nonrefundable", agent_turns, monkeypatch)["task_types"]
    assert row["pass_at_1"] == 0.0 and sum(row["signatures"].values()) == 1
