"""Benchmark: grading production tickets on their own changes, per ticket, and its agreement with the truth.

A simulated production agent (the ReferenceAgent with the seed's mixture, as in the demo) handles --tickets retail
tickets of one week, traced into a SQLite store as production tickets (writes with before-images, replies
captured); each ticket's check also ran in-process as it happened, which is the truth. Then `grade_period`
grades the week from the store alone: the time per ticket (store reads, materialising the state, applying the
writes, the check), the tickets graded and left ungraded, and how many verdicts equal the truth.

Run: .venv/bin/python benchmarks/bench_grade.py [--tickets 400] [--parallel 8]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import tempfile
import time
from pathlib import Path

from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import passhat
from passhat.collector.demo import Arrival, TrafficPlan, plan_arrivals
from passhat.collector.ingest import StoreSpanExporter
from passhat.collector.replay import SandboxPool, grade_period
from passhat.collector.store import open_store, week_of
from passhat.sandbox import FlawConfig, ReferenceAgent, RunConfig, load_domain, run_trial

MIXTURE = [(0.31, 0.99), (0.60, 0.58), (0.09, 0.0)]


async def serve(tickets: int, parallel: int, runtime: passhat.Passhat, pool: SandboxPool) -> dict[str, bool]:
    retail = load_domain("retail")
    base = pool.base(retail)
    names = sorted(retail.task_types)
    scenarios = {name: base.scenarios(name, 20) for name in names}
    week = week_of(dt.datetime.now(dt.UTC).date())  # the tickets are traced as they run: this week
    arrivals = plan_arrivals(TrafficPlan(week, tickets, {name: 1.0 for name in names}), scenarios)
    factory = ReferenceAgent.factory(FlawConfig.from_mixture(MIXTURE))
    limit = asyncio.Semaphore(parallel)
    truth: dict[str, bool] = {}

    async def one(arrival: Arrival) -> None:
        async with limit:
            result = await run_trial(
                base, arrival.scenario, 0, factory, config=RunConfig(parallel=parallel), runtime=runtime,
                ticket_id=arrival.ticket_id, production=True,
            )  # fmt: skip
        truth[arrival.ticket_id] = result.passed

    await asyncio.gather(*(one(a) for a in arrivals))
    return truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tickets", type=int, default=400)
    parser.add_argument("--parallel", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(f"sqlite:///{Path(folder) / 'bench.sqlite'}")
        store.ensure_project("bench")
        runtime = passhat.configure(
            make_global=False, source="production", send=False, redact_mode="blank", capture_content=True,
            span_processors=[SimpleSpanProcessor(StoreSpanExporter(store, "bench"))],
        )  # fmt: skip
        pool = SandboxPool()
        try:
            truth = asyncio.run(serve(args.tickets, args.parallel, runtime, pool))
            runtime.flush()
            week = week_of(dt.datetime.now(dt.UTC).date())
            started = time.perf_counter()
            outcome = grade_period(store, "bench", week, pool=pool)
            elapsed = time.perf_counter() - started
        finally:
            runtime.shutdown()
            pool.close()
            store.close()
    graded = len(outcome.verdicts)
    same = sum(v.passed == truth.get(v.ticket_id) for v in outcome.verdicts)
    print(f"{graded} tickets graded, {len(outcome.ungradable)} ungradable, in {elapsed:.1f} s")
    print(f"{1000 * elapsed / max(graded, 1):.1f} ms a ticket (store reads, state, writes, check)")
    print(f"verdicts equal to the check run when the ticket happened: {same} of {graded}")


if __name__ == "__main__":
    main()
