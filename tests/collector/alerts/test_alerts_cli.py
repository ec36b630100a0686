"""`passhat alerts test` against real local receivers: each channel's outcome printed, every attempt stored."""

from __future__ import annotations

import json
import pathlib

import pytest
from typer.testing import CliRunner

from passhat.collector.alerts import AlertLog
from passhat.collector.cli import app
from passhat.collector.store import open_store

from .receivers import Mailbox, Receiver, free_port

runner = CliRunner()


def write_config(tmp_path: pathlib.Path, receiver: Receiver, mailbox: Mailbox, *, extra: str = "") -> pathlib.Path:
    path = tmp_path / "passhat.toml"
    path.write_text(
        f"""
project = "shop"
[store]
data_dir = "data"
[alerts.retry]
attempts = 3
backoff_seconds = 0.01
max_backoff_seconds = 0.02
timeout_seconds = 2
[alerts.channels.hook]
type = "webhook"
url = "{receiver.url}"
[alerts.channels.slack]
type = "slack"
url = "{receiver.url.replace("/hook", "/slack")}"
[alerts.channels.mail]
type = "email"
host = "{mailbox.host}"
port = {mailbox.port}
sender = "passhat@example.test"
to = ["oncall@example.test"]
{extra}
""",
        encoding="utf-8",
    )
    return path


def test_every_channel_gets_the_test_alert_and_the_attempts_are_stored(
    tmp_path: pathlib.Path, receiver: Receiver, mailbox: Mailbox
) -> None:
    receiver.fail_first = 1  # the first POST fails: that channel needs a retry
    config = write_config(tmp_path, receiver, mailbox)
    result = runner.invoke(app, ["alerts", "test", "--config", str(config), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    by_channel: dict[str, list[bool]] = {}
    for attempt in data["attempts"]:
        by_channel.setdefault(attempt["channel"], []).append(attempt["ok"])
    assert by_channel == {"hook": [False, True], "mail": [True], "slack": [True]}
    assert sorted(r["path"] for r in receiver.requests) == ["/hook", "/slack"]
    assert len(mailbox.messages) == 1 and data["recorded"]

    store = open_store(f"sqlite:///{tmp_path / 'data' / 'passhat.db'}")
    try:
        log = AlertLog(store, "shop")
        [notice] = log.notices()
        assert notice.alert_id == data["alert_id"] and notice.payload["kind"] == "test"
        assert notice.deliveries == {"hook": "ok", "mail": "ok", "slack": "ok"}
        assert len(log.attempts(data["alert_id"])) == 4
    finally:
        store.close()


def test_a_failing_channel_is_shown_and_the_exit_status_is_1(
    tmp_path: pathlib.Path, receiver: Receiver, mailbox: Mailbox
) -> None:
    port = free_port()
    dead = f'[alerts.channels.dead]\ntype = "webhook"\nurl = "http://127.0.0.1:{port}/nobody/t0k3n"\n'
    config = write_config(tmp_path, receiver, mailbox, extra=dead)
    result = runner.invoke(app, ["alerts", "test", "--config", str(config), "--no-record"])
    assert result.exit_code == 1, result.output
    failed = f"failed: cannot connect to webhook http://127.0.0.1:{port} (connection refused)"
    # Each failure said once: the retried tries as they happen, the last one in the table.
    assert f"dead: attempt 1 of 3 {failed}; trying again in 0.01 s\n" in result.stdout
    assert f"dead: attempt 2 of 3 {failed}; trying again in 0.02 s\n" in result.stdout
    assert result.stdout.count("dead: attempt") == 2 and "t0k3n" not in result.stdout
    assert "delivered" in result.stdout and "failed" in result.stdout and result.stderr == ""
    assert not (tmp_path / "data").exists()  # --no-record leaves the store alone


def test_the_test_alert_names_the_project_and_links_to_the_alerts_page(
    tmp_path: pathlib.Path, receiver: Receiver, mailbox: Mailbox
) -> None:
    ui = '[report]\nui_url = "https://passhat.example.test/ui"\n'
    config = write_config(tmp_path, receiver, mailbox, extra=ui)
    result = runner.invoke(app, ["alerts", "test", "--config", str(config), "--no-record"])
    assert result.exit_code == 0, result.output
    hook, slack = sorted(receiver.requests, key=lambda r: str(r["path"]))
    assert hook["json"]["project"] == "shop" and hook["json"]["link"] == "https://passhat.example.test/ui/alerts"
    assert slack["json"]["blocks"][0]["text"]["text"] == "[shop] passhat test alert"
    [envelope] = mailbox.messages
    assert isinstance(envelope.content, bytes)
    assert b"Subject: [passhat] shop TEST: passhat test alert\r\n" in envelope.content


def test_one_channel_can_be_chosen(tmp_path: pathlib.Path, receiver: Receiver, mailbox: Mailbox) -> None:
    config = write_config(tmp_path, receiver, mailbox)
    result = runner.invoke(app, ["alerts", "test", "--config", str(config), "--channel", "mail", "--no-record"])
    assert result.exit_code == 0, result.output
    assert receiver.requests == [] and len(mailbox.messages) == 1


def test_an_unknown_channel_or_no_channels_is_a_clear_error(
    tmp_path: pathlib.Path, receiver: Receiver, mailbox: Mailbox
) -> None:
    config = write_config(tmp_path, receiver, mailbox)
    result = runner.invoke(app, ["alerts", "test", "--config", str(config), "--channel", "pager"])
    assert result.exit_code == 2 and "unknown channel(s) pager" in result.stderr
    empty = tmp_path / "empty.toml"
    empty.write_text('project = "shop"\n', encoding="utf-8")
    result = runner.invoke(app, ["alerts", "test", "--config", str(empty)])
    assert result.exit_code == 2 and "no alert channels are configured" in result.stderr


def test_an_invalid_config_stops_before_sending(tmp_path: pathlib.Path) -> None:
    bad = tmp_path / "passhat.toml"
    bad.write_text('[alerts.channels.x]\ntype = "slack"\nurl = "${UNSET_FOR_TEST}"\n', encoding="utf-8")
    result = runner.invoke(app, ["alerts", "test", "--config", str(bad)])
    assert result.exit_code == 2
    assert "alerts.channels.x.url: environment variable UNSET_FOR_TEST is not set" in result.stderr


def test_history_lists_the_recorded_notices(tmp_path: pathlib.Path, receiver: Receiver, mailbox: Mailbox) -> None:
    config = write_config(tmp_path, receiver, mailbox)
    assert runner.invoke(app, ["alerts", "test", "--config", str(config), "--channel", "hook"]).exit_code == 0
    result = runner.invoke(app, ["alerts", "history", "--config", str(config), "--json"])
    assert result.exit_code == 0, result.output
    [entry] = json.loads(result.stdout)
    assert entry["kind"] == "test" and entry["rule"] == "alerts-test" and entry["deliveries"] == {"hook": "ok"}
    table = runner.invoke(app, ["alerts", "history", "--config", str(config)])
    assert table.exit_code == 0 and "alerts-test" in table.stdout and "hook: ok" in table.stdout


def test_history_of_an_empty_store_says_so(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "passhat.toml"
    config.write_text('project = "shop"\n[store]\ndata_dir = "data"\n', encoding="utf-8")
    result = runner.invoke(app, ["alerts", "history", "--config", str(config)])
    assert result.exit_code == 0 and "No alerts recorded for project shop." in result.stdout


def test_history_needs_no_config_file_when_store_and_project_are_given(
    tmp_path: pathlib.Path, receiver: Receiver, mailbox: Mailbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As `passhat runs list` and `passhat grade`: --store and --project say where, no passhat.toml needed (it said
    "passhat.toml: no such file"); the project named is the one the table names (it named the config's)."""
    config = write_config(tmp_path, receiver, mailbox)
    assert runner.invoke(app, ["alerts", "test", "--config", str(config), "--channel", "hook"]).exit_code == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("PASSHAT_CONFIG", raising=False)
    store = f"sqlite:///{tmp_path / 'data' / 'passhat.db'}"
    table = runner.invoke(app, ["alerts", "history", "--store", store, "--project", "shop"])
    assert table.exit_code == 0, table.output
    assert "alerts of project shop" in table.stdout and "hook: ok" in table.stdout
    other = runner.invoke(app, ["alerts", "history", "--store", store, "--project", "bank"])
    assert other.exit_code == 0 and "No alerts recorded for project bank." in other.stdout
