"""`passhat replay --period` when no sampled ticket can be replayed: it finishes, says why, and writes the report."""

from __future__ import annotations

import datetime as dt
import json
import pathlib

from typer.testing import CliRunner

import passhat
from passhat.collector.cli import app
from passhat.collector.store import open_store, parse_period
from tests.collector.embedded import running_collector
from tests.collector.server import new_key

PERIOD = parse_period("2026-W40")


def _send_unreplayable_tickets(url: str, key: str) -> None:
    stamp = int((PERIOD.start_datetime() + dt.timedelta(hours=5)).timestamp() * 1e9)
    runtime = passhat.configure(make_global=False, endpoint=url, api_key=key, clock=lambda: stamp)
    for number in range(3):  # no intent, and no customer message to infer one from
        with runtime.ticket(f"T-bare-{number}", task_type="cancel_pending_order", domain="retail"):
            pass
    with runtime.ticket("T-billing", task_type="refund_invoice", domain="billing", intent={"invoice": 7}):
        pass  # a domain the config does not name
    assert runtime.flush(timeout=10)
    runtime.shutdown()


def test_a_period_with_only_unreplayable_tickets_finishes_with_the_reasons_and_a_report(
    tmp_path: pathlib.Path,
) -> None:
    store_url = f"sqlite:///{tmp_path / 'passhat.db'}"
    store = open_store(store_url)
    try:
        with running_collector(store) as collector:
            _send_unreplayable_tickets(collector.url, new_key(store, "shop"))
    finally:
        store.close()
    config = tmp_path / "passhat.toml"
    config.write_text(
        f'project = "shop"\ndomains = ["retail"]\n[store]\nurl = "{store_url}"\n'
        '[replay]\nk = 2\n[report]\nout_dir = "reports"\n'
    )
    result = CliRunner().invoke(app, ["replay", "--period", PERIOD.name, "--config", str(config)])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "None of the 4 sampled tickets of 2026-W40 could be measured" in output
    assert "no intent was recorded" in output and "pass intent=" in output
    assert "4 sampled ticket(s) not measured" in output and "billing" in output  # the reasons table

    report = json.loads((tmp_path / "reports" / PERIOD.name / "report.json").read_text())
    assert report["measured"] is False
    assert {(r["reason"], r["tickets"]) for r in report["reasons"]} == {
        (
            "no intent was recorded, and none could be inferred: no customer message was captured, so nothing names "
            "the intent",
            3,
        ),
        ("domain 'billing' is not configured for replay (configured: retail)", 1),
    }
    assert all(r["fix"] for r in report["reasons"])
    assert {n["ticket_id"] for n in report["not_replayable"]} == {"T-bare-0", "T-bare-1", "T-bare-2", "T-billing"}
    assert "nothing measured" in (tmp_path / "reports" / PERIOD.name / "report.html").read_text()

    store = open_store(store_url)
    try:
        (run,) = store.list_replay_runs("shop")
    finally:
        store.close()
    assert run.status == "finished" and run.summary is not None and run.summary["trials"] == 0

    again = CliRunner().invoke(app, ["report", "--period", PERIOD.name, "--config", str(config)])
    assert again.exit_code == 0, again.output
    assert "could be measured" in " ".join(again.output.split())
