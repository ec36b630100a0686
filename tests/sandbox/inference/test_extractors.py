"""The two intent extractors on the mock library domain: rules (offline) and a model behind either wire format.

Both read only the customer's words and the starting state; each value needs evidence, and words that fit two
intents, or none, leave no intent (with the field that decided it), never a guess.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from passhat.sandbox import Sandbox, Scenario
from passhat.sandbox.domains.mock import domain as library
from passhat.sandbox.inference import (
    CustomerWords,
    IntentNotInferredError,
    ModelExtractor,
    ModelSettings,
    RuleExtractor,
)
from tests.sandbox import chat_completions_api, messages_api


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(library) as opened:
        yield opened


@pytest.fixture(scope="module")
def renewal(sandbox: Sandbox) -> Scenario:
    return sandbox.scenarios("renew_loan", 1, seed=3)[0]


def _words(scenario: Scenario) -> list[str]:
    loan = scenario.intent["loans"][0]
    return [
        scenario.script.opening,
        f"My email is {scenario.intent['email']}.",
        f"My barcodes is {loan['loan_id']}. My weeks is {loan['weeks']}.",
    ]


def _rules(sandbox: Sandbox, task_type: str, words: list[str]) -> Any:
    with sandbox.template.connect() as connection:
        return RuleExtractor(library, sandbox.initial).infer(
            library.task_type(task_type), CustomerWords(words), connection
        )


def test_the_rules_extractor_finds_the_intent_the_customer_named_with_evidence_per_field(
    sandbox: Sandbox, renewal: Scenario
) -> None:
    found = _rules(sandbox, "renew_loan", _words(renewal))
    assert found.intent == dict(renewal.intent) and found.source == "inferred:rules"
    assert found.evidence["email"].startswith("the customer said")
    assert found.evidence["member_id"].startswith("held by the row the customer's words identify (")
    assert found.evidence["loans[].due"].startswith("derived")


def test_words_naming_two_loans_for_a_one_loan_renewal_are_two_candidates_not_a_guess(
    sandbox: Sandbox, renewal: Scenario
) -> None:
    member = renewal.intent["member_id"]
    with sandbox.template.connect() as connection:
        others = [c for c in library.task_type("renew_loan").candidates(connection) if c["member_id"] == member]
    second = next(c["loans"][0] for c in others if c["loans"][0]["loan_id"] != renewal.intent["loans"][0]["loan_id"])
    words = [*_words(renewal), f"Or maybe {second['title']}, barcode {second['loan_id']}, {second['weeks']} weeks."]
    with pytest.raises(IntentNotInferredError, match=r"candidates for loans\[\]\.") as caught:
        _rules(sandbox, "renew_loan", words)
    assert "pass intent=" in caught.value.fix


def test_a_field_nothing_names_leaves_no_intent(sandbox: Sandbox, renewal: Scenario) -> None:
    with pytest.raises(IntentNotInferredError, match=r"no evidence for .*loans\[\]\.title"):
        _rules(sandbox, "renew_loan", [f"My email is {renewal.intent['email']}."])


def _model_answer(scenario: Scenario, words: list[str], *, quote: str | None = None) -> dict[str, Any]:
    loan = scenario.intent["loans"][0]
    return {
        "email": {"values": [scenario.intent["email"]], "quote": words[1]},
        "member_id": {"values": [], "quote": ""},
        "loans[].loan_id": {"values": [loan["loan_id"]], "quote": quote or f"My barcodes is {loan['loan_id']}"},
        "loans[].title": {"values": [loan["title"]], "quote": loan["title"]},
        "loans[].weeks": {"values": [loan["weeks"]], "quote": f"My weeks is {loan['weeks']}"},
    }


def _model(sandbox: Sandbox, settings: ModelSettings, words: list[str]) -> Any:
    with sandbox.template.connect() as connection:
        return ModelExtractor(settings).infer(
            library, library.task_type("renew_loan"), CustomerWords(words), connection, sandbox.initial
        )


def test_the_model_extractor_through_the_anthropic_client_records_the_fields_with_a_forced_tool(
    sandbox: Sandbox, renewal: Scenario
) -> None:
    words = _words(renewal)
    answer = messages_api.tool_turn("toolu_1", "record_intent", _model_answer(renewal, words))
    with messages_api.messages_api([answer], []) as api:
        found = _model(sandbox, ModelSettings("anthropic", "claude-test", api.url), words)
    assert found.intent == dict(renewal.intent) and found.source == "inferred:model"
    assert found.evidence["loans[].title"].startswith("the model read")
    assert found.evidence["member_id"].startswith("held by the row")  # left empty by the model: rules evidence
    [request] = api.requests
    assert request["tool_choice"] == {"type": "tool", "name": "record_intent"}
    schema = request["tools"][0]["input_schema"]
    assert set(schema["required"]) == {"email", "member_id", "loans[].loan_id", "loans[].title", "loans[].weeks"}
    assert renewal.script.opening in request["messages"][0]["content"]


def test_the_model_extractor_through_the_openai_client_asks_for_a_json_schema_answer(
    sandbox: Sandbox, renewal: Scenario
) -> None:
    import json

    words = _words(renewal)
    answer = chat_completions_api.text_turn(json.dumps(_model_answer(renewal, words)))
    with chat_completions_api.chat_completions_api([answer]) as api:
        found = _model(sandbox, ModelSettings("openai", "gpt-test", api.url), words)
    assert found.intent == dict(renewal.intent) and found.source == "inferred:model"
    [request] = api.requests
    assert request["response_format"]["type"] == "json_schema"
    assert request["response_format"]["json_schema"]["schema"]["properties"]["loans[].weeks"]["properties"][
        "values"
    ] == {"type": "array", "items": {"type": "integer"}}


def test_a_model_value_without_a_quote_of_the_customer_is_not_taken(sandbox: Sandbox, renewal: Scenario) -> None:
    words = _words(renewal)
    answer = messages_api.tool_turn("toolu_1", "record_intent", _model_answer(renewal, words, quote="barcode L9"))
    with messages_api.messages_api([answer], []) as api, pytest.raises(IntentNotInferredError, match="no quote"):
        _model(sandbox, ModelSettings("anthropic", "claude-test", api.url), words)


def test_a_failing_model_endpoint_leaves_no_intent_with_the_cause(sandbox: Sandbox, renewal: Scenario) -> None:
    with messages_api.messages_api([], []) as api, pytest.raises(IntentNotInferredError, match=r"model .* failed"):
        _model(sandbox, ModelSettings("anthropic", "claude-test", api.url), _words(renewal))


def test_the_customer_words_match_whole_values_numbers_and_spoken_dates() -> None:
    from passhat.sandbox.inference import date_forms

    words = CustomerWords(["Move my 2026-06-17 flight (ref AB12) to June 19, 2026, 2 bags.", "Email: a.b@x.org"])
    assert words.says("AB12") and not words.says("AB1")
    assert words.says(2) and not words.says(17) and not words.says(6)
    assert words.says_any(date_forms("2026-06-19")) == 0 and words.message_of("a.b@x.org") == 1


def test_the_groups_of_a_phone_number_are_not_numbers_the_customer_said() -> None:
    """A ticket's inferred member_id 1 had the evidence "the customer said 1": the "+1" of a phone number."""
    words = CustomerWords(["I'm on +1 415 555 0132, order 7", "or 06 12 34 56 78, (415) 555-0132", "card 123456789"])
    assert not any(words.says(n) for n in (1, 415, 555, 132, 6, 12, 34))
    assert words.message_of(7) == 0 and words.message_of(123456789) == 2  # a long number alone is still one


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_intent_models_client_bounds_each_request(provider: str) -> None:
    # The clients' own default is 600 s a request, tried three times: a stuck server held each ticket half an hour.
    from passhat.sandbox.inference._model import INTENT_TIMEOUT, ModelSettings, _anthropic_client, _openai_client

    settings = ModelSettings(provider, "m", base_url="http://127.0.0.1:9/v1")  # type: ignore[arg-type]
    client = (_openai_client if provider == "openai" else _anthropic_client)(settings)
    assert client.timeout == INTENT_TIMEOUT == 120.0
