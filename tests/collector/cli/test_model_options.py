"""`--model` and `--base-url` (and `agent.model`, `agent.base_url`) apply to a model agent or customer only: given
to the reference simulation, an agent service or your own factory they were silently ignored; now each is one
`passhat: error:` line (exit 2) saying which agents they apply to, in `bench`, `suite run`, `replay` and
`config check`. The anthropic agent takes its server from them as the openai agent does."""

from __future__ import annotations

import json
import pathlib

import pytest
from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.collector.config import PasshatConfig
from passhat.collector.loop import agent_spec, ignored_model_settings

BENCH = ["bench", "--domain", "retail", "--task-type", "cancel_pending_order", "--scenarios", "1", "--k", "1"]


def _one_error(outcome: object) -> str:
    stderr = getattr(outcome, "stderr", "")
    assert getattr(outcome, "exit_code", None) == 2, getattr(outcome, "output", "")
    assert getattr(outcome, "stdout", "") == "" and "Traceback" not in stderr
    [line] = stderr.strip().splitlines()
    assert line.startswith("passhat: error: ")
    return line


@pytest.mark.parametrize(
    ("agent", "given", "not_to"),
    [
        ("reference", ["--model", "gpt-4o"], "not to the reference agent (an offline simulation: it calls no model)"),
        ("reference", ["--base-url", "http://127.0.0.1:11434/v1"], "not to the reference agent"),
        ("http://127.0.0.1:8787/turn", ["--model", "m"], "not to an agent service (http://127.0.0.1:8787/turn"),
        ("support.replay:factory", ["--model", "m", "--base-url", "http://h/v1"], "not to an agent factory"),
    ],
)
def test_bench_refuses_model_options_for_an_agent_that_calls_no_model_server(
    agent: str, given: list[str], not_to: str
) -> None:
    line = _one_error(CliRunner().invoke(app, [*BENCH, "--agent", agent, *given]))
    assert "apply to the anthropic and openai agents" in line or "applies to the anthropic and openai agents" in line
    assert "(--agent anthropic|openai or --customer anthropic|openai)" in line and not_to in line


def test_bench_takes_model_options_for_a_model_customer_of_the_reference_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    # Not refused as ignored: the customer's server is checked (a bad URL is its own error).
    done = CliRunner().invoke(app, [*BENCH, "--customer", "openai", "--model", "m", "--base-url", "localhost/v1"])
    assert done.exit_code == 2 and "the Chat Completions server's URL" in done.stderr


def test_an_openai_base_url_in_the_environment_is_not_an_option_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")  # set for other tools: not refused
    done = CliRunner().invoke(app, [*BENCH, "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["agent"] == "reference (offline simulation)"


@pytest.mark.parametrize(
    ("agent", "given"),
    [("reference", ["--model", "m"]), ("http://127.0.0.1:8787/turn", ["--base-url", "http://127.0.0.1:1/v1"])],
)
def test_suite_run_refuses_model_options_for_an_agent_that_calls_no_model_server(
    agent: str, given: list[str], tmp_path: pathlib.Path
) -> None:
    store = f"sqlite:///{tmp_path / 'suite.db'}"
    line = _one_error(CliRunner().invoke(app, ["suite", "run", "--agent", agent, *given, "--store", store]))
    assert "the anthropic and openai agents (--agent anthropic|openai)" in line
    assert not (tmp_path / "suite.db").exists()  # refused before anything ran or was stored


@pytest.mark.parametrize("option", ["--model", "--base-url"])
def test_replay_names_where_its_model_is_set(option: str) -> None:
    line = _one_error(CliRunner().invoke(app, ["replay", "--period", "2026-W48", option, "x"]))
    assert f"{option} applies to `passhat bench` and `passhat suite run`" in line
    assert "agent.model and agent.base_url" in line


@pytest.mark.parametrize(
    ("agent", "says"),
    [
        ({"factory": "reference", "model": "gpt-4o"}, "agent.model applies to factory = 'anthropic' or 'openai' only"),
        ({"factory": "http://127.0.0.1:8787/turn", "base_url": "http://h/v1"}, "agent.base_url applies to"),
        ({"factory": "support:factory", "model": "m", "base_url": "http://h/v1"}, "agent.model and agent.base_url"),
    ],
)
def test_config_check_refuses_model_keys_for_an_agent_that_calls_no_model_server(
    agent: dict[str, str], says: str, tmp_path: pathlib.Path
) -> None:
    config = tmp_path / "passhat.toml"
    config.write_text("[agent]\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in agent.items()))
    line = _one_error(CliRunner().invoke(app, ["config", "check", str(config)]))
    assert says in line and "remove agent." in line


def test_config_check_takes_a_base_url_for_the_anthropic_agent(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "passhat.toml"
    config.write_text('[agent]\nfactory = "anthropic"\nmodel = "claude-x"\nbase_url = "http://127.0.0.1:9/"\n')
    done = CliRunner().invoke(app, ["config", "check", str(config)])
    assert done.exit_code == 0, done.output


def test_another_agent_on_the_command_line_does_not_take_the_configured_models_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    config = PasshatConfig.model_validate(
        {"agent": {"factory": "openai", "model": "qwen2.5", "base_url": "http://127.0.0.1:11434/v1"}}
    )
    assert agent_spec(config).label == "openai (qwen2.5)"
    assert ignored_model_settings(config, None) is None and ignored_model_settings(config, "openai") is None
    assert agent_spec(config, "reference").simulated  # runs, without the openai agent's settings
    note = ignored_model_settings(config, "reference")
    assert note == (
        "agent.model and agent.base_url of passhat.toml belong to its openai agent: the reference agent given with "
        "--agent does not use them"
    )
