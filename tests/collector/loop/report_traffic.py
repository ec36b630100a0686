"""A store holding a period of simulated production traffic (traced through the SDK), made once and copied."""

from __future__ import annotations

import asyncio
import pathlib
import shutil

from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import passhat
from passhat.collector.demo import TrafficPlan, plan_arrivals, serve_traffic
from passhat.collector.demo._traffic import simulated_clock
from passhat.collector.ingest import StoreSpanExporter
from passhat.collector.replay import SandboxPool
from passhat.collector.store import Period, open_store
from passhat.sandbox import FlawConfig, ReferenceAgent, load_domain

TASK_TYPES = ["cancel_pending_order", "order_status_inquiry"]


def production_traffic(path: pathlib.Path, period: Period, count: int = 8) -> pathlib.Path:
    """A SQLite store at ``path`` with ``count`` simulated production tickets of ``period`` (project shop)."""
    store = open_store(f"sqlite:///{path}")
    pool = SandboxPool()
    try:
        base = pool.base(load_domain("retail"))
        scenarios = {name: base.scenarios(name, 10) for name in TASK_TYPES}
        arrivals = plan_arrivals(TrafficPlan(period, count, {name: 1.0 for name in TASK_TYPES}), scenarios)
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
    return path


def copy_store(template: pathlib.Path, folder: pathlib.Path) -> str:
    """A private copy of a template store for one test; returns its URL."""
    target = folder / "passhat.db"
    shutil.copyfile(template, target)
    return f"sqlite:///{target}"
