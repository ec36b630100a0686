"""An agent whose module configures passhat for production (`set_global=True`, as docs/sdk.md shows for a framework
agent) and whose framework traces into OpenTelemetry's global provider, replayed by `passhat replay` on every
core: the framework's spans of each trial are in the trial's stored trace, redacted as the trial's own content
is, and none reaches the production exporter. Before, they all went to production's exporter (in a deployed
agent's environment: sent to the collector as production traffic), and the trial traces lacked them.

The same holds for a module that configures passhat only in its ``main()``, which a replay never calls: no global
provider is set when the trials run. Before, the framework's spans went to OpenTelemetry's no-op provider there,
and the trials lacked them.
"""

from __future__ import annotations

import asyncio
import os
import pathlib
import subprocess
import sys

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import passhat
from passhat.collector.demo import TrafficPlan, plan_arrivals, serve_traffic
from passhat.collector.demo._traffic import simulated_clock
from passhat.collector.ingest import StoreSpanExporter
from passhat.collector.replay import SandboxPool
from passhat.collector.store import open_store, parse_period
from passhat.sandbox import FlawConfig, ReferenceAgent, load_domain

WEEK = parse_period("2026-W40")

AGENT_MODULE = """
import json

from opentelemetry import trace
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

import passhat
from passhat.sandbox import FlawConfig, ReferenceAgent


class ProductionExport(SpanExporter):
    def export(self, spans):
        with open(LEAKS, "a") as leaks:
            leaks.writelines(span.name + "\\n" for span in spans)
        return SpanExportResult.SUCCESS


def configure():
    passhat.configure(
        service_name="support-agent",
        set_global=True,
        send=False,
        span_processors=[SimpleSpanProcessor(ProductionExport())],
    )


if CONFIGURE_AT_IMPORT:
    configure()
framework = trace.get_tracer("some.framework")
reference = ReferenceAgent.factory(FlawConfig.off())


class Traced:
    def __init__(self, agent):
        self.agent = agent

    def __getattr__(self, name):
        return getattr(self.agent, name)

    async def respond(self, conversation, tools):
        said = json.dumps([{"role": "user", "content": conversation[-1].text + " (ann.lee@example.com)"}])
        with framework.start_as_current_span("chat fake-model", attributes={"gen_ai.input.messages": said}):
            return await self.agent.respond(conversation, tools)


def agent(context):
    return Traced(reference(context))


def main():  # the production entry point: a replay imports this module, and never calls it
    configure()
"""


@pytest.mark.slow
@pytest.mark.parametrize("at_import", [True, False], ids=["configured-at-import", "configured-in-main"])
def test_a_replays_trials_keep_the_frameworks_spans_and_production_gets_none(
    tmp_path: pathlib.Path, at_import: bool
) -> None:
    path = tmp_path / "week.db"
    store = open_store(f"sqlite:///{path}")
    pool = SandboxPool()
    try:
        base = pool.base(load_domain("retail"))
        scenarios = {"cancel_pending_order": base.scenarios("cancel_pending_order", 4)}
        runtime = passhat.configure(
            make_global=False, source="production", clock=simulated_clock, send=False, redact_mode="blank",
            span_processors=[SimpleSpanProcessor(StoreSpanExporter(store, "shop"))],
        )  # fmt: skip
        arrivals = plan_arrivals(TrafficPlan(WEEK, 4, {"cancel_pending_order": 1.0}), scenarios)
        asyncio.run(serve_traffic(base, arrivals, ReferenceAgent.factory(FlawConfig.off()), runtime))
        runtime.shutdown()
    finally:
        pool.close()
        store.close()
    leaks = tmp_path / "leaks.txt"
    header = f"LEAKS = {str(leaks)!r}\nCONFIGURE_AT_IMPORT = {at_import}\n"
    (tmp_path / "framework_agent.py").write_text(header + AGENT_MODULE)
    script = pathlib.Path(sys.executable).with_name("passhat")
    done = subprocess.run(
        [str(script), "replay", "--period", WEEK.name, "--store", f"sqlite:///{path}", "--project", "shop",
         "--agent", "framework_agent:agent", "--k", "2", "--tickets-per-task-type", "2", "--workers", "2", "--json"],
        capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path)}, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "on one core" not in done.stderr
    assert not leaks.exists() or leaks.read_text() == ""  # nothing made in a trial went to production

    store = open_store(f"sqlite:///{path}")
    try:
        [run] = store.list_replay_runs("shop")
        trials = store.list_tickets("shop", source="sandbox", replay_run_id=run.run_id, limit=100)
        assert len(trials) == 4
        for trial in trials:
            spans = store.get_trace("shop", trial.trace_id)
            chats = [span for span in spans if span.name == "chat fake-model"]
            assert chats, [span.name for span in spans]  # one a turn of the agent
            said = str(chats[0].attributes.get("gen_ai.input.messages"))
            assert "ann.lee@example.com" not in said and "[REDACTED:email]" in said
    finally:
        store.close()
