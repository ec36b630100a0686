"""`passhat report --period P --send` as a user drives it: once per period and channel, `--resend`, failures in
the exit status and in `passhat alerts history`; `passhat config check` refuses a send_to naming no channel."""

from __future__ import annotations

import json
import pathlib

import pytest
from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.collector.store import parse_period
from tests.collector.alerts.receivers import Receiver, free_port, receiver
from tests.collector.loop.report_traffic import copy_store, production_traffic

__all__ = ["receiver"]

runner = CliRunner()
W40 = parse_period("2026-W40")
DEAD_PORT = free_port()  # nothing listens there


def _config(
    folder: pathlib.Path, url: str, receiver: Receiver, *, send_to: str = '["hook"]', extra: str = ""
) -> pathlib.Path:
    path = folder / "passhat.toml"
    path.write_text(
        f"""
project = "shop"
[store]
url = "{url}"
[replay]
k = 2
tickets_per_task_type = 2
[report]
out_dir = "{folder / "reports"}"
send_to = {send_to}
ui_url = "https://passhat.example.test/ui/"
[alerts.retry]
attempts = 2
backoff_seconds = 0.01
max_backoff_seconds = 0.02
timeout_seconds = 2
[alerts.channels.hook]
type = "webhook"
url = "{receiver.url}"
[alerts.channels.dead]
type = "webhook"
url = "http://127.0.0.1:{DEAD_PORT}/nobody"
{extra}""",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def week_traffic(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return production_traffic(tmp_path_factory.mktemp("traffic") / "week.db", W40)


def test_config_check_refuses_a_send_to_naming_an_unknown_channel(tmp_path: pathlib.Path, receiver: Receiver) -> None:
    config = _config(tmp_path, f"sqlite:///{tmp_path / 'x.db'}", receiver, send_to='["hook", "pager"]')
    result = runner.invoke(app, ["config", "check", str(config)])
    assert result.exit_code == 2
    assert (
        f"passhat: error: {config}: report.send_to: unknown channel(s) pager (configured: dead, hook); "
        "send_to names [alerts.channels.<name>] tables" in result.stderr
    )
    as_json = json.loads(runner.invoke(app, ["config", "check", str(config), "--json"]).stdout)
    assert as_json["valid"] is False and as_json["problems"][0].startswith("report.send_to: unknown channel(s) pager")
    good = _config(tmp_path, f"sqlite:///{tmp_path / 'x.db'}", receiver)
    assert runner.invoke(app, ["config", "check", str(good)]).exit_code == 0


def test_a_bad_ui_url_is_a_config_error(tmp_path: pathlib.Path, receiver: Receiver) -> None:
    config = _config(tmp_path, f"sqlite:///{tmp_path / 'x.db'}", receiver)
    config.write_text(config.read_text().replace('"https://passhat.example.test/ui/"', '"passhat.example.test"'))
    result = runner.invoke(app, ["config", "check", str(config)])
    assert result.exit_code == 2
    assert "report.ui_url: must be an http:// or https:// URL, got 'passhat.example.test'" in result.stderr


@pytest.mark.slow
def test_report_send_is_once_per_period_and_channel_and_shows_in_the_history(
    week_traffic: pathlib.Path, tmp_path: pathlib.Path, receiver: Receiver
) -> None:
    mail = f'[alerts.channels.mail]\ntype = "email"\nhost = "127.0.0.1"\nport = {DEAD_PORT}\n'
    mail += 'sender = "passhat@example.test"\nto = ["oncall@example.test"]\n'
    config = _config(tmp_path, copy_store(week_traffic, tmp_path), receiver, extra=mail)
    replayed = runner.invoke(app, ["replay", "--period", "2026-W40", "--config", str(config), "--json"])
    assert replayed.exit_code == 0, replayed.output
    assert receiver.requests == []  # `passhat replay` writes the report; sending is the scheduler's or --send's

    def report(*extra: str) -> str:
        result = runner.invoke(app, ["report", "--period", "2026-W40", "--config", str(config), *extra])
        assert result.exit_code == 0, result.output
        return result.stdout

    assert "hook: sent (1 attempt)" in report("--send")
    assert len(receiver.requests) == 1
    body = receiver.requests[0]["json"]
    assert body["event"] == "report.ready" and body["period"] == "2026-W40"
    assert body["link"].startswith("https://passhat.example.test/ui/runs/run-2026-W40-")
    assert "hook: already sent for 2026-W40 (--resend sends it again)" in report("--send")
    assert len(receiver.requests) == 1
    assert "hook: sent (1 attempt)" in report("--resend")
    assert len(receiver.requests) == 2

    failed = runner.invoke(
        app, ["report", "--period", "2026-W40", "--config", str(config), "--send", "--channel", "dead"]
    )
    assert failed.exit_code == 1
    refused = f"cannot connect to webhook http://127.0.0.1:{DEAD_PORT} (connection refused)"
    # Each try's failure said once (not again on stderr), the last with the outcome; the server named.
    assert [line for line in failed.stdout.splitlines() if refused in line] == [
        f"  dead: attempt 1 of 2 failed: {refused}; trying again in 0.01 s",
        f"  dead: failed after 2 attempts: {refused}",
    ]
    assert "sending the report" not in failed.stderr and refused not in failed.stderr
    mailed = runner.invoke(
        app, ["report", "--period", "2026-W40", "--config", str(config), "--resend", "--send", "--channel", "mail"]
    )
    assert mailed.exit_code == 1
    smtp = f"cannot connect to SMTP server 127.0.0.1:{DEAD_PORT} (connection refused)"
    assert [line for line in mailed.stdout.splitlines() if smtp in line] == [
        f"  mail: attempt 1 of 2 failed: {smtp}; trying again in 0.01 s",
        f"  mail: failed after 2 attempts: {smtp}",
    ]
    assert "sending the report" not in mailed.stderr and smtp not in mailed.stderr

    history = runner.invoke(app, ["alerts", "history", "--config", str(config), "--kind", "report", "--json"])
    assert history.exit_code == 0, history.output
    entries = json.loads(history.stdout)
    assert [(e["kind"], e["trigger"], e["resend"], sorted(e["deliveries"])) for e in entries] == [
        ("report", "cli", True, ["mail"]),
        ("report", "cli", False, ["dead"]),
        ("report", "cli", True, ["hook"]),
        ("report", "cli", False, ["hook"]),
    ]
    assert entries[0]["deliveries"]["mail"] == smtp
    assert entries[1]["deliveries"]["dead"] == refused and entries[2]["deliveries"] == {"hook": "ok"}
    assert all(e["period"] == "2026-W40" and e["run_id"].startswith("run-2026-W40-") for e in entries)
    table = runner.invoke(app, ["alerts", "history", "--config", str(config)])
    assert table.exit_code == 0 and "passhat.report" in table.stdout and "hook: ok" in table.stdout
    # --store and --project as the other commands take them: another store has no history, another project none.
    other = runner.invoke(app, ["alerts", "history", "--config", str(config), "--store", f"sqlite:///{tmp_path}/o.db"])
    assert other.exit_code == 0 and "passhat.report" not in other.stdout
    elsewhere = runner.invoke(app, ["alerts", "history", "--config", str(config), "--project", "bank", "--json"])
    assert elsewhere.exit_code == 0 and json.loads(elsewhere.stdout) == []


def test_report_send_errors_are_clear(tmp_path: pathlib.Path, receiver: Receiver) -> None:
    url = f"sqlite:///{tmp_path / 'x.db'}"

    def run(config: pathlib.Path, *extra: str) -> tuple[int, str]:
        result = runner.invoke(app, ["report", "--period", "2026-W40", "--config", str(config), *extra])
        return result.exit_code, result.stderr

    nowhere = _config(tmp_path, url, receiver, send_to="[]")
    code, err = run(nowhere, "--send")
    assert code == 2 and "nothing to send the report to: set [report] send_to" in err
    code, err = run(nowhere, "--send", "--channel", "pager")
    assert code == 2 and "unknown channel(s) pager; configured: dead, hook" in err
    code, err = run(nowhere, "--channel", "hook")
    assert code == 2 and "--channel chooses where --send sends the report: add --send" in err
    bad_kind = runner.invoke(app, ["alerts", "history", "--config", str(nowhere), "--kind", "reports"])
    assert bad_kind.exit_code == 2 and "unknown kind(s) reports" in bad_kind.stderr
    assert receiver.requests == []
