"""Values written in passhat.toml must have their keys' documented types: a boolean is no integer, a string no
boolean or integer. Before, `concurrency = true` ran 1 at a time, `enabled = "no"` disabled the schedule and
`port = "25"` was taken, while `k = "five"` was refused. Values of ${NAME} references come from the environment,
which holds only strings, and are read as their keys' types, as before."""

from __future__ import annotations

import json
import pathlib

import pytest
from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.collector.config import ConfigError, validate_config

runner = CliRunner()
MAIL = {"type": "email", "host": "smtp.example.com", "sender": "passhat@example.com", "to": ["ops@example.com"]}


def problems(data: dict[str, object], env: dict[str, str] | None = None) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        validate_config(data, env=env or {})
    return caught.value.problems


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"replay": {"concurrency": True}}, "replay.concurrency: must be an integer, got the boolean true"),
        (
            {"replay": {"workers": "2"}},
            'replay.workers: must be an integer, got the string "2" (write 2, without quotes)',
        ),
        (
            {"replay": {"stop_early": "yes"}},
            'replay.stop_early: must be true or false, got the string "yes" (write true, without quotes)',
        ),
        (
            {"schedule": {"enabled": "no"}},
            'schedule.enabled: must be true or false, got the string "no" (write false, without quotes)',
        ),
        (
            {"alerts": {"channels": {"mail": {**MAIL, "port": "25"}}}},
            'alerts.channels.mail.port: must be an integer, got the string "25" (write 25, without quotes)',
        ),
        ({"replay": {"k": "five"}}, 'replay.k: must be an integer, got the string "five"'),
        ({"replay": {"k": 2.0}}, "replay.k: must be an integer, got the number 2.0 (write 2)"),
        ({"replay": {"k": 2.5}}, "replay.k: must be an integer, got the number 2.5"),
        (
            {"alerts": {"retry": {"backoff_seconds": True}}},
            "alerts.retry.backoff_seconds: must be a number, got the boolean true",
        ),
        (
            {"alerts": {"rules": [{"name": "floor", "kind": "threshold", "threshold": "0.5"}]}},
            'alerts.rules[0].threshold: must be a number, got the string "0.5" (write 0.5, without quotes)',
        ),
        ({"project": 5}, 'project: must be a string, got the number 5 (write it in quotes: "5")'),
        (
            {"agent": {"version": 1.2}},
            'agent.version: must be a string, got the number 1.2 (write it in quotes: "1.2")',
        ),
        ({"replay": {"ray_env": "KEY"}}, 'replay.ray_env: must be a list, got the string "KEY"'),
        ({"replay": 5}, "replay: must be a table, got the number 5"),
    ],
)
def test_a_value_of_another_type_is_refused_naming_key_value_and_type(data: dict[str, object], expected: str) -> None:
    assert problems(data) == [expected]


def test_config_check_lists_each_wrong_type_and_changes_nothing(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "passhat.toml"
    config.write_text(
        '[replay]\nconcurrency = true\nworkers = "2"\nstop_early = "yes"\n'
        '[schedule]\nenabled = "no"\ntime = 06:00:00\n',
        encoding="utf-8",
    )
    done = runner.invoke(app, ["config", "check", str(config)])
    assert done.exit_code == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"passhat: error: {config}: replay.concurrency: must be an integer, got the boolean true",
        f'passhat: error: {config}: replay.stop_early: must be true or false, got the string "yes" (write true, '
        "without quotes)",
        f'passhat: error: {config}: replay.workers: must be an integer, got the string "2" (write 2, without quotes)',
        f'passhat: error: {config}: schedule.enabled: must be true or false, got the string "no" (write false, '
        "without quotes)",
        f"passhat: error: {config}: schedule.time: must be a string, got the date or time 06:00:00 (write it in "
        'quotes: "06:00")',
    ]


def test_values_from_the_environment_are_read_as_their_keys_types() -> None:
    data = {
        "replay": {"concurrency": "${CONCURRENCY:-8}", "stop_early": "${EARLY}"},
        "schedule": {"enabled": "${SCHEDULE:-yes}"},
        "alerts": {"channels": {"mail": {**MAIL, "port": "${SMTP_PORT}", "starttls": "${STARTTLS:-false}"}}},
    }
    config = validate_config(data, env={"EARLY": "true", "SCHEDULE": "no", "SMTP_PORT": "587", "STARTTLS": "on"})
    assert config.replay.concurrency == 8 and config.replay.stop_early is True
    assert config.schedule.enabled is False
    mail = config.alerts.channels["mail"]
    assert mail.port == 587 and mail.starttls is True  # type: ignore[union-attr]
    assert type(mail.host) is str and type(config.alerts.channels["mail"].to[0]) is str  # type: ignore[union-attr]
    assert problems(data, env={"EARLY": "maybe", "SMTP_PORT": "smtp"}) == [
        'replay.stop_early: must be true or false, got the string "maybe" (from the environment, through ${...})',
        'alerts.channels.mail.port: must be an integer, got the string "smtp" (from the environment, through ${...})',
    ]
    assert problems({"replay": {"k": "${K}"}}, env={"K": "0"}) == [
        "replay.k: Input should be greater than or equal to 1 (got 0)"
    ]


def test_the_collectors_environment_variables_are_parsed_as_documented(monkeypatch: pytest.MonkeyPatch) -> None:
    """PASSHAT_* variables are strings by nature: their documented spellings keep working."""
    from passhat.collector.ingest import CollectorSettings

    for text, expected in (("1", True), ("yes", True), ("on", True), ("0", False), ("off", False)):
        monkeypatch.setenv("PASSHAT_ROOT_TICKETS", text)
        assert CollectorSettings().root_tickets is expected
    monkeypatch.setenv("PASSHAT_TASK_TYPES", '{"triage": "refund"}')
    assert CollectorSettings().task_types == {"triage": "refund"}


def test_json_lists_the_type_problems(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "passhat.toml"
    config.write_text("[replay]\nconcurrency = true\n", encoding="utf-8")
    done = runner.invoke(app, ["config", "check", str(config), "--json"])
    assert done.exit_code == 2
    assert json.loads(done.stdout)["problems"] == ["replay.concurrency: must be an integer, got the boolean true"]
