"""`passhat runs list|show|compare` as a new user drives them: every figure with its interval and sample size, a
suite run named for what it is, bad option values refused in one line, no comparison above the trials a run has;
and `passhat replay` does not reuse a run whose trials were all lost to the harness."""

from __future__ import annotations

import asyncio
import json
import pathlib
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.collector.replay import compare_runs
from passhat.collector.store import open_store
from passhat.collector.suite import SuiteRunSettings, run_suite, suite_agent
from tests.collector.loop.test_runs import W40, _production_week

pytestmark = pytest.mark.slow


@dataclass
class Runs:
    url: str
    config: pathlib.Path
    base: dict[str, Any]  # k = 4, 3 tickets of each task type
    candidate: dict[str, Any]  # the base's tickets at k = 2
    suite: str

    def invoke(self, *args: str) -> Any:
        return CliRunner().invoke(app, [*args, "--config", str(self.config), "--store", self.url], terminal_width=200)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    folder = tmp_path_factory.mktemp("runs")
    url = f"sqlite:///{folder / 'runs.db'}"
    _production_week(url, W40, 16)
    config = folder / "passhat.toml"
    config.write_text(
        f'project = "shop"\n[report]\nout_dir = "{folder / "reports"}"\n[replay]\nk = 4\ntickets_per_task_type = 3\n'
    )

    def run(*args: str) -> dict[str, Any]:
        done = CliRunner().invoke(app, [*args, "--config", str(config), "--store", url, "--json"])
        assert done.exit_code == 0, done.output
        found: dict[str, Any] = json.loads(done.stdout)
        return found

    base = run("replay", "--period", W40.name)
    candidate = run("replay", "--period", W40.name, "--k", "2", "--compare-to", base["run_id"])
    store = open_store(url)
    try:
        settings = SuiteRunSettings(domains=("retail",), task_types=("cancel_pending_order",), k=1)
        suite = asyncio.run(run_suite(store, "shop", suite_agent("reference"), settings)).run.run_id
    finally:
        store.close()
    yield Runs(url, config, base, candidate, suite)


def _words(text: str) -> str:
    return " ".join(text.split())


def test_runs_show_prints_every_figure_with_its_interval_and_sample_size(runs: Runs) -> None:
    shown = runs.invoke("runs", "show", runs.base["run_id"])
    assert shown.exit_code == 0, shown.output
    data = json.loads(runs.invoke("runs", "show", runs.base["run_id"], "--json").stdout)
    figures = data["summary"]["figures"]
    assert figures["confidence_level"] == 0.95
    text = _words(shown.output)
    tickets = figures["overall"]["tickets"]
    assert f"figures over {tickets} tickets ({runs.base['trials']} trials), 95% intervals" in text
    for side in ("overall", "unweighted"):
        for key in ("pass_at_1", "pass_at_k", "pass_hat_k"):
            low, high = figures[side][f"{key}_ci"]
            assert f"{100 * figures[side][key]:.1f}% [{100 * low:.1f}, {100 * high:.1f}]" in text, (side, key)
    assert "pass^4" in text and "traffic-weighted" in text and "unweighted" in text


def test_runs_show_names_a_suite_run_for_what_it_is(runs: Runs) -> None:
    shown = runs.invoke("runs", "show", runs.suite)
    assert shown.exit_code == 0, shown.output
    text = _words(shown.output)
    assert f"run {runs.suite}: suite run of suite v1 (retail; cancel_pending_order) (finished)" in text
    assert "None" not in text and f"passhat suite table {runs.suite}" in text
    assert "7 tasks" in text


@pytest.mark.parametrize(
    ("option", "says"),
    [
        (["--level", "1.5"], "--level must lie strictly between 0 and 1"),
        (["--level", "0"], "--level must lie strictly between 0 and 1"),
        (["--k", "-5"], "Invalid value for '--k'"),
        (["--k", "0"], "Invalid value for '--k'"),
    ],
)
def test_runs_compare_refuses_an_option_out_of_range_in_one_line(runs: Runs, option: list[str], says: str) -> None:
    done = runs.invoke("runs", "compare", runs.base["run_id"], runs.candidate["run_id"], *option)
    assert done.exit_code == 2
    [line] = done.output.strip().splitlines()
    assert line.startswith("passhat: error:") and says in line and "share no ticket" not in line


def test_runs_compare_refuses_a_k_above_the_trials_a_run_has_and_names_the_largest(runs: Runs) -> None:
    base, candidate = runs.base["run_id"], runs.candidate["run_id"]
    done = runs.invoke("runs", "compare", base, candidate, "--k", "4")
    assert done.exit_code == 2
    [line] = done.output.strip().splitlines()
    assert f"--k 4 is above the 2 trials per ticket of run {candidate}" in line
    assert "the largest usable k is 2" in line
    assert runs.invoke("runs", "compare", base, candidate, "--k", "2").exit_code == 0
    # The library (replay --compare-to, the loop, the CI gate) lowers k instead, and says so in the notes.
    store = open_store(runs.url)
    try:
        lowered = compare_runs(store, "shop", base, candidate, k=4)
    finally:
        store.close()
    assert lowered.k == 2 and "pass^4 was asked for, but run" in lowered.notes[0]


def test_runs_compare_prints_the_notes_the_json_has(runs: Runs) -> None:
    args = ("runs", "compare", runs.base["run_id"], runs.candidate["run_id"])
    notes = json.loads(runs.invoke(*args, "--json").stdout)["notes"]
    assert notes  # 3 tickets of each task type: too few pairs for an interval
    text = _words(runs.invoke(*args).output)
    assert all(f"Note: {_words(note)}" in text for note in notes), text


@pytest.mark.parametrize(
    ("option", "says"),
    [
        (["--period", "2026-W99"], "'2026-W99' is not a week of 2026"),
        (["--period", "last week"], "cannot read the period 'last week'"),
        (["--limit", "0"], "Invalid value for '--limit'"),
        (["--limit", "-3"], "Invalid value for '--limit'"),
    ],
)
def test_runs_list_refuses_a_period_or_limit_that_cannot_be(runs: Runs, option: list[str], says: str) -> None:
    done = runs.invoke("runs", "list", *option)
    assert done.exit_code == 2
    [line] = done.output.strip().splitlines()
    assert line.startswith("passhat: error:") and says in line


def test_runs_list_takes_a_period_as_grade_does(runs: Runs) -> None:
    listed = json.loads(runs.invoke("runs", "list", "--period", W40.name, "--json").stdout)["runs"]
    assert {row["run_id"] for row in listed} == {runs.base["run_id"], runs.candidate["run_id"]}
    shown = runs.invoke("runs", "list")
    assert shown.exit_code == 0 and "None" not in shown.output  # a suite run has no period: "-"


def test_runs_list_in_80_columns_folds_the_agent_and_loses_no_character_of_it(runs: Runs) -> None:
    """In 80 columns the agent column was narrower than its minimum: Rich cut each folded line, so
    "ReferenceAgent (offline simulation) 1.1" read "ReferenceA / nt (offlin / simulation / 1.1"."""
    listed = json.loads(runs.invoke("runs", "list", "--json").stdout)["runs"]
    shown = CliRunner().invoke(app, ["runs", "list", "--config", str(runs.config), "--store", runs.url])
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    for row in listed:
        agent = f"{row['agent']} {row['agent_version']}".strip()
        (at,) = [n for n, line in enumerate(lines) if line.split()[:2] == [row["run_id"], row["period"] or "-"]]
        start = lines[at].index(agent.split()[0][:6])  # where the agent column starts
        folded = [lines[at][start:]]
        for line in lines[at + 1 :]:
            if line[:start].strip():  # the next row, or the notes under the table
                break
            folded.append(line[start:])
        assert "".join("".join(folded).split()) == "".join(agent.split()), folded
        assert max(len(part.strip()) for part in folded) >= min(len(agent), 12)  # room for a word, not a few letters


def test_a_replay_whose_trials_were_all_lost_to_the_harness_is_not_reused(runs: Runs) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    args = ("replay", "--period", W40.name, "--agent", f"http://127.0.0.1:{port}/agent", "--k", "1",
            "--task-type", "cancel_pending_order", "--json")  # fmt: skip
    first = runs.invoke(*args)
    broken = json.loads(first.stdout)
    assert broken["harness_failures"] and broken["harness_failures"][0]["trials"] == broken["trials"] == 3
    # It measured nothing: exit status 1 and one line saying why, as `suite run` says it.
    assert first.exit_code == 1
    assert f"all 3 trials of run {broken['run_id']} were lost to the harness" in _words(first.stderr)
    again = json.loads(runs.invoke(*args).stdout)
    assert not again["reused"] and again["run_id"] != broken["run_id"]
    # A run that measured the agent is still reused.
    assert json.loads(runs.invoke("replay", "--period", W40.name, "--json").stdout)["reused"]


def test_replay_of_a_task_type_the_period_does_not_have_says_so_and_names_the_close_one(runs: Runs) -> None:
    """A typo in --task-type said "no production tickets of 2026-W40 ... (is the agent sending traces to this
    collector?)", while the period had tickets: it names the task type, the close match and the period's own."""
    done = runs.invoke("replay", "--period", W40.name, "--task-type", "cancel_pending_ordr")
    assert done.exit_code == 2
    [line] = done.output.strip().splitlines()
    assert line.startswith("passhat: error: no production tickets of task type 'cancel_pending_ordr' in 2026-W40")
    assert "did you mean 'cancel_pending_order'?" in line and "check --task-type" in line
    assert "cancel_pending_order," in line.split("the period's task types: ")[1]
    assert "sending traces" not in line
    # Beside a task type it has: the typo is refused all the same, not dropped (and no run is made).
    both = runs.invoke("replay", "--period", W40.name, "--task-type", "cancel_pending_order,cancel_pending_ordr")
    assert both.exit_code == 2 and "task type 'cancel_pending_ordr'" in both.output


def test_bench_names_the_task_type_closest_to_a_typo() -> None:
    done = CliRunner().invoke(app, ["bench", "--domain", "retail", "--task-type", "cancel_pending_ordr"])
    assert done.exit_code == 2
    assert "did you mean 'cancel_pending_order'?" in " ".join(done.output.split())


def test_a_comparison_of_a_task_type_the_baseline_never_replayed_says_so(tmp_path: pathlib.Path) -> None:
    """The baseline replayed one task type; comparing another on its tickets left nothing, and the error said the
    period had no production tickets (it had)."""
    from tests.collector.loop.test_runs import TASK_TYPES

    url = f"sqlite:///{tmp_path / 'one.db'}"
    _production_week(url, W40, 8)
    config = tmp_path / "passhat.toml"
    config.write_text('project = "shop"\n[replay]\nk = 2\ntickets_per_task_type = 1\n')
    first, other = TASK_TYPES[0], TASK_TYPES[1]

    def replay(*args: str) -> Any:
        return CliRunner().invoke(app, ["replay", "--period", W40.name, "--config", str(config), "--store", url, *args])

    base = replay("--task-type", first, "--json")
    assert base.exit_code == 0, base.output
    done = replay("--compare-to", json.loads(base.stdout)["run_id"], "--task-type", other)
    assert done.exit_code == 2
    said = " ".join(done.output.split())
    assert f"replayed no ticket of task type {other}: nothing to compare (its task types: {first})" in said
