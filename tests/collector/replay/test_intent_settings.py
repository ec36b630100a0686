"""passhat.toml's intent inference settings: `replay.infer_intent` and the `[intent]` model, validated as a user
writes them, and turned into the replay's settings."""

from __future__ import annotations

import pytest

from passhat.collector.config import ConfigError, validate_config
from passhat.collector.loop import intent_model
from passhat.collector.loop._setup import replay_settings
from passhat.collector.replay import ReplaySettings


def test_rules_inference_is_on_by_default() -> None:
    config = validate_config({}, env={})
    assert config.replay.infer_intent == "rules" and config.intent.provider is None
    assert replay_settings(config).infer_intent == "rules" and replay_settings(config).intent_model is None


def test_the_model_extractor_takes_its_endpoint_from_the_intent_table() -> None:
    config = validate_config(
        {
            "replay": {"infer_intent": "model"},
            "intent": {"provider": "openai", "model": "gpt-4o-mini", "base_url": "http://127.0.0.1:8000/v1"},
        },
        env={},
    )
    settings = replay_settings(config)
    assert settings.infer_intent == "model" and settings.intent_model is not None
    assert (settings.intent_model.provider, settings.intent_model.model) == ("openai", "gpt-4o-mini")
    assert intent_model(config) == settings.intent_model


def test_model_inference_without_a_model_is_refused_with_what_to_add() -> None:
    with pytest.raises(ConfigError) as error:
        validate_config({"replay": {"infer_intent": "model"}}, env={})
    assert "add an [intent] table with provider" in " ".join(error.value.problems)


def test_an_unknown_extractor_or_provider_is_refused_by_name() -> None:
    with pytest.raises(ConfigError) as error:
        validate_config({"replay": {"infer_intent": "magic"}, "intent": {"provider": "gemini"}}, env={})
    assert [p.split(":")[0] for p in error.value.problems] == ["replay.infer_intent", "intent.provider"]
    with pytest.raises(ValueError, match="infer_intent must be one of rules, model, off"):
        ReplaySettings(infer_intent="magic")


def test_the_customer_words_come_from_customer_events_else_from_a_frameworks_user_messages() -> None:
    import json

    from passhat import semconv
    from passhat.collector.replay import customer_messages
    from passhat.collector.store import NormalizedSpan, SpanEvent, TicketDetail

    def chat(start: int, history: list[str]) -> NormalizedSpan:
        messages = [{"role": "user", "parts": [{"type": "text", "content": text}]} for text in history]
        messages.insert(1, {"role": "assistant", "parts": [{"type": "text", "content": "Which day?"}]})
        return NormalizedSpan(
            "t" * 32, f"{start:016d}", None, "chat model", start, start + 1,
            attributes={semconv.INPUT_MESSAGES: json.dumps(messages)},
        )  # fmt: skip

    spans = [chat(1, ["Move my visit"]), chat(2, ["Move my visit", "To 2026-07-08"])]
    framework = TicketDetail("T-1", [], spans, [], [], [])
    assert customer_messages(framework) == ["Move my visit", "To 2026-07-08"]
    said = SpanEvent(semconv.EVENT_CUSTOMER_MESSAGE, 0, {semconv.MESSAGE_CONTENT: "Hello"})
    root = NormalizedSpan("t" * 32, "r" * 16, None, "invoke_agent desk", 0, 5, events=[said])
    explicit = TicketDetail("T-1", [], [root, *framework.spans], [], [], [])
    assert customer_messages(explicit) == ["Hello"]
