"""`passhat config check` lists every problem it can find in one run: a misspelt key, a check across keys of the
same table and a check across tables (a rule naming an unknown channel) together. Before, each was shown only once
the one before it was fixed. Problems a default would cause (standing in for a value at fault) are not invented."""

from __future__ import annotations

import json
import pathlib

import pytest
from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.collector.config import ConfigError, validate_config

runner = CliRunner()

LAYERED = """\
[replay]
tickets_per_tiket = 20

[alerts.channels.mail]
type = "email"
host = "smtp.example.com"
sender = "passhat@example.com"
to = ["ops@example.com"]
starttls = true
ssl = true

[[alerts.rules]]
name = "floor"
kind = "threshold"
threshold = 0.5
channels = ["slak"]
"""


def problems(data: dict[str, object]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        validate_config(data, env={})
    return caught.value.problems


def test_config_check_lists_the_unknown_key_the_tls_conflict_and_the_unknown_channel_at_once(
    tmp_path: pathlib.Path,
) -> None:
    config = tmp_path / "passhat.toml"
    config.write_text(LAYERED, encoding="utf-8")
    done = runner.invoke(app, ["config", "check", str(config)])
    assert done.exit_code == 2
    assert done.stderr.splitlines() == [
        f"passhat: error: {config}: replay.tickets_per_tiket: unknown key: did you mean tickets_per_task_type? "
        "(docs/configuration.md lists them)",
        f"passhat: error: {config}: alerts.channels.mail: choose one of starttls (upgrade a plain connection) and ssl "
        "(TLS from the start)",
        f"passhat: error: {config}: alerts: rule 'floor' names unknown channel(s) ['slak'] (known: mail)",
    ]
    as_json = runner.invoke(app, ["config", "check", str(config), "--json"])
    assert as_json.exit_code == 2 and len(json.loads(as_json.stdout)["problems"]) == 3


def test_a_misspelt_key_in_the_same_table_does_not_hide_its_checks() -> None:
    mail = {"type": "email", "host": "h", "sender": "a@b", "to": ["c@d"], "starttls": True, "ssl": True, "sll": 1}
    rule = {"name": "floor", "kind": "threshold", "threshold": 0.5, "channels": ["slak"], "severty": "info"}
    assert problems({"alerts": {"channels": {"mail": mail}, "rules": [rule]}, "report": {"send_to": ["mial"]}}) == [
        "alerts.rules[0].severty: unknown key: did you mean severity? (docs/configuration.md lists them)",
        "alerts.channels.mail.sll: unknown key (check the spelling against docs/configuration.md)",
        "alerts.channels.mail: choose one of starttls (upgrade a plain connection) and ssl (TLS from the start)",
        "alerts: rule 'floor' names unknown channel(s) ['slak'] (known: mail)",
        "report.send_to: unknown channel(s) mial (configured: mail); send_to names [alerts.channels.<name>] tables",
    ]


def test_every_check_of_a_rule_and_of_a_channel_reports() -> None:
    rule = {"name": "x", "kind": "drop", "threshold": 0.5, "confidence": 0.999, "permutations": 500}
    mail = {"type": "email", "host": "h", "sender": "a@b", "to": ["c@d"], "starttls": True, "ssl": True}
    assert problems({"alerts": {"rules": [rule], "channels": {"m": {**mail, "password": "p"}}}}) == [
        "alerts.rules[0]: a drop rule takes no `threshold` (it compares against a baseline of earlier periods)",
        "alerts.channels.m: choose one of starttls (upgrade a plain connection) and ssl (TLS from the start)",
        "alerts.rules[0]: 500 permutations are too few for confidence 0.999",
        "alerts.channels.m: password is set without username",
    ]


def test_a_value_at_fault_does_not_make_up_problems_its_default_would_have() -> None:
    # k's default (5) is more than trials: no "trials must be at least k" for a k the file did not give.
    assert problems({"replay": {"k": "ten", "trials": 3}}) == ['replay.k: must be an integer, got the string "ten"']
    # A misspelt factory is no reason to say model applies to model agents only.
    found = problems({"agent": {"factory": "antropic", "model": "claude-sonnet-4-5"}})
    assert len(found) == 1 and found[0].startswith("agent.factory: must be 'reference', 'anthropic'")
    # A port out of range does not hide the channel's TLS conflict, nor the rules' and report's references.
    mail = {"type": "email", "host": "h", "sender": "a@b", "to": ["c@d"], "port": 0, "ssl": True, "starttls": True}
    found = problems(
        {
            "alerts": {"channels": {"m": mail}, "rules": [{"name": "r", "kind": "drop", "channels": ["n"]}]},
            "report": {"send_to": ["q"]},
        }
    )
    assert found == [
        "alerts.channels.m.port: Input should be greater than or equal to 1 (got 0)",
        "alerts.channels.m: choose one of starttls (upgrade a plain connection) and ssl (TLS from the start)",
        "alerts: rule 'r' names unknown channel(s) ['n'] (known: m)",
        "report.send_to: unknown channel(s) q (configured: m); send_to names [alerts.channels.<name>] tables",
    ]
    # Channels that are not a table of channels: the references to them are not judged against none.
    found = problems(
        {"alerts": {"channels": "slack", "rules": [{"name": "r", "kind": "drop", "channels": ["slack"]}]},
         "report": {"send_to": ["slack"]}}
    )  # fmt: skip
    assert found == ['alerts.channels: must be a table, got the string "slack"']


def test_a_wrong_type_that_plainly_means_a_value_is_read_as_it_for_the_checks_after_it() -> None:
    # "3" is reported, and read as 3 for the check across keys: trials 3 < k 5.
    assert problems({"replay": {"trials": "3"}}) == [
        'replay.trials: must be an integer, got the string "3" (write 3, without quotes)',
        "replay: trials (3) must be at least k (5): pass^k needs k trials per ticket",
    ]
