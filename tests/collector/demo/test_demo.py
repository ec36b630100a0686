"""`passhat demo`: the whole loop offline, at a small scale, including the regression alert."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys

import httpx
import jsonschema
import pytest
from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.collector.demo import DemoSettings, run_demo_sync
from passhat.collector.report import report_schema


@pytest.mark.slow
def test_demo_runs_two_weeks_and_the_regression_alert_reaches_the_webhook(tmp_path: pathlib.Path) -> None:
    settings = DemoSettings(
        tickets_per_week=400, k=5, tickets_per_task_type=3, regressed_tickets=40, regressed_success=0.0,
        alert_confidence=0.95,
    )  # fmt: skip
    outcome = run_demo_sync(tmp_path, settings)
    assert [w.production_tickets for w in outcome.weeks] == [400, 400]
    fired = [a for a in outcome.alerts_received if a.get("event") == "alert.fired"]
    assert [a["task_type"] for a in fired] == ["return_delivered_items"]
    assert fired[0]["period"] == outcome.weeks[1].period.name
    for week in outcome.weeks:
        data = json.loads(week.result.report_paths["json"].read_text())
        jsonschema.validate(data, report_schema())
        assert data["k"] == 5
        # Sandbox fidelity: every production ticket graded on its own writes and replies, as its own run graded
        # it when it happened; the sandbox replays the same agent, so its pass@1 agrees with production.
        fidelity = data["sandbox_fidelity"]["task_types"]
        assert sum(row["production_tickets"] for row in fidelity) == week.production_tickets
        graded_failed = sum(row["production_tickets"] - row["production_passed"] for row in fidelity)
        assert graded_failed == week.production_failed
        assert [row["task_type"] for row in fidelity if row["agrees"] is not True] == []
    html = outcome.weeks[1].result.report_paths["html"].read_text()
    assert "simulat" in html.lower()
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["simulated"] is True and len(summary["weeks"]) == 2


@pytest.mark.slow
def test_demo_command_prints_a_summary(tmp_path: pathlib.Path) -> None:
    result = CliRunner().invoke(
        app, ["demo", "--out", str(tmp_path), "--tickets-per-week", "100", "--k", "3", "--tickets-per-task-type", "2"]
    )
    assert result.exit_code == 0, result.output
    assert "simulation" in result.output
    assert (tmp_path / "summary.json").exists()
    assert (tmp_path / "reports").is_dir()


@pytest.mark.slow
def test_demo_keep_prints_the_web_ui_and_serves_the_demos_data_until_ctrl_c(tmp_path: pathlib.Path) -> None:
    command = [
        sys.executable, "-c", "from passhat.collector.cli import main; main()", "demo", "--keep",
        "--out", str(tmp_path), "--tickets-per-week", "100", "--k", "3", "--tickets-per-task-type", "2",
    ]  # fmt: skip
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        assert process.stdout is not None
        lines: list[str] = []
        while not any(line.startswith("Web UI:") for line in lines[:-1]):
            line = process.stdout.readline()
            assert line, "the demo ended without printing the web UI's address:\n" + "".join(lines)
            lines.append(line)
        ui_url = lines[-2].split()[2]
        key = lines[-1].strip()
        assert ui_url.startswith("http://127.0.0.1:") and ui_url.endswith("/ui/")
        with httpx.Client(base_url=ui_url.removesuffix("/ui/"), timeout=30.0) as client:
            signed_in = client.post("/ui/login", data={"key": key}, follow_redirects=True)
            assert signed_in.status_code == 200
            assert "return_delivered_items" in signed_in.text  # the regressed task type of the demo
            runs = client.get("/ui/runs")
            assert runs.text.count(">official<") == 2
    finally:
        process.send_signal(signal.SIGINT)
        try:
            rest, _ = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    assert process.returncode == 0, rest
    assert "collector stopped" in rest
    assert (tmp_path / "summary.json").exists()
