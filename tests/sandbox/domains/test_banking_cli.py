"""Banking from the command line: `passhat bench --domain banking` with Claude through the real `anthropic`
client (listing, serving and the ReferenceAgent's replay of every domain: test_every_domain.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.sandbox import Sandbox
from tests.sandbox.messages_api import messages_api, text_turn, tool_turn


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
        args = ["bench", "--domain", "banking", "--task-type", task_type, "--scenarios", "1", "--k", "1"]
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
