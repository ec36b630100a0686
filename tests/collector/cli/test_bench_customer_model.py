"""`passhat bench --customer-model / --customer-base-url`: the simulated customer on a model and server of its own
(a strong model playing the customer, the model under test on another server). Real `openai` clients against two
Chat Completions servers on 127.0.0.1."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from passhat.collector.cli import app
from tests.sandbox.chat_completions_api import failing_chat_completions, is_customer

ONE_TICKET = ["bench", "--domain", "retail", "--task-type", "cancel_pending_order", "--scenarios", "1", "--k", "1"]


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


def test_the_customer_takes_its_own_model_and_server() -> None:
    # Each server answers every request with a short reply: the agent's turn ends, the customer says it.
    with (
        failing_chat_completions(503, answer_every=1) as agent_api,
        failing_chat_completions(503, answer_every=1) as customer_api,
    ):
        outcome = CliRunner().invoke(
            app,
            [*ONE_TICKET, "--agent", "openai", "--model", "model-under-test", "--base-url", agent_api.url,
             "--customer", "openai", "--customer-model", "strong-customer", "--customer-base-url", customer_api.url,
             "--json"],
            terminal_width=400,
        )  # fmt: skip
    assert outcome.exit_code == 0, outcome.output
    assert json.loads(outcome.stdout)["trials"] == 1
    assert agent_api.requests and customer_api.requests
    assert {body["model"] for body in agent_api.requests} == {"model-under-test"}
    assert not any(is_customer(body) for body in agent_api.requests)
    assert {body["model"] for body in customer_api.requests} == {"strong-customer"}
    assert all(is_customer(body) for body in customer_api.requests)


def test_without_them_the_customer_shares_the_agents_model_and_server() -> None:
    with failing_chat_completions(503, answer_every=1) as api:
        outcome = CliRunner().invoke(
            app,
            [*ONE_TICKET, "--agent", "openai", "--model", "m", "--base-url", api.url, "--customer", "openai", "--json"],
            terminal_width=400,
        )
    assert outcome.exit_code == 0, outcome.output
    assert {body["model"] for body in api.requests} == {"m"}
    assert any(is_customer(body) for body in api.requests) and not all(is_customer(body) for body in api.requests)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--customer-model", "gpt-4o"], "--customer-model applies to a model customer (--customer anthropic|openai), "
         "not to the scripted customer"),
        (["--agent", "openai", "--customer-base-url", "http://127.0.0.1:9/v1"], "--customer-base-url applies to a "
         "model customer"),
        (["--customer", "openai", "--model", "a", "--customer-model", "b"], "--model would be the agent's model, and "
         "the reference agent (an offline simulation"),
    ],
)  # fmt: skip
def test_customer_options_that_would_be_ignored_are_refused_in_one_line(args: list[str], message: str) -> None:
    outcome = CliRunner().invoke(app, [*ONE_TICKET, *args], terminal_width=400)
    assert outcome.exit_code == 2, outcome.output
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("passhat: error: "), outcome.stderr
    assert message in lines[0], lines[0]


def test_replay_says_the_customer_options_belong_to_bench() -> None:
    outcome = CliRunner().invoke(app, ["replay", "--period", "2026-W40", "--customer-model", "x"], terminal_width=400)
    assert outcome.exit_code == 2, outcome.output
    assert "passhat bench" in outcome.stderr, outcome.stderr
