"""`passhat replay --period` again after more tickets of the period arrived: it reuses the finished run (its
settings are the same), and said only "its trials were reused", never that the run had sampled fewer tickets than
the period now holds."""

from __future__ import annotations

import json
import pathlib

from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.collector.store import open_store, parse_period
from tests.collector.loop.report_traffic import copy_store, production_traffic
from tests.collector.store.store_contract import ticket_span

PERIOD = parse_period("2026-W40")


def test_a_reused_run_says_how_many_tickets_arrived_after_it_sampled(tmp_path: pathlib.Path) -> None:
    url = copy_store(production_traffic(tmp_path / "week.db", PERIOD, count=6), tmp_path)
    config = tmp_path / "passhat.toml"
    config.write_text(
        f'project = "shop"\ndomains = ["retail"]\n[store]\nurl = "{url}"\n'
        "[replay]\nk = 2\ntickets_per_task_type = 1\n"
        f'[report]\nout_dir = "{tmp_path / "reports"}"\n'
    )
    runner = CliRunner()
    first = runner.invoke(app, ["replay", "--period", PERIOD.name, "--config", str(config), "--json"])
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["arrived_since_sampled"] == 0
    # Two more production tickets of the period, of a task type the run sampled.
    task_type = json.loads(first.stdout)["task_types"][0]["task_type"]
    start = int(PERIOD.start_datetime().timestamp() * 1e9) + 3_600 * 10**9
    store = open_store(url)
    try:
        store.write_batch("shop", [ticket_span(f"T-late-{n}", task_type=task_type, start_ns=start) for n in range(2)])
    finally:
        store.close()
    again = runner.invoke(app, ["replay", "--period", PERIOD.name, "--config", str(config)])
    assert again.exit_code == 0, again.output
    said = " ".join(again.output.split())
    assert "its trials were reused" in said
    assert f"2 production tickets of {PERIOD.name} arrived after this run sampled its tickets" in said, said
    assert "--fresh` replays a sample of them all" in said
