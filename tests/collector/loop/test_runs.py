"""Replay runs a team can rely on, through the CLI as a user drives it: one official run per period, one-off runs
that stay exploratory until promoted, re-runs that reuse trials, settings that are honoured, trials stored as traces.
"""

from __future__ import annotations

import asyncio
import functools
import json
import pathlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from typer.testing import CliRunner

import passhat
from passhat.collector.cli import app
from passhat.collector.demo import TrafficPlan, plan_arrivals, serve_traffic
from passhat.collector.demo._traffic import simulated_clock
from passhat.collector.ingest import StoreSpanExporter, create_api_key
from passhat.collector.loop import baseline_counts
from passhat.collector.reliability import pass_hat_k_array
from passhat.collector.replay import SandboxPool
from passhat.collector.store import open_store, parse_period
from passhat.sandbox import FlawConfig, ReferenceAgent, load_domain
from tests.collector.alerts.receivers import Receiver, receiver
from tests.collector.embedded import running_collector

W40, W41 = parse_period("2026-W40"), parse_period("2026-W41")
TASK_TYPES = ["cancel_pending_order", "order_status_inquiry"]


@dataclass
class Setup:
    url: str
    folder: pathlib.Path

    def config(self, replay: str = "k = 3\ntickets_per_task_type = 3", extra: str = "") -> pathlib.Path:
        path = self.folder / "passhat.toml"
        path.write_text(
            f'project = "shop"\n{extra}\n[report]\nout_dir = "{self.folder / "reports"}"\n[replay]\n{replay}\n',
            encoding="utf-8",
        )
        return path

    def run(self, *args: str, config: pathlib.Path | None = None) -> dict[str, Any]:
        result = CliRunner().invoke(
            app, [*args, "--config", str(config or self.config()), "--store", self.url, "--json"]
        )
        assert result.exit_code == 0, result.output
        data: dict[str, Any] = json.loads(result.stdout)
        return data


def _production_week(url: str, week: Any, count: int) -> None:
    """Simulated production tickets of a week, traced through the SDK straight into the store."""
    store = open_store(url)
    pool = SandboxPool()
    try:
        base = pool.base(load_domain("retail"))
        scenarios = {name: base.scenarios(name, 10) for name in TASK_TYPES}
        arrivals = plan_arrivals(TrafficPlan(week, count, {name: 1.0 for name in TASK_TYPES}), scenarios)
        runtime = passhat.configure(
            # The simulated agent records its writes, not the rows it reads: it blanks, as the demo does.
            make_global=False, source="production", clock=simulated_clock, send=False, redact_mode="blank",
            span_processors=[SimpleSpanProcessor(StoreSpanExporter(store, "shop"))],
        )  # fmt: skip
        asyncio.run(serve_traffic(base, arrivals, ReferenceAgent.factory(FlawConfig.default()), runtime))
        runtime.shutdown()
    finally:
        pool.close()
        store.close()


@pytest.fixture
def setup(tmp_path: pathlib.Path) -> Iterator[Setup]:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    for week in (W40, W41):
        _production_week(url, week, 16)
    yield Setup(url, tmp_path)


@pytest.mark.slow
def test_a_one_off_run_changes_neither_the_report_nor_the_next_baseline_until_promoted(setup: Setup) -> None:
    official = setup.run("replay", "--period", "2026-W40")
    one_off = setup.run("replay", "--period", "2026-W40", "--tickets-per-task-type", "1")
    assert official["role"] == "official" and official["exploratory"] == []
    assert one_off["role"] == "exploratory" and one_off["exploratory"] == ["1 tickets per task type (configured 3)"]

    report = setup.run("report", "--period", "2026-W40")
    assert report["run"] == {"run_id": official["run_id"], "role": "official"}
    store = open_store(setup.url)
    try:
        [baseline] = baseline_counts(store, "shop", W41, periods=1, k=3)
        assert sum(len(c.n) for c in baseline.task_types.values()) == 6  # 3 tickets of each task type

        setup.run("runs", "promote", one_off["run_id"])

        [promoted] = baseline_counts(store, "shop", W41, periods=1, k=3)
        assert sum(len(c.n) for c in promoted.task_types.values()) == 2
    finally:
        store.close()
    assert setup.run("report", "--period", "2026-W40")["run"] == {"run_id": one_off["run_id"], "role": "official"}
    roles = {row["run_id"]: row["role"] for row in setup.run("runs", "list", "--period", "2026-W40")["runs"]}
    assert roles == {one_off["run_id"]: "official", official["run_id"]: "superseded"}
    # As a terminal of 80 columns (or a pipe) shows it, each run id whole, to copy into `runs show`.
    shown = CliRunner().invoke(
        app, ["runs", "list", "--config", str(setup.config()), "--store", setup.url], env={"COLUMNS": "80"}
    )
    assert shown.exit_code == 0 and official["run_id"] in shown.output and one_off["run_id"] in shown.output
    assert "simulation)" in shown.output  # the agent wraps by words (it was folded four letters a line)
    assert f"{one_off['run_id']} is exploratory: " in " ".join(shown.output.split())  # why, under the table


@pytest.mark.slow
def test_report_run_shows_a_named_run_and_says_which(setup: Setup) -> None:
    setup.run("replay", "--period", "2026-W40")
    one_off = setup.run("replay", "--period", "2026-W40", "--task-type", "order_status_inquiry")
    assert one_off["exploratory"] == ["task type order_status_inquiry only"]
    assert {row["task_type"] for row in one_off["task_types"]} == {"order_status_inquiry"}

    shown = setup.run("report", "--period", "2026-W40", "--run", one_off["run_id"])

    assert shown["run"] == {"run_id": one_off["run_id"], "role": "exploratory"}
    assert [t["task_type"] for t in shown["task_types"]] == ["order_status_inquiry"]


@pytest.mark.slow
def test_rerunning_a_finished_period_reuses_its_trials_and_fresh_starts_a_new_run(setup: Setup) -> None:
    first = setup.run("replay", "--period", "2026-W40")
    again = setup.run("replay", "--period", "2026-W40")
    assert again["reused"] and again["run_id"] == first["run_id"] and again["task_types"] == first["task_types"]

    fresh = setup.run("replay", "--period", "2026-W40", "--fresh")

    assert not fresh["reused"] and fresh["run_id"] != first["run_id"] and fresh["role"] == "official"
    assert setup.run("report", "--period", "2026-W40")["run"]["run_id"] == fresh["run_id"]


@pytest.mark.slow
def test_k_given_on_the_command_line_wins_over_the_config(setup: Setup) -> None:
    config = setup.config("k = 20\ntickets_per_task_type = 1")

    data = setup.run("replay", "--period", "2026-W40", "--k", "5", config=config)

    assert data["k"] == 5 and data["trials_per_ticket"] == 5
    assert all(row["trials_per_ticket"] == 5 for row in data["task_types"])


@pytest.mark.slow
def test_replay_trials_are_all_run_and_pass_hat_k_uses_every_one(setup: Setup) -> None:
    config = setup.config("k = 3\ntrials = 8\ntickets_per_task_type = 2")

    data = setup.run("replay", "--period", "2026-W40", config=config)

    assert data["k"] == 3 and data["trials_per_ticket"] == 8
    store = open_store(setup.url)
    try:
        trials = store.list_trials("shop", data["run_id"])
    finally:
        store.close()
    for row in data["task_types"]:
        passes: dict[str, list[bool]] = {}
        for trial in trials:
            if trial.task_type == row["task_type"]:
                passes.setdefault(trial.ticket_id, []).append(trial.passed)
        assert {len(p) for p in passes.values()} == {8}
        n = [len(p) for p in passes.values()]
        c = [sum(p) for p in passes.values()]
        assert row["pass_hat_k"] == pytest.approx(float(pass_hat_k_array(n, c, 3).mean()))


@pytest.mark.slow
def test_trials_are_stored_as_sandbox_tickets_of_their_run_and_not_counted_as_traffic(setup: Setup) -> None:
    store = open_store(setup.url)
    try:
        traffic_before = store.traffic("shop", days=7, today=W40.end_datetime().date(), source="production")
    finally:
        store.close()

    data = setup.run("replay", "--period", "2026-W40")

    store = open_store(setup.url)
    try:
        key, _ = create_api_key(store, "shop")
        with running_collector(store) as collector:
            response = httpx.get(
                f"{collector.url}/api/tickets",
                params={"source": "sandbox", "run": data["run_id"], "limit": 1000},
                headers={"Authorization": f"Bearer {key}"},
            )
        assert store.traffic("shop", days=7, today=W40.end_datetime().date(), source="production") == traffic_before
        trials = store.list_trials("shop", data["run_id"])
    finally:
        store.close()
    assert response.status_code == 200, response.text
    tickets = response.json()["tickets"]
    assert len(tickets) == len(trials) == 2 * 3 * 3
    assert {t["source"] for t in tickets} == {"sandbox"}
    assert {t["ticket_id"] for t in tickets} == {f"{t.ticket_id}#{t.attempt}" for t in trials}


@pytest.mark.slow
def test_the_report_names_the_agent_version_of_each_period(setup: Setup) -> None:
    setup.run("replay", "--period", "2026-W40", config=setup.config(extra='[agent]\nversion = "1.0"'))

    report = setup.run("replay", "--period", "2026-W41", config=setup.config(extra='[agent]\nversion = "1.1"'))

    markdown = pathlib.Path(report["report"]["md"]).read_text(encoding="utf-8")
    data = json.loads(pathlib.Path(report["report"]["json"]).read_text(encoding="utf-8"))
    assert data["agent_version"] == "1.1" and data["run"]["role"] == "official"
    assert [(p["period"], p["agent_version"]) for p in data["trend"]] == [("2026-W40", "1.0"), ("2026-W41", "1.1")]
    assert "version 1.1" in markdown.splitlines()[2]


@pytest.mark.slow
def test_a_candidate_replays_the_baseline_tickets_and_is_compared_pairwise(setup: Setup) -> None:
    base = setup.run("replay", "--period", "2026-W40")

    candidate = setup.run("replay", "--period", "2026-W40", "--agent-version", "2", "--compare-to", base["run_id"])

    assert candidate["role"] == "exploratory" and candidate["agent_version"] == "2"
    comparison = candidate["comparison"]
    assert comparison["baseline"]["run_id"] == base["run_id"]
    assert comparison["candidate"]["run_id"] == candidate["run_id"]
    assert [row["task_type"] for row in comparison["task_types"]] == TASK_TYPES
    assert all(row["tickets"] == 3 for row in comparison["task_types"]) and comparison["unpaired_tickets"] == 0
    again = setup.run("runs", "compare", base["run_id"], candidate["run_id"])
    assert again["task_types"] == comparison["task_types"]
    shown = CliRunner().invoke(  # as a person reads it, in 80 columns: names folded, never cut to "order_st…"
        app, ["runs", "compare", base["run_id"], candidate["run_id"], "--config", str(setup.config()), "--store",
              setup.url],
    )  # fmt: skip
    assert shown.exit_code == 0, shown.output
    assert "…" not in shown.stdout and "paired interval" in shown.stdout
    report = json.loads(pathlib.Path(candidate["report"]["json"]).read_text(encoding="utf-8"))
    assert report["comparison"] == comparison
    markdown = pathlib.Path(candidate["report"]["md"]).read_text(encoding="utf-8")
    assert f"## Compared with run {base['run_id']} on the same tickets" in markdown


@pytest.mark.slow
def test_a_compared_candidate_runs_only_the_task_type_and_k_asked_for_and_says_so(setup: Setup) -> None:
    base = setup.run("replay", "--period", "2026-W40", config=setup.config("k = 4\ntickets_per_task_type = 3"))
    only = "order_status_inquiry"

    candidate = setup.run(
        "replay", "--period", "2026-W40", "--compare-to", base["run_id"], "--task-type", only, "--k", "2",
        config=setup.config("k = 4\ntickets_per_task_type = 3"),
    )  # fmt: skip

    assert candidate["k"] == 2 and candidate["trials_per_ticket"] == 2
    assert [row["task_type"] for row in candidate["task_types"]] == [only]
    assert candidate["trials"] == 3 * 2  # the baseline's 3 tickets of that task type, 2 trials each
    assert candidate["exploratory"] == [
        "k = 2 (configured 4)",
        f"task type {only} only",
        f"candidate compared to run {base['run_id']}",
    ]
    assert [row["task_type"] for row in candidate["comparison"]["task_types"]] == [only]
    # Without --k the candidate runs at the baseline's k and trials per ticket, and is labelled by it.
    same_k = setup.run("replay", "--period", "2026-W40", "--compare-to", base["run_id"], "--task-type", only)
    assert same_k["k"] == 4 and same_k["trials_per_ticket"] == 4
    assert same_k["exploratory"][0] == "k = 4 (configured 3)"


@pytest.mark.slow
def test_flags_that_do_not_apply_are_refused(setup: Setup) -> None:
    runner = CliRunner()
    config = str(setup.config())
    flaws = runner.invoke(app, ["replay", "--period", "2026-W40", "--config", config, "--flaws", "off"])
    traces = runner.invoke(app, ["replay", "--period", "2026-W40", "--config", config, "--send-traces"])
    other_agent = runner.invoke(
        app, ["bench", "--domain", "retail", "--agent", "anthropic", "--flaws", "default", "--scenarios", "1"]
    )
    assert flaws.exit_code == 2 and "--flaws applies to --domain only" in flaws.stderr
    assert traces.exit_code == 2 and "always store every trial as a sandbox trace" in traces.stderr
    assert other_agent.exit_code == 2 and "--flaws applies to the reference agent only" in other_agent.stderr


__all__ = ["receiver"]  # the alerts' webhook receiver fixture, used here


@pytest.mark.slow
def test_promoting_a_run_brings_the_alerts_sent_for_its_period_up_to_date(setup: Setup, receiver: Receiver) -> None:
    alerts = (
        f'[alerts.channels.ops]\ntype = "webhook"\nurl = "{receiver.url}"\n'
        '[[alerts.rules]]\nname = "floor"\nkind = "threshold"\ntask_type = "*"\nthreshold = 1.0\nmin_tickets = 1\n'
    )
    config = setup.config(extra=alerts)
    setup.run("replay", "--period", "2026-W40", config=config)
    fired = [r["json"] for r in receiver.requests]
    assert {r["event"] for r in fired} == {"alert.fired"} and len(fired) == len(TASK_TYPES)
    one_off = setup.run("replay", "--period", "2026-W40", "--tickets-per-task-type", "1", config=config)
    assert len(receiver.requests) == len(fired)  # an exploratory run sends nothing

    promoted = setup.run("runs", "promote", one_off["run_id"], config=config)

    after = [r["json"] for r in receiver.requests[len(fired) :]]
    assert sorted(promoted["alerts_sent"]) == sorted(r["alert_id"] for r in after) and len(after) == len(TASK_TYPES)
    for notice in after:
        assert notice["title"].startswith(("Updated:", "Withdrawn:"))
        if notice["title"].startswith("Updated:"):
            assert "(1 ticket;" in notice["text"]  # one ticket a task type: it said "(1 tickets"


def test_agent_options_of_the_reference_simulation_are_refused_for_claude() -> None:
    from passhat.collector.config import PasshatConfig
    from passhat.collector.loop import agent_spec

    config = PasshatConfig.model_validate({"agent": {"factory": "anthropic", "options": {"flaws": "default"}}})
    with pytest.raises(ValueError, match=r"agent.options \(flaws\) do not apply to the anthropic agent"):
        agent_spec(config)


def test_another_agent_named_on_the_command_line_does_not_get_the_configured_options() -> None:
    from passhat.collector.config import PasshatConfig
    from passhat.collector.loop import agent_spec

    config = PasshatConfig.model_validate({"agent": {"factory": "reference", "options": {"flaws": "off"}}})
    spec = agent_spec(config, "passhat.sandbox:ReferenceAgent")
    assert spec.label == "passhat.sandbox:ReferenceAgent" and not isinstance(spec.factory, functools.partial)
