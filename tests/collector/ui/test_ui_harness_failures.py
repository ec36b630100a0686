"""Trials the harness broke are shown with their cause and fix on the run page, by `passhat runs show`, and
in the report, and counted in none of the figures."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.collector.store import ReplayRun, Store
from tests.collector.ui.conftest import UiCollector
from tests.collector.ui.ui_data import K, trial

CONFLICT = (
    'agent raised UserError("Function toolset defines a tool whose name conflicts with existing tool from the '
    "agent: 'get_order'. Rename the tool.\")"
)


def _broken_run(store: Store, project: str) -> str:
    """A finished run of two tickets: one ticket's trials all broken by the harness, the other's all passed."""
    run_id = f"run-{project}-broken"
    when = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(days=1)
    store.create_replay_run(project, ReplayRun(run_id, when, k=K, params={"period": "2026-W47", "tickets": ["A", "B"]}))
    good = [trial(run_id, "refund", "A", a, True, when) for a in range(K)]
    broken = [
        dataclasses.replace(
            trial(run_id, "refund", "B", a, False, when),
            termination_reason="infra_error",
            failure_label="infra_error",
            failure_evidence=CONFLICT,
            infra_error=CONFLICT,
        )
        for a in range(K)
    ]
    store.add_trials(project, good + broken)
    store.finish_replay_run(project, run_id, at=when + dt.timedelta(hours=1))
    return run_id


def test_the_run_page_shows_the_trials_the_harness_broke_by_cause_and_leaves_them_out(ui: UiCollector) -> None:
    run_id = _broken_run(ui.store, "shop")
    with ui.client(ui.shop_key) as client:
        page = client.get(f"/ui/runs/{run_id}").text
    assert 'data-testid="run-harness-failures"' in page
    assert "UserError: Function toolset defines a tool whose name conflicts" in page
    assert "the agent already has a tool named get_order" in page
    figures = page[page.index('data-testid="run-figures"') : page.index('data-testid="run-harness-failures"')]
    assert "100.0%" in figures  # ticket A alone: the broken ticket B is no failure of the agent


def test_runs_show_names_the_cause_and_its_fix(ui: UiCollector, sqlite_url: str) -> None:
    run_id = _broken_run(ui.store, "shop")
    outcome = CliRunner().invoke(app, ["runs", "show", run_id, "--store", sqlite_url, "--project", "shop", "--json"])
    assert outcome.exit_code == 0, outcome.output
    (group,) = json.loads(outcome.stdout)["harness_failures"]
    assert (group["trials"], group["signature"], group["error_type"]) == (K, "infra_error", "UserError")
    assert "the agent already has a tool named get_order" in group["fix"]
    assert "conflicts with existing tool" in outcome.stderr
    text = CliRunner().invoke(app, ["runs", "show", run_id, "--store", sqlite_url, "--project", "shop"])
    assert "harness broke" in text.stdout and "UserError" in text.stdout
