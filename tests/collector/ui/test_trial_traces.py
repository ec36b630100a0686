"""One clock per trace, end to end: the demo's production traffic (handled in this process on its simulated
calendar, sent through the SDK to a real collector) and a replay of it (traced into the store) store traces whose
tool spans are children inside their ticket span, each lasting the time its call took; the ticket page finds each
attempt's own trace, stored as `TICKET#N`, and shows none in its place when an attempt's is missing."""

from __future__ import annotations

import asyncio
import pathlib
from collections.abc import Iterator

import pytest

import passhat
from passhat.collector.demo import TrafficPlan, plan_arrivals, serve_traffic
from passhat.collector.demo._traffic import simulated_clock
from passhat.collector.ingest._keys import create_api_key
from passhat.collector.loop import run_period
from passhat.collector.replay import AgentSpec, ReplaySettings, SandboxPool
from passhat.collector.store import NormalizedSpan, Store, open_store, parse_period
from passhat.collector.ui._attempts import chosen_trace, trial_ticket_id
from passhat.sandbox import FlawConfig, ReferenceAgent, load_domain
from tests.collector.embedded import running_collector

pytestmark = pytest.mark.slow
PERIOD = parse_period("2026-W42")
TASK_TYPE = "cancel_pending_order"


@pytest.fixture
def store(tmp_path: pathlib.Path) -> Iterator[Store]:
    opened = open_store(f"sqlite:///{tmp_path / 'traces.db'}")
    yield opened
    opened.close()


def _assert_one_clock(spans: list[NormalizedSpan]) -> int:
    """Every tool span is a child of the ticket span, inside it; returns how many there are."""
    (root,) = [s for s in spans if s.parent_span_id is None]
    tools = [s for s in spans if s.operation == "execute_tool"]
    for tool in tools:
        assert tool.parent_span_id == root.span_id
        assert root.start_time_ns <= tool.start_time_ns <= tool.end_time_ns <= root.end_time_ns, tool.name
    assert any(t.end_time_ns > t.start_time_ns for t in tools)  # calls take time: not all stamped at once
    return len(tools)


def test_production_and_trial_traces_keep_their_tool_spans_on_the_tickets_clock(
    store: Store, tmp_path: pathlib.Path
) -> None:
    key, _ = create_api_key(store, "shop")
    retail = load_domain("retail")
    pool = SandboxPool()
    try:
        with running_collector(store) as collector:
            runtime = passhat.configure(
                make_global=False, endpoint=collector.url, api_key=key, source="production", clock=simulated_clock,
                redact_mode="blank", capture_content=True,
            )  # fmt: skip
            try:
                base = pool.base(retail)
                arrivals = plan_arrivals(
                    TrafficPlan(PERIOD, 3, {TASK_TYPE: 1.0}), {TASK_TYPE: base.scenarios(TASK_TYPE, 3)}
                )
                asyncio.run(serve_traffic(base, arrivals, ReferenceAgent.factory(FlawConfig.off()), runtime))
                runtime.flush()
            finally:
                runtime.shutdown()
        for arrival in arrivals:
            detail = store.get_ticket("shop", arrival.ticket_id, source="production")
            assert detail is not None and _assert_one_clock(detail.spans) >= 2
            # The simulated calendar: the ticket starts at its arrival, days before the wall clock.
            assert abs(detail.attempts[0].start_time_ns - int(arrival.at.timestamp() * 1e9)) < 10**9

        agent = AgentSpec(ReferenceAgent.factory(FlawConfig.off()), "reference", "1", True)
        settings = ReplaySettings(k=2, tickets_per_task_type=2, parallel=2)
        result = asyncio.run(
            run_period(
                store, "shop", PERIOD, agent, settings=settings, report_dir=tmp_path / "r", resamples=50, pool=pool
            )
        )
    finally:
        pool.close()
    trials = store.list_trials("shop", result.outcome.run.run_id)
    assert len(trials) == 4
    for trial in trials:
        stored = store.get_ticket("shop", trial_ticket_id(trial.ticket_id, trial.attempt), source="sandbox")
        assert stored is not None
        spans = [s for s in stored.spans if s.trace_id == trial.trace_id]
        assert _assert_one_clock(spans) == len(trial.details.tool_calls) >= 2
        # The ticket page shows this attempt's own trace, not the production one.
        production = store.get_ticket("shop", trial.ticket_id)
        ticket_trials = store.list_ticket_trials("shop", trial.ticket_id)
        chosen = chosen_trace(store, "shop", trial.ticket_id, trial.trace_id, production, ticket_trials)
        assert chosen.view is not None and chosen.view.attempt.trace_id == trial.trace_id
        assert chosen.trial == trial and chosen.view.clipped == 0
        assert len(chosen.view.rows) == len(spans)
    # A trace id that is none of the ticket's: nothing in its place.
    first = trials[0]
    missing = chosen_trace(store, "shop", first.ticket_id, "0" * 32, store.get_ticket("shop", first.ticket_id), trials)
    assert missing.view is None and missing.missing is not None
