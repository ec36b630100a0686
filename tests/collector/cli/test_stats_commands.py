"""`passhat fit`, `passhat calc` and `passhat demo` as a user runs them."""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from passhat.collector.cli import app

runner = CliRunner()
SEED = ["--point", "pass@1=0.654", "--point", "pass@20=0.911", "--point", "pass^20=0.253"]


def run_json(args: list[str]) -> dict[str, object]:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    data: dict[str, object] = json.loads(result.stdout)
    return data


def test_fit_points_json_has_the_documented_shape() -> None:
    data = run_json(["fit", *SEED, "--components", "3"])
    components = data["components"]
    assert isinstance(components, list) and len(components) == 3
    assert [c["p"] for c in components] == sorted((c["p"] for c in components), reverse=True)
    assert components[0]["weight"] == pytest.approx(0.31, abs=0.01)
    assert data["max_abs_error"] < 1e-6  # type: ignore[operator]
    curve = data["curve"]
    assert isinstance(curve, dict) and set(curve) == {"k", "pass_at_k", "pass_hat_k"}
    assert curve["pass_hat_k"][19] == pytest.approx(0.253, abs=1e-6)


def write_trials(path: pathlib.Path) -> pathlib.Path:
    lines = ["task_type,ticket_id,passed"]
    outcomes = {"refund": {"r1": [1, 1, 1, 1], "r2": [1, 0, 1, 1]}, "cancel": {"c1": [0, 0, 1, 0], "c2": [1, 1, 1, 1]}}
    for task_type, tickets in outcomes.items():
        for ticket, results in tickets.items():
            lines += [f"{task_type},{ticket},{'true' if r else 'false'}" for r in results]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_fit_trials_per_trial_rows(tmp_path: pathlib.Path) -> None:
    data = run_json(["fit", "--trials", str(write_trials(tmp_path / "t.csv"))])
    assert data["k"] == 4
    rows = {row["task_type"]: row for row in data["task_types"]}  # type: ignore[union-attr]
    assert rows["refund"]["tickets"] == 2 and rows["refund"]["trials_per_ticket"] == 4
    assert rows["refund"]["pass_at_1"] == pytest.approx(7 / 8)
    assert rows["refund"]["pass_hat_k"] == pytest.approx(0.5)
    assert rows["cancel"]["pass_hat_k"] == pytest.approx(0.5)
    assert len(rows["refund"]["pass_hat_k_ci"]) == 2
    assert data["overall"]["pass_at_1"] == pytest.approx(12 / 16)  # type: ignore[index]
    assert "components" in data["mixture"]  # type: ignore[operator]


def test_fit_trials_per_ticket_counts(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "counts.csv"
    path.write_text("task_type,ticket_id,n,c\nrefund,a,10,10\nrefund,b,10,5\n")
    data = run_json(["fit", "--trials", str(path), "--k", "2"])
    row = data["task_types"][0]  # type: ignore[index]
    assert row["pass_hat_k"] == pytest.approx((1 + 10 / 45) / 2)


def test_calc_json() -> None:
    data = run_json(["calc", "--success-rate", "0.654", "--tickets-per-day", "2000", "--noticed", "0.3", "--k", "20"])
    assert data["failed_tickets_per_day"] == pytest.approx(692)
    assert data["noticed_failures_per_day"] == pytest.approx(207.6)
    assert data["model"] == "homogeneous"


def test_calc_with_a_mixture() -> None:
    data = run_json(["calc", "--mixture", "0.31:0.99,0.60:0.58,0.09:0", "--tickets-per-day", "100", "--k", "20"])
    assert data["pass_hat_k"] == pytest.approx(0.2535, abs=0.001)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["fit", "--point", "pass@1"], "pass@K=VALUE"),
        (["fit", "--point", "pass@1=2"], "[0, 1]"),
        (["fit"], "--point"),
        (["calc", "--success-rate", "1.5", "--tickets-per-day", "10"], "[0, 1]"),
        (["calc", "--tickets-per-day", "10"], "--success-rate"),
        (["calc", "--mixture", "abc", "--tickets-per-day", "10"], "WEIGHT:P"),
        (["calc", "--mixture", "0.5:0.9,0.6:0.1", "--tickets-per-day", "10"], "add up to 1.1, not 1"),
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output + result.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty"),
        ("task_type,ticket_id\n", "missing column"),
        ("task_type,ticket_id,passed\n", "no rows"),
        ("task_type,ticket_id,passed\nrefund,a,maybe\n", "true/false"),
        ("task_type,ticket_id,n,c\nrefund,a,3,5\n", "cannot exceed"),
    ],
)
def test_bad_trials_files_are_named(tmp_path: pathlib.Path, content: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(content)
    result = runner.invoke(app, ["fit", "--trials", str(path)])
    assert result.exit_code == 2, result.output
    assert message in result.stderr


def test_missing_trials_file(tmp_path: pathlib.Path) -> None:
    result = runner.invoke(app, ["fit", "--trials", str(tmp_path / "nope.csv")])
    assert result.exit_code == 2 and "no such file" in result.stderr


def test_console_script_reports_errors_without_a_traceback() -> None:
    script = shutil.which("passhat", path=str(pathlib.Path(sys.executable).parent))
    assert script is not None
    done = subprocess.run([script, "fit", "--point", "pass@x=1"], capture_output=True, text=True)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and "pass@K=VALUE" in done.stderr
