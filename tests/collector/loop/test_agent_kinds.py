"""`agent.factory` names any agent: an OpenAI-compatible model, an agent service's URL, besides the others."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from passhat.collector.config import PasshatConfig
from passhat.collector.loop import agent_spec


def test_an_agent_service_url_is_an_agent_factory() -> None:
    config = PasshatConfig.model_validate({"agent": {"factory": "http://agents.internal:8787/turn", "version": "7"}})
    spec = agent_spec(config)
    assert spec.label == "http://agents.internal:8787/turn" and spec.version == "7" and not spec.simulated


def test_an_openai_compatible_model_is_named_by_its_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = PasshatConfig.model_validate(
        {"agent": {"factory": "openai", "model": "qwen2.5", "base_url": "http://127.0.0.1:11434/v1"}}
    )
    assert agent_spec(config).label == "openai (qwen2.5)"


def test_options_for_a_service_agent_are_refused() -> None:
    config = PasshatConfig.model_validate({"agent": {"factory": "https://a.example/turn", "options": {"x": 1}}})
    with pytest.raises(ValueError, match="do not apply"):
        agent_spec(config)


def test_a_factory_that_is_neither_is_refused_with_the_choices() -> None:
    with pytest.raises(ValidationError, match="http"):
        PasshatConfig.model_validate({"agent": {"factory": "ftp://nope"}})
