"""`passhat suite list|run|table` through the real command line (Typer's runner, a real SQLite store)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from passhat.collector.cli import app
from tests.collector.suite.conftest import StoredRuns

pytestmark = pytest.mark.slow


def test_suite_list_shows_versions_domains_and_task_types_with_counts() -> None:
    result = CliRunner().invoke(app, ["suite", "list", "--json"])
    assert result.exit_code == 0, result.output
    listing = json.loads(result.output)
    (v1,) = listing["versions"]
    assert listing["current"] == "v1" and v1["version"] == "v1" and len(v1["content_hash"]) == 64
    assert v1["tasks"] >= 507 and set(v1["domains"]) == {"retail", "travel", "banking", "insurance", "consulting"}
    retail = v1["domains"]["retail"]
    assert sum(t["tasks"] for t in retail["task_types"].values()) == retail["tasks"]
    text = CliRunner().invoke(app, ["suite", "list"])
    assert text.exit_code == 0 and "suite v1" in text.output
    # Every task type's name whole, whatever the terminal's width (the runner's console is 80 columns wide).
    assert all(name in text.output for name in retail["task_types"]), text.output
    kinds = {task["kind"] for task in retail["task_types"].values()}
    assert {"confidentiality", "read_only"} <= kinds and all(kind in text.output for kind in kinds)  # whole too
    assert max(len(line) for line in text.output.splitlines()[1:]) <= 80  # the table fits the 80 columns


def test_suite_run_names_its_run_and_reuses_a_finished_one(stored_runs: StoredRuns) -> None:
    types = "cancel_pending_order,exchange_variant,change_flight_date,seat_change"
    args = ["suite", "run", "--flaws", "careful", "--k", "3", "--domains", "retail,travel", "--task-type", types,
            "--store", stored_runs.url, "--json"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    run = json.loads(result.output)
    assert run["run_id"] == stored_runs.careful and run["reused"] and run["ran"] == 0
    assert run["agent"] == "ReferenceAgent/careful (simulation)" and run["simulated"]


def test_suite_table_prints_json_html_and_a_terminal_table(stored_runs: StoredRuns, tmp_path: Path) -> None:
    page = tmp_path / "table.html"
    args = ["suite", "table", stored_runs.careful, stored_runs.sloppy, "--store", stored_runs.url]
    result = CliRunner().invoke(app, [*args, "--json", "--html", str(page)])
    assert result.exit_code == 0, result.output
    table = json.loads(result.output)
    assert table["domains"] == ["retail", "travel"] and table["k"] == 3
    cell = table["cells"]["retail"][stored_runs.careful]
    assert cell["tasks"] == 14 and cell["trials"] == 42
    assert cell["pass_hat_k_ci"][0] <= cell["pass_hat_k"] <= cell["pass_hat_k_ci"][1]
    assert table["ranks"]["overall"] == [stored_runs.careful, stored_runs.sloppy]
    assert table["agreement"]["statistic"] == "kendall_w" and table["agreement"]["interval"] is not None
    assert {p["domain"] for p in table["paired"]} == {"retail", "travel", "overall"}
    assert table["reference"] == {"pass_at_1": 0.654, "pass_at_20": 0.911, "pass_hat_20": 0.253}
    assert page.exists() and "suite-data" in page.read_text()
    text = CliRunner().invoke(app, args, env={"COLUMNS": "220"})
    assert text.exit_code == 0, text.output
    assert "ReferenceAgent/careful (simulation)" in text.output and "Kendall's W" in text.output
    assert "swing across domains" in text.output and "paired differences" in text.output
    narrow = CliRunner().invoke(app, args)  # 80 columns: every figure's interval is still there, nothing cut
    assert narrow.exit_code == 0, narrow.output
    shown = narrow.output[: narrow.output.index("below each figure: its 95% interval")]
    for cells in table["cells"].values():
        for cell in cells.values():
            for name in ("pass_at_1", "pass_at_k", "pass_hat_k"):
                low, high = cell[f"{name}_ci"]
                assert f"[{100 * low:.0f}, {100 * high:.0f}]" in shown, (name, cell)
    assert "…" not in shown


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["suite", "table", "nope"], "no run 'nope'"),
        (["suite", "run", "--domains", "mars"], "no domain 'mars'"),
        (["suite", "run", "--task-type", "nope"], "no task type 'nope'"),
        (["suite", "run", "--agent", "openai", "--flaws", "sloppy"], "--flaws names a profile"),
        (["suite", "run", "--flaws", "perfect"], "no flaw profile 'perfect'"),
        (["suite", "run", "--executor", "cloud"], "--executor must be local or ray"),
        (["suite", "run", "--k", "0"], "--k and --min-trials must be at least 1"),
        (["suite", "run", "--suite-version", "v0"], "no suite version 'v0'"),
    ],
)
def test_bad_input_is_one_clear_line(args: list[str], message: str, stored_runs: StoredRuns) -> None:
    result = CliRunner().invoke(app, [*args, "--store", stored_runs.url])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def test_a_run_that_is_not_a_suite_run_is_refused(stored_runs: StoredRuns) -> None:
    import datetime as dt

    from passhat.collector.store import ReplayRun

    stored_runs.store.create_replay_run(
        "default", ReplayRun("run-2026-W48-x", dt.datetime.now(dt.UTC), 5, params={"period": "2026-W48"})
    )
    result = CliRunner().invoke(app, ["suite", "table", "run-2026-W48-x", "--store", stored_runs.url])
    assert result.exit_code == 2 and "is not a suite run" in result.output
