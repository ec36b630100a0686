"""`agent.factory` names any agent: an OpenAI-compatible model, an agent service's URL, besides the others."""

from __future__ import annotations

import asyncio
import pathlib
import time

import pytest
from pydantic import ValidationError

from passhat.collector.config import PasshatConfig
from passhat.collector.loop import agent_spec
from passhat.sandbox import Sandbox, run_trial
from tests.service_stubs import misbehaving_service


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


def test_options_for_a_service_agent_other_than_its_timeout_are_refused() -> None:
    config = PasshatConfig.model_validate({"agent": {"factory": "https://a.example/turn", "options": {"x": 1}}})
    with pytest.raises(ValueError, match=r"agent.options \(x\) do not apply to an agent service: it takes timeout"):
        agent_spec(config)
    for bad in (0, -3, "fast", True):
        config = PasshatConfig.model_validate(
            {"agent": {"factory": "https://a.example/turn", "options": {"timeout": bad}}}
        )
        with pytest.raises(ValueError, match=r"agent\.options\.timeout is the seconds one turn"):
            agent_spec(config)


def test_an_agent_services_turn_timeout_comes_from_agent_options(tmp_path: pathlib.Path) -> None:
    """A hung agent service cost 120 s a turn, three runs a trial, with no way to say less."""
    began = time.monotonic()
    with misbehaving_service("never") as url, Sandbox("retail", seed=0, workdir=tmp_path) as retail:
        capitals = url.replace("http://", "HTTP://")  # a scheme in capitals is a URL too
        config = PasshatConfig.model_validate({"agent": {"factory": capitals, "options": {"timeout": 0.5}}})
        scenario = retail.scenarios("cancel_pending_order", 1)[0]
        result = asyncio.run(run_trial(retail, scenario, 0, agent_spec(config).factory))
    assert "no answer to the turn within 0.5 s" in str(result.record.infra_error)
    assert time.monotonic() - began < 20


def test_a_factory_that_is_neither_is_refused_with_the_choices() -> None:
    with pytest.raises(ValidationError, match="http"):
        PasshatConfig.model_validate({"agent": {"factory": "ftp://nope"}})
