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
from passhat.collector.store import open_store


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
        # A write made before the customer's yes fails the demo's own in-process grading, but a production ticket's
        # tool calls carry no position in its conversation yet, so its consent is not judged: at most as many fail.
        assert 0.8 * week.production_failed <= graded_failed <= week.production_failed
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
    # Each week's figures with their intervals, the week's name whole (the CliRunner's terminal is 80 columns).
    summary = json.loads((tmp_path / "summary.json").read_text())
    for week in summary["weeks"]:
        assert week["period"] in result.output
        low, high = week["unweighted"]["pass_at_1_ci"]
        assert f"{100 * low:.0f}–{100 * high:.0f}%" in result.output
        assert (f"{week['period']} alert: " in result.output) or (f"{week['period']}: no alert" in result.output)
    assert "95% interval" in result.output
    assert (tmp_path / "reports").is_dir()
    # What to type to browse these results names this folder and size (the default folder holds no such demo).
    again = f"demo --keep --out {tmp_path} --tickets-per-week 100 --k 3 --tickets-per-task-type 2"
    assert again in " ".join(result.output.split())


def _browse_until_ctrl_c(command: list[str]) -> tuple[list[str], str]:
    """Run `passhat demo --keep ...` until it prints the web UI, check the UI serves the demo's data, stop it with
    Ctrl-C; what it printed before and after."""
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
    return lines, rest


@pytest.mark.slow
def test_demo_keep_serves_the_web_ui_until_ctrl_c_and_later_serves_the_finished_demo_without_rerunning(
    tmp_path: pathlib.Path,
) -> None:
    command = [
        sys.executable, "-c", "from passhat.collector.cli import main; main()", "demo", "--keep",
        "--out", str(tmp_path), "--tickets-per-week", "100", "--k", "3", "--tickets-per-task-type", "2",
    ]  # fmt: skip
    lines, _ = _browse_until_ctrl_c(command)
    assert "serving the finished demo" not in "".join(lines)
    summary = tmp_path / "summary.json"
    assert summary.exists()
    written = summary.stat().st_mtime_ns
    reports = sorted(p.relative_to(tmp_path) for p in (tmp_path / "reports").rglob("*") if p.is_file())

    # Again on the same folder: the finished demo is served as it is, nothing runs again.
    lines, _ = _browse_until_ctrl_c(command)
    printed = "".join(lines)
    assert f"serving the finished demo in {tmp_path}" in printed
    assert "Two simulated weeks" in printed and "production traffic" not in printed  # its summary, no new run
    assert summary.stat().st_mtime_ns == written
    assert sorted(p.relative_to(tmp_path) for p in (tmp_path / "reports").rglob("*") if p.is_file()) == reports
    with open_store(f"sqlite:///{tmp_path / 'data' / 'passhat.sqlite'}") as store:
        visits = [k for k in store.list_api_keys() if k.label == "passhat demo --keep"]
    assert len(visits) == 1 and visits[0].revoked_at is not None  # the visit's key ends with the visit

    # --fresh runs it again.
    process = subprocess.Popen(
        [*command, "--fresh"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
    )  # fmt: skip
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
    finally:
        process.kill()
        process.communicate()
    assert first.startswith("passhat demo: the whole loop, offline"), first


def test_the_demo_says_how_to_run_passhat_from_the_virtual_environment(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from passhat.collector.cli._demo import _command

    script = tmp_path / ".venv" / "bin" / "passhat"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setattr(sys, "argv", [".venv/bin/passhat", "demo"])
    assert _command() == ".venv/bin/passhat"  # as `make demo` runs it: passhat is not on PATH
    monkeypatch.setenv("PATH", f"{script.parent}:/usr/bin:/bin")
    monkeypatch.setattr(sys, "argv", [str(script), "demo"])
    assert _command() == "passhat"  # the virtual environment is activated
