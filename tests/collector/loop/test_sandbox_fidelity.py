"""Sandbox fidelity: production tickets' own pass rate beside the replays' pass@1, per task type.

Production traffic comes through the SDK to a real collector. When the sandbox behaves as production does, the
two figures agree; when the sandbox is planted to differ (its agent fails one task type there, and only there),
the report says the sandbox may not reflect production for that task type, with the tickets that differ.
"""

from __future__ import annotations

import asyncio
import json
import pathlib
from collections.abc import Iterator

import jsonschema
import pytest

import passhat
from passhat.collector.demo import TrafficPlan, plan_arrivals, serve_traffic
from passhat.collector.demo._traffic import simulated_clock
from passhat.collector.ingest._keys import create_api_key
from passhat.collector.loop import run_period
from passhat.collector.replay import AgentSpec, ReplaySettings, SandboxPool
from passhat.collector.report import report_schema
from passhat.collector.store import Store, open_store, parse_period
from passhat.sandbox import FlawConfig, ReferenceAgent, load_domain
from tests.collector.embedded import running_collector

PERIOD = parse_period("2026-W42")
PLANTED = "cancel_pending_order"
FAITHFUL = "change_pending_address"


@pytest.fixture
def store(tmp_path: pathlib.Path) -> Iterator[Store]:
    opened = open_store(f"sqlite:///{tmp_path / 'fidelity.db'}")
    yield opened
    opened.close()


def _production_week(store: Store, count: int) -> None:
    """`count` tickets of each task type, handled by the flawless agent and sent through the SDK."""
    key, _ = create_api_key(store, "shop")
    retail = load_domain("retail")
    pool = SandboxPool()
    with running_collector(store) as collector:
        runtime = passhat.configure(
            make_global=False, endpoint=collector.url, api_key=key, source="production", clock=simulated_clock,
            redact_mode="blank", capture_content=True,
        )  # fmt: skip
        try:
            base = pool.base(retail)
            scenarios = {name: base.scenarios(name, count) for name in (PLANTED, FAITHFUL)}
            arrivals = plan_arrivals(TrafficPlan(PERIOD, 2 * count, {PLANTED: 1.0, FAITHFUL: 1.0}), scenarios)
            asyncio.run(serve_traffic(base, arrivals, ReferenceAgent.factory(FlawConfig.off()), runtime))
            runtime.flush()
        finally:
            runtime.shutdown()
            pool.close()


def test_a_sandbox_planted_to_differ_is_named_with_the_tickets_that_differ(
    store: Store, tmp_path: pathlib.Path
) -> None:
    _production_week(store, 10)
    # The sandbox's agent fails every attempt at one task type: production and sandbox no longer behave alike.
    planted = FlawConfig.from_mixture([(1.0, 1.0)], per_task_type={PLANTED: [(1.0, 0.0)]})
    agent = AgentSpec(ReferenceAgent.factory(planted), "reference (planted sandbox)", "1", True)
    result = asyncio.run(
        run_period(
            store, "shop", PERIOD, agent, settings=ReplaySettings(k=2, tickets_per_task_type=4, parallel=4),
            report_dir=tmp_path / "reports", resamples=100,
        )
    )  # fmt: skip
    data = json.loads(result.report_paths["json"].read_text())
    jsonschema.validate(data, report_schema())
    rows = {row["task_type"]: row for row in data["sandbox_fidelity"]["task_types"]}
    planted_row, faithful_row = rows[PLANTED], rows[FAITHFUL]
    # The flawless production agent: every production ticket of both task types graded passed on its own writes.
    assert planted_row["production_tickets"] + faithful_row["production_tickets"] == 20
    assert planted_row["production_passed"] == planted_row["production_tickets"] >= 5
    assert planted_row["replay_pass_at_1"] == 0.0 and planted_row["agrees"] is False
    assert planted_row["production_pass_rate_ci"][0] > planted_row["replay_pass_at_1_ci"][1]
    assert len(planted_row["differing_tickets"]) == 4  # every sampled ticket passed in production, failed here
    assert all(d["production"] == "passed" and d["replays_passed"] == 0 for d in planted_row["differing_tickets"])
    assert faithful_row["agrees"] is True and faithful_row["differing_tickets"] == []
    assert faithful_row["production_passed"] == faithful_row["production_tickets"] >= 5
    assert faithful_row["replay_pass_at_1"] == 1.0

    html = result.report_paths["html"].read_text()
    markdown = result.report_paths["md"].read_text()
    for text in (html, markdown):
        assert "Sandbox fidelity" in text and "the sandbox may not reflect production for this task type" in text
        assert planted_row["differing_tickets"][0]["ticket_id"] in text
        assert "intervals do not overlap" in text
    assert text.count("may not reflect production for this task type") == 1  # only the planted task type
