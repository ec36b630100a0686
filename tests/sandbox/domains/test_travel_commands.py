"""The travel domain from the command line: `passhat bench --domain travel` with Claude through the real
`anthropic` client against the local Messages-API test server, recorded turns (listing, serving and the
ReferenceAgent's replay of every domain: test_every_domain.py)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.sandbox import Sandbox
from tests.sandbox.messages_api import messages_api, text_turn, tool_turn

PASSHAT = shutil.which("passhat", path=str(Path(sys.executable).parent)) or "passhat"


def _replay_claude(task_type: str, agent_turns: list[dict[str, object]], monkeypatch: pytest.MonkeyPatch) -> dict:
    with messages_api(agent_turns, []) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        args = ["bench", "--domain", "travel", "--task-type", task_type, "--scenarios", "1", "--k", "1"]
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
