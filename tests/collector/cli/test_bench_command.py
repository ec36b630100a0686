"""`passhat bench`: several domains or all, per-domain and overall figures with intervals and counts; the
deprecated `passhat replay --domain` spelling runs it with a note; options of the other command are refused."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.collector.reliability import TaskTypeTrials, pool_task_types, summarize_task_type
from passhat.sandbox import available_domains

SMALL = ["--scenarios", "2", "--k", "2", "--json"]


def _bench(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["bench", *args])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_several_domains_give_each_domain_and_the_whole_its_figures_with_intervals_and_counts() -> None:
    data = _bench("--domain", "retail,travel", *SMALL)

    assert [entry["domain"] for entry in data["domains"]] == ["retail", "travel"]
    assert {row["domain"] for row in data["task_types"]} == {"retail", "travel"}
    for entry in [*data["domains"], data["overall"]]:
        mine = [r for r in data["task_types"] if entry["domain"] in ("overall", r["domain"])]
        assert entry["task_types"] == len(mine) and entry["tickets"] == sum(r["tickets"] for r in mine)
        assert entry["trials"] == sum(r["trials"] for r in mine)
        for name in ("pass_at_1", "pass_at_k", "pass_hat_k"):
            low, high = entry[f"{name}_ci"]
            # The pooled figure is the mean over the tickets, inside its interval, which is never zero-width.
            mean = sum(r[name] * r["tickets"] for r in mine) / entry["tickets"]
            assert entry[name] == pytest.approx(mean) and low <= entry[name] <= high and low < high
    assert data["overall"]["tickets"] == sum(entry["tickets"] for entry in data["domains"])
    assert data["executor"] == "local" and data["infra_retries"] == 0


def test_all_runs_every_installed_domain_and_the_table_shows_them() -> None:
    result = CliRunner().invoke(app, ["bench", "--domain", "all", "--task-type", "cancel_pending_order", "--k", "1"])
    assert result.exit_code == 0, result.output
    assert "│ retail" in result.stdout and "│ overall" not in result.stdout  # one domain has that task type
    data = _bench("--domain", "all", "--scenarios", "1", "--k", "1", "--json")
    assert [entry["domain"] for entry in data["domains"]] == available_domains()
    table = CliRunner().invoke(app, ["bench", "--domains", "retail,banking", "--scenarios", "1", "--k", "1"])
    assert table.exit_code == 0 and "by domain" in table.stdout and "│ overall" in table.stdout
    # In 80 columns (CliRunner's) task types and signatures are folded, never cut: "tool_usage.…" told nothing.
    assert "…" not in table.stdout and "below each pass^1: its 95% interval" in table.stdout
    # Nor cut at the right edge: with a domain column the signatures' minimum width overflowed 80 columns, and
    # Rich cut every line there ("tool_usage.er" + "or_not_retrie", the r and d lost, no right border).
    ruled = [line.rstrip() for line in table.stdout.splitlines() if line[:1] in "┏┃┡│└"]
    assert ruled and all(line[-1:] in "┓┃┩│┘" for line in ruled), "\n".join(ruled)


def test_the_old_spelling_runs_the_benchmark_with_a_deprecation_note() -> None:
    args = ["--domain", "retail", "--task-type", "cancel_pending_order", *SMALL]
    old = CliRunner().invoke(app, ["replay", *args])
    assert old.exit_code == 0, old.output
    assert "`passhat replay --domain` is deprecated: run `passhat bench --domain" in old.stderr
    assert json.loads(old.stdout) == _bench(*args)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # The production replay's options are refused by the benchmark, in either spelling.
        (["replay", "--domain", "retail", "--store", "nope://", "--project", "nope"], "--store applies to"),
        (["bench", "--domain", "retail", "--project", "nope"], "--project applies to `passhat replay`"),
        (["bench", "--domain", "retail", "--period", "2026-W48"], "--period applies to `passhat replay`"),
        # And the benchmark's by the production replay.
        (["replay", "--period", "2026-W48", "--scenarios", "3"], "--scenarios applies to --domain only"),
        (["replay", "--period", "2026-W48", "--transport", "http"], "--transport applies to --domain only"),
        (["bench", "--domain", "retail,atlantis"], "no sandbox domain named 'atlantis'"),
        (["bench", "--domain", "all,retail"], "--domain all stands alone"),
        (["bench"], "give --domain"),
        (["bench", "--domain", "retail", "--task-type", "book_flight"], "no task type 'book_flight' in retail"),
        (["replay"], "give --period or --since"),
        (["bench", "--domain", "retail", "--scenario", "2"], "`passhat bench` has no option --scenario"),
    ],
)
def test_options_that_do_not_apply_are_one_clear_error(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.output


def test_pooled_domain_intervals_cover_at_the_nominal_rate() -> None:
    """Three task types of 10 tickets with different pass^k: the pooled interval covers the mean >= 95%."""
    rng = np.random.default_rng(7)
    rates, tickets, k = [0.2, 0.6, 0.95], 10, 4
    truth = float(np.mean([p**k for p in rates]))
    covered, runs = 0, 400
    for _ in range(runs):
        rows = []
        for index, p in enumerate(rates):
            n = np.full(tickets, k)
            c = rng.binomial(k, p, size=tickets)
            rows.append(TaskTypeTrials("d", f"t{index}", summarize_task_type(n, c, k)))
        low, high = pool_task_types("d", rows).pass_hat_k_ci
        covered += low <= truth <= high
    assert covered / runs >= 0.93


def test_in_80_columns_the_signatures_follow_the_table_and_no_name_is_folded_mid_word(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In 80 columns (CliRunner's) the signatures column left the task types 16 letters: "cancel_pending_o" over
    "rder", "policy_violatio" over "n 3". There the signatures follow the table, a line per task type; in a wide
    terminal they stay its last column."""
    from passhat.collector.cli._console import console

    # The width the console renders at: 80 (CliRunner's, with no terminal), then a wide terminal's.
    monkeypatch.setattr(console, "_width", 80)
    args = ["bench", "--domain", "retail", "--scenarios", "3", "--k", "3", "--seed", "3"]
    data = json.loads(CliRunner().invoke(app, [*args, "--json"]).stdout)
    narrow = CliRunner().invoke(app, args)
    assert narrow.exit_code == 0, narrow.output
    table, below = narrow.stdout.split("failure signatures, most frequent first")
    assert "signatures" not in table
    for row in data["task_types"]:
        assert f"│ {row['task_type']} " in table  # whole, on its row's first line
        if row["signatures"]:
            (line,) = [line for line in below.splitlines() if line.split()[:1] == [row["task_type"]]]
            first = sorted(row["signatures"].items(), key=lambda item: (-item[1], item[0]))[0]
            assert f"{first[0]} {first[1]}" in line  # the most frequent first, whole
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 80
    monkeypatch.setattr(console, "_width", 160)
    wide = CliRunner().invoke(app, args)
    assert "failure signatures, most frequent first" not in wide.stdout and "signatures" in wide.stdout


def test_task_types_repeated_or_comma_separated_run_each_of_them() -> None:
    """`--task-type` given twice kept the last one only, silently; now each runs (as `suite run` takes them)."""
    repeated = _bench("--domain", "retail,travel", "--task-type", "cancel_pending_order", "--task-type",
                      "change_flight_date", "--scenarios", "1", "--k", "1", "--json")  # fmt: skip
    assert {(r["domain"], r["task_type"]) for r in repeated["task_types"]} == {
        ("retail", "cancel_pending_order"),
        ("travel", "change_flight_date"),
    }
    commas = _bench("--domain", "retail", "--task-type", "cancel_pending_order, exchange_variant", "--scenarios", "1",
                    "--k", "1", "--json")  # fmt: skip
    assert [r["task_type"] for r in commas["task_types"]] == ["cancel_pending_order", "exchange_variant"]
    typo = CliRunner().invoke(app, ["bench", "--domain", "retail", "--task-type", "exchange_variant,cancel_pendng"])
    assert typo.exit_code == 2 and "no task type 'cancel_pendng'" in typo.output
    empty = CliRunner().invoke(app, ["bench", "--domain", "retail", "--task-type", "a,,b"])
    assert empty.exit_code == 2 and "empty name" in empty.output
