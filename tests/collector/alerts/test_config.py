"""passhat.toml: the example validates; every kind of mistake gives one line naming its key, never a traceback."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from passhat.collector.alerts import EmailChannel, SlackChannel, WebhookChannel, channels_from_config, rules_from_config
from passhat.collector.cli import app
from passhat.collector.config import ConfigError, PasshatConfig, load_config, validate_config

ROOT = pathlib.Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "passhat.toml"
runner = CliRunner()


def problems(data: dict[str, object], env: dict[str, str] | None = None) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        validate_config(data, env=env or {})
    return caught.value.problems


def test_the_example_config_validates_and_builds_rules_and_channels() -> None:
    config = load_config(EXAMPLE, env={"SLACK_WEBHOOK_URL": "https://hooks.example.test/T/B/x"})
    assert config.project == "shop" and config.replay.k == 5 and config.replay.trials_per_ticket == 8
    assert [r.name for r in rules_from_config(config.alerts)] == ["overall-drop", "task-type-floor"]
    kinds = {c.name: type(c) for c in channels_from_config(config.alerts)}
    assert kinds == {"oncall-mail": EmailChannel, "ops-webhook": WebhookChannel, "slack": SlackChannel}
    assert config.alerts.channels["slack"].url == "https://hooks.example.test/T/B/x"  # type: ignore[union-attr]
    assert config.report_dir() == (EXAMPLE.parent / "reports").resolve()


def test_an_empty_file_means_every_default() -> None:
    config = validate_config({}, env={})
    assert config == PasshatConfig()
    assert config.agent.factory == "reference" and config.schedule.every == "weekly" and config.alerts.rules == []
    assert config.store_url().startswith("sqlite:///") and config.store_url().endswith("/passhat.db")


def test_env_variables_are_substituted_with_defaults_and_escapes() -> None:
    data = {"alerts": {"channels": {"hook": {"type": "webhook", "url": "${HOOK}", "headers": {"X-Cost": "$$5"}}}}}
    config = validate_config(data, env={"HOOK": "http://127.0.0.1:9/x"})
    hook = config.alerts.channels["hook"]
    assert hook.url == "http://127.0.0.1:9/x" and hook.headers == {"X-Cost": "$5"}  # type: ignore[union-attr]
    fallback = {"alerts": {"channels": {"hook": {"type": "webhook", "url": "${HOOK:-http://localhost/h}"}}}}
    assert validate_config(fallback, env={}).alerts.channels["hook"].url == "http://localhost/h"  # type: ignore[union-attr]


def test_an_unset_env_variable_is_one_problem_naming_key_and_variable() -> None:
    data = {"alerts": {"channels": {"slack": {"type": "slack", "url": "${SLACK_WEBHOOK_URL}"}}}}
    assert problems(data) == [
        "alerts.channels.slack.url: environment variable SLACK_WEBHOOK_URL is not set (or write "
        "${SLACK_WEBHOOK_URL:-default})"
    ]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"replay": {"k": 0}}, "replay.k: Input should be greater than or equal to 1 (got 0)"),
        ({"replay": {"k": 10, "trials": 5}}, "replay: trials (5) must be at least k (10)"),
        (
            {"agent": {"factory": "gpt"}},
            "agent.factory: must be 'reference', 'anthropic', 'openai', an agent service's 'http(s)://host:port/path'",
        ),
        ({"schedule": {"time": "6am"}}, "schedule.time: must be a 24-hour time HH:MM"),
        ({"schedule": {"timezone": "Mars/Base"}}, "schedule.timezone: unknown time zone 'Mars/Base'"),
        ({"schedule": {"weekday": "funday"}}, "schedule.weekday: Input should be 'monday'"),
        ({"domains": ["Retail"]}, "domains: must be a lowercase identifier"),
        ({"domains": []}, "domains: List should have at least 1 item"),
        ({"repaly": {}}, "repaly: unknown key"),
        ({"alerts": {"rules": [{"name": "x", "kind": "threshold"}]}}, "alerts.rules[0]: a threshold rule needs"),
        ({"alerts": {"rules": [{"name": "x", "kind": "drop", "threshold": 0.5}]}}, "alerts.rules[0]: a drop rule"),
        ({"alerts": {"rules": [{"name": "x", "kind": "sometimes"}]}}, "alerts.rules[0].kind: Input should be"),
        ({"alerts": {"rules": [{"name": "a.b", "kind": "drop"}]}}, "alerts.rules[0].name: must be lowercase"),
        (
            {"alerts": {"rules": [{"name": "x", "kind": "drop", "channels": ["pager"]}]}},
            "alerts: rule 'x' names unknown channel(s) ['pager'] (known: none configured)",
        ),
        (
            {"alerts": {"rules": [{"name": "x", "kind": "drop"}, {"name": "x", "kind": "drop"}]}},
            "alerts: two rules are named 'x'",
        ),
        (
            {"alerts": {"rules": [{"name": "x", "kind": "drop", "confidence": 0.999, "permutations": 500}]}},
            "alerts.rules[0]: 500 permutations are too few for confidence 0.999",
        ),
        ({"alerts": {"channels": {"t": {"type": "teams", "url": "http://x"}}}}, "alerts.channels.t: Input tag 'teams'"),
        (
            {"alerts": {"channels": {"h": {"type": "webhook", "url": "ftp://x"}}}},
            "alerts.channels.h.url: must be an http",
        ),
        (
            {"alerts": {"channels": {"h": {"type": "webhook", "url": "http://x", "method": "PUT"}}}},
            "alerts.channels.h.method: unknown key",
        ),
        (
            {
                "alerts": {
                    "channels": {
                        "m": {
                            "type": "email",
                            "host": "h",
                            "sender": "a@b",
                            "to": ["c@d"],
                            "ssl": True,
                            "starttls": True,
                        }
                    }
                }
            },
            "alerts.channels.m: choose one of starttls",
        ),
        (
            {"alerts": {"channels": {"m": {"type": "email", "host": "h", "sender": "a@b", "to": []}}}},
            "alerts.channels.m.to: List should have at least 1 item",
        ),
        ({"alerts": {"retry": {"attempts": 0}}}, "alerts.retry.attempts: Input should be greater than or equal to 1"),
    ],
)
def test_each_mistake_names_its_key(data: dict[str, object], expected: str) -> None:
    found = problems(data)
    assert len(found) == 1, found
    assert found[0].startswith(expected), found[0]


def test_several_mistakes_are_all_reported_one_per_line() -> None:
    found = problems({"replay": {"k": 0, "tickets_per_task_type": -1}, "schedule": {"time": "25:00"}})
    assert [p.split(":")[0] for p in found] == ["replay.k", "replay.tickets_per_task_type", "schedule.time"]


def test_toml_syntax_errors_and_missing_files_are_one_line(tmp_path: pathlib.Path) -> None:
    broken = tmp_path / "passhat.toml"
    broken.write_text("[replay]\nk = \n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(broken)
    assert len(caught.value.problems) == 1 and caught.value.problems[0].startswith("invalid TOML: ")
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "absent.toml")


def test_relative_paths_resolve_against_the_config_folder(tmp_path: pathlib.Path) -> None:
    (tmp_path / "conf").mkdir()
    path = tmp_path / "conf" / "passhat.toml"
    path.write_text('[store]\ndata_dir = "data"\n[report]\nout_dir = "../out"\n', encoding="utf-8")
    config = load_config(path)
    assert config.data_dir() == tmp_path / "conf" / "data"
    assert config.report_dir() == tmp_path / "out"
    assert config.store_url() == f"sqlite:///{tmp_path / 'conf' / 'data' / 'passhat.db'}"


@pytest.mark.parametrize(
    ("url", "resolved"),
    [
        ("sqlite:///demo.sqlite", "sqlite:///{conf}/demo.sqlite"),
        ("sqlite+pysqlite:///db/x.db?timeout=3", "sqlite+pysqlite:///{conf}/db/x.db?timeout=3"),
        ("sqlite:////abs/x.db", "sqlite:////abs/x.db"),
        ("sqlite:///:memory:", "sqlite:///:memory:"),
        ("chdb://ch/data?database=p", "chdb://{conf}/ch/data?database=p"),
        ("chdb:///abs/ch", "chdb:///abs/ch"),
        ("http://clickhouse:8123", "http://clickhouse:8123"),
        ("postgresql+psycopg://u@db/passhat", "postgresql+psycopg://u@db/passhat"),
    ],
)
def test_a_relative_store_url_resolves_against_the_config_folder(
    tmp_path: pathlib.Path, url: str, resolved: str
) -> None:
    (tmp_path / "conf").mkdir()
    path = tmp_path / "conf" / "passhat.toml"
    path.write_text(f'[store]\nurl = "{url}"\n', encoding="utf-8")
    assert load_config(path).store_url() == resolved.format(conf=tmp_path / "conf")


def test_commands_open_a_relative_sqlite_url_in_the_config_folder_and_config_check_prints_it(
    tmp_path: pathlib.Path,
) -> None:
    conf, elsewhere = tmp_path / "conf", tmp_path / "elsewhere"
    conf.mkdir()
    elsewhere.mkdir()
    path = conf / "passhat.toml"
    path.write_text('project = "shop"\n[store]\nurl = "sqlite:///demo.sqlite"\n', encoding="utf-8")
    passhat = pathlib.Path(sys.executable).with_name("passhat")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(passhat), *args], cwd=elsewhere, capture_output=True, text=True, timeout=120)

    listed = run("runs", "list", "--config", str(path))  # a listing names the store it looked for, makes none
    assert listed.returncode == 0, listed.stderr
    assert f"there is no store at {conf / 'demo.sqlite'} (no such file)" in listed.stderr
    assert not (conf / "demo.sqlite").exists() and not (elsewhere / "demo.sqlite").exists()
    assert run("keys", "create", "--project", "shop", "--config", str(path)).returncode == 0
    assert (conf / "demo.sqlite").exists() and not (elsewhere / "demo.sqlite").exists()
    listed = run("runs", "list", "--config", str(path))
    assert listed.returncode == 0 and "no store" not in listed.stderr, listed.stderr
    checked = run("config", "check", str(path))
    assert checked.returncode == 0, checked.stderr
    assert f"store: sqlite:///{conf / 'demo.sqlite'}" in checked.stdout
    # A URL on the command line is the user's own, relative to where they are.
    on_the_line = run("keys", "create", "--project", "shop", "--config", str(path), "--store", "sqlite:///here.sqlite")
    assert on_the_line.returncode == 0, on_the_line.stderr
    assert (elsewhere / "here.sqlite").exists() and not (conf / "here.sqlite").exists()
    listed = run("runs", "list", "--config", str(path), "--store", "sqlite:///here.sqlite")
    assert listed.returncode == 0 and "no store" not in listed.stderr, listed.stderr


def test_config_check_prints_a_summary_for_a_valid_file() -> None:
    result = runner.invoke(app, ["config", "check", str(EXAMPLE)])
    assert result.exit_code == 0, result.output
    assert "is valid" in result.stdout and "overall-drop (drop)" in result.stdout


def test_config_check_takes_the_file_as_the_other_commands_do(tmp_path: pathlib.Path) -> None:
    """`--config FILE` (as `passhat replay --config` takes it) checks FILE; two different files are refused."""
    result = runner.invoke(app, ["config", "check", "--config", str(EXAMPLE)])
    assert result.exit_code == 0, result.output
    assert f"{EXAMPLE} is valid" in result.stdout.replace("\n", "")
    bad = tmp_path / "passhat.toml"
    bad.write_text("[replay]\nworkers = -1\n", encoding="utf-8")
    result = runner.invoke(app, ["config", "check", "--config", str(bad)], env={"COLUMNS": "200"})
    assert result.exit_code == 2 and "replay.workers" in result.stderr
    both = runner.invoke(app, ["config", "check", str(EXAMPLE), "--config", str(bad)], env={"COLUMNS": "200"})
    assert both.exit_code == 2 and "give one" in both.stderr and not both.stdout


def test_config_check_json() -> None:
    result = runner.invoke(app, ["config", "check", str(EXAMPLE), "--json"])
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert {key: payload[key] for key in ("file", "valid", "problems")} == {
        "file": str(EXAMPLE),
        "valid": True,
        "problems": [],
    }
    assert any(line.startswith("false-alert budget") for line in payload["error_rates"])


def test_config_check_states_the_yearly_false_alert_budget_and_flags_rules_with_negligible_power(
    tmp_path: pathlib.Path,
) -> None:
    config = tmp_path / "passhat.toml"
    config.write_text(
        'project = "shop"\ndomains = ["retail"]\n\n[[alerts.rules]]\nname = "each-drop"\nkind = "drop"\n'
        'task_type = "*"\nmin_tickets = 8\nconfidence = 0.99\n'
    )
    result = runner.invoke(app, ["config", "check", str(config)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "false-alert budget: at most 0.52 false drop alerts a year (52 periods)" in result.stdout
    assert "task types, holm" in result.stdout and "NEGLIGIBLE POWER" in result.stdout


@pytest.mark.slow
def test_config_check_exits_2_with_one_line_per_problem_and_no_traceback(tmp_path: pathlib.Path) -> None:
    bad = tmp_path / "passhat.toml"
    bad.write_text('[replay]\nk = 0\n[[alerts.rules]]\nname = "[bad]"\nkind = "drop"\n', encoding="utf-8")
    done = subprocess.run(
        [str(pathlib.Path(sys.executable).parent / "passhat"), "config", "check", str(bad)],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "300"},
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith(f"passhat: error: {bad}: replay.k: ")
    assert "alerts.rules[0].name: " in lines[1] and "'[bad]'" in lines[1]  # brackets survive Rich markup
    assert "Traceback" not in done.stderr


def test_the_schedule_time_is_an_aware_time_in_its_zone() -> None:
    config = validate_config({"schedule": {"time": "06:30", "timezone": "Europe/Paris"}}, env={})
    at = config.schedule.at()
    assert (at.hour, at.minute) == (6, 30) and str(at.tzinfo) == "Europe/Paris"


def test_config_check_finds_the_file_from_the_environment_or_the_current_folder(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PASSHAT_CONFIG", raising=False)
    missing = runner.invoke(app, ["config", "check"])
    assert missing.exit_code == 2 and "passhat.toml: no such file" in missing.stderr
    (tmp_path / "passhat.toml").write_text('project = "here"\n', encoding="utf-8")
    assert "project: here" in runner.invoke(app, ["config", "check"]).stdout
    monkeypatch.setenv("PASSHAT_CONFIG", str(EXAMPLE))
    assert "project: shop" in runner.invoke(app, ["config", "check"]).stdout


def test_config_check_rejects_a_domain_that_is_not_installed(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "passhat.toml"
    config.write_text('domains = ["retail", "astrology"]\n', encoding="utf-8")

    text = runner.invoke(app, ["config", "check", str(config)])
    as_json = runner.invoke(app, ["config", "check", str(config), "--json"])

    from passhat.sandbox import available_domains

    expected = f"domains[1]: no sandbox domain named 'astrology'; installed: {', '.join(available_domains())}"
    assert text.exit_code == 2 and expected in " ".join(text.stderr.split())
    assert as_json.exit_code == 2 and json.loads(as_json.stdout)["problems"] == [expected]


def test_the_example_config_names_only_installed_domains() -> None:
    assert runner.invoke(app, ["config", "check", str(EXAMPLE), "--json"]).exit_code == 0
    assert load_config(EXAMPLE).domains == ["retail"]


def test_report_send_to_names_configured_channels_once() -> None:
    hook = {"type": "webhook", "url": "http://127.0.0.1:9/hook"}
    config = validate_config({"report": {"send_to": ["ops"]}, "alerts": {"channels": {"ops": hook}}}, env={})
    assert config.report.send_to == ["ops"] and config.report.ui_url is None
    with pytest.raises(ConfigError) as unknown:
        validate_config({"report": {"send_to": ["ops", "pager"]}}, env={})
    assert unknown.value.problems == [
        "report.send_to: unknown channel(s) ops, pager (configured: none); "
        "send_to names [alerts.channels.<name>] tables"
    ]
    with pytest.raises(ConfigError) as twice:
        validate_config({"report": {"send_to": ["ops", "ops"]}, "alerts": {"channels": {"ops": hook}}}, env={})
    assert twice.value.problems == ["report.send_to: names a channel twice: ['ops', 'ops']"]


def test_config_check_names_agent_options_for_a_bad_service_timeout(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "passhat.toml"
    config.write_text(
        '[agent]\nfactory = "http://127.0.0.1:8787/turn"\noptions = { timeout = "x" }\n', encoding="utf-8"
    )
    result = runner.invoke(app, ["config", "check", str(config)])
    assert result.exit_code == 2
    assert "agent.options: agent.options.timeout is the seconds one turn" in result.output
    config.write_text('[agent]\nfactory = "http://127.0.0.1:8787/turn"\noptions = { timeout = 20 }\n', encoding="utf-8")
    assert runner.invoke(app, ["config", "check", str(config)]).exit_code == 0
