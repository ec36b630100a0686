"""The week of simulated retail production tickets the worker-process tests replay, and what they replay it with."""

from __future__ import annotations

import asyncio

from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import passhat
from passhat.collector.demo import TrafficPlan, plan_arrivals, serve_traffic
from passhat.collector.demo._traffic import simulated_clock
from passhat.collector.ingest import StoreSpanExporter
from passhat.collector.replay import AgentSpec, SandboxPool
from passhat.collector.store import Store, parse_period
from passhat.sandbox import FlawConfig, ReferenceAgent, load_domain

WEEK = parse_period("2026-W40")
TASK_TYPES = ["cancel_pending_order", "order_status_inquiry", "return_delivered_items"]
MIXTURE = [(0.31, 0.99), (0.60, 0.58), (0.09, 0.0)]
K, TICKETS = 3, 2
FLAWS = FlawConfig.from_mixture(MIXTURE)
AGENT = AgentSpec(ReferenceAgent.factory(FLAWS), "reference (simulation)", "1", True)


def serve_week(store: Store) -> None:
    """A week of simulated production tickets of project "shop", traced into ``store``."""
    pool = SandboxPool()
    try:
        base = pool.base(load_domain("retail"))
        scenarios = {name: base.scenarios(name, 6) for name in TASK_TYPES}
        arrivals = plan_arrivals(TrafficPlan(WEEK, 12, {name: 1.0 for name in TASK_TYPES}), scenarios)
        runtime = passhat.configure(
            make_global=False, source="production", clock=simulated_clock, send=False, redact_mode="blank",
            span_processors=[SimpleSpanProcessor(StoreSpanExporter(store, "shop"))],
        )  # fmt: skip
        asyncio.run(serve_traffic(base, arrivals, ReferenceAgent.factory(FLAWS), runtime))
        runtime.shutdown()
    finally:
        pool.close()
