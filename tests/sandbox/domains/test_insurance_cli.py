"""The insurance domain from the command line: `passhat bench --domain insurance` with Claude through the real
`anthropic` client against the local Messages-API test server (listing, serving and the ReferenceAgent's replay
of every domain: test_every_domain.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from anthropic import AsyncAnthropic
from sqlalchemy import func, select
from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.sandbox import Sandbox, run_trial
from passhat.sandbox.agents._anthropic import AnthropicAgent
from passhat.sandbox.domains.insurance import models as m
from tests.sandbox.messages_api import messages_api, text_turn, tool_turn


def _replay_claude(task_type: str, agent_turns: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> Any:
    with messages_api(agent_turns, []) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        args = ["bench", "--domain", "insurance", "--task-type", task_type, "--scenarios", "1", "--k", "1"]
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
