"""Benchmark: replay trials per second on the local executor and on Ray (1 and 2 workers of this machine).

A week of simulated retail production tickets is put in a SQLite store, then the same replay runs (fresh each
time, `replay_period` as the loop calls it) on:

- local: this process, --parallel trials at once;
- ray-1, ray-2: 1 or 2 Ray worker actors of a local cluster (num_cpus=2), --concurrency trials at once each;

for two agents: the ReferenceAgent (an offline simulation: CPU-bound, milliseconds a turn), and a slow fake
model (the ReferenceAgent behind a --turn-seconds wait per agent turn, as an agent waiting on a model API is).
For each it prints the median over --repeats runs of trials/second over the whole run (workers' start
included) and in steady state (first to last finished trial), and Ray's overhead: the extra seconds a trial
costs on one Ray worker running one trial at a time, over one local trial at a time, and a worker's start-up.

Every run's per-task-type figures must equal the local run's (checked): the executor never changes an outcome.

Run: .venv/bin/python benchmarks/bench_ray.py [--tickets 4] [--k 4] [--repeats 3] [--turn-seconds 1.0] [--overhead-only]
(needs the Ray extra: pip install 'passhat[ray]', or make install EXTRAS=all,ray)
"""

from __future__ import annotations

import argparse
import asyncio
import pathlib
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import passhat
from passhat.collector.demo import TrafficPlan, plan_arrivals, serve_traffic
from passhat.collector.ingest import StoreSpanExporter
from passhat.collector.reliability import summarize_trials
from passhat.collector.replay import AgentSpec, ReplaySettings, SandboxPool, replay_period
from passhat.collector.store import Store, open_store, parse_period
from passhat.sandbox import Agent, AgentFactory, FlawConfig, Message, ReferenceAgent, Toolbox, TrialContext, load_domain

WEEK = parse_period("2026-W40")
TASK_TYPES = ["cancel_pending_order", "order_status_inquiry", "return_delivered_items"]


class SlowModel:
    """The ReferenceAgent behind a model that takes ``seconds`` to answer each turn (waiting, not computing)."""

    def __init__(self, inner: Agent, seconds: float) -> None:
        self.inner, self.seconds = inner, seconds
        self.label = getattr(inner, "label", "ReferenceAgent")
        self.flaw = getattr(inner, "flaw", None)

    async def respond(self, messages: Sequence[Message], tools: Toolbox) -> Message:
        await asyncio.sleep(self.seconds)
        return await self.inner.respond(messages, tools)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def slow_factory(seconds: float) -> AgentFactory:
    reference = ReferenceAgent.factory(FlawConfig.default())

    def make(context: TrialContext) -> Agent:
        return SlowModel(reference(context), seconds)

    return make


def production_week(store: Store, tickets: int) -> None:
    pool = SandboxPool()
    try:
        base = pool.base(load_domain("retail"))
        scenarios = {name: base.scenarios(name, tickets * 2) for name in TASK_TYPES}
        plan = TrafficPlan(WEEK, tickets * 2 * len(TASK_TYPES), {name: 1.0 for name in TASK_TYPES})
        from passhat.collector.demo._traffic import simulated_clock

        runtime = passhat.configure(
            make_global=False, source="production", clock=simulated_clock, send=False, redact_mode="blank",
            span_processors=[SimpleSpanProcessor(StoreSpanExporter(store, "bench"))],
        )  # fmt: skip
        arrivals = plan_arrivals(plan, scenarios)
        asyncio.run(serve_traffic(base, arrivals, ReferenceAgent.factory(FlawConfig.default()), runtime))
        runtime.shutdown()
    finally:
        pool.close()


@dataclass
class Timing:
    trials: int
    wall_s: float
    first_s: float  # when the first trial finished (start-up included)
    last_s: float
    figures: list[dict[str, Any]]
    trial_s: float  # the mean duration of a trial as the runner measured it (where it ran)

    @property
    def per_second(self) -> float:
        return self.trials / self.wall_s

    @property
    def around_s(self) -> float:
        """One trial at a time: the seconds between two finished trials beyond the trial itself (dispatch, the
        result's way back, the store write)."""
        return (self.last_s - self.first_s) / (self.trials - 1) - self.trial_s

    @property
    def steady_per_second(self) -> float:
        return (self.trials - 1) / (self.last_s - self.first_s) if self.last_s > self.first_s else float("nan")


def replay_once(store: Store, agent: AgentSpec, settings: ReplaySettings) -> Timing:
    marks: list[float] = []
    started = time.perf_counter()

    def progress(done: int, total: int) -> None:
        if done:
            marks.append(time.perf_counter() - started)

    outcome = asyncio.run(replay_period(store, "bench", WEEK, agent, settings=settings, fresh=True, progress=progress))
    wall = time.perf_counter() - started
    store.finish_replay_run("bench", outcome.run.run_id, summary={})  # the next run starts afresh, not resumes this
    usable = [t for t in outcome.trials if not (t.infra_error or t.simulator_error)]
    figures = [row.to_dict() for row in summarize_trials(usable, settings.k)]
    trial_s = statistics.fmean(t.duration_s for t in outcome.trials)
    return Timing(outcome.ran, wall, marks[0], marks[-1], figures, trial_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tickets", type=int, default=4, help="tickets sampled per task type (3 task types)")
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--parallel", type=int, default=8, help="local: trials at once")
    parser.add_argument("--concurrency", type=int, default=8, help="ray: trials at once per worker")
    parser.add_argument("--turn-seconds", type=float, default=1.0, help="the slow fake model's wait per turn")
    parser.add_argument("--slow-tickets", type=int, default=2, help="tickets per task type for the slow agent")
    parser.add_argument("--overhead-only", action="store_true", help="only Ray's per-trial overhead")
    args = parser.parse_args()
    try:
        import ray
    except ImportError:
        print("bench_ray: Ray is not installed (pip install 'passhat[ray]', or make install EXTRAS=all,ray): skipped")
        return

    folder = pathlib.Path(tempfile.mkdtemp(prefix="bench-ray-"))
    store = open_store(f"sqlite:///{folder / 'bench.db'}")
    production_week(store, max(args.tickets, args.slow_tickets))
    started = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, logging_level="error")
    cluster_s = time.perf_counter() - started

    reference = AgentSpec(ReferenceAgent.factory(FlawConfig.default()), "ReferenceAgent", "bench", True)
    slow = AgentSpec(slow_factory(args.turn_seconds), f"ReferenceAgent + {args.turn_seconds:g} s/turn", "bench", True)
    executors = {
        "local": {"executor": "local", "parallel": args.parallel},
        "ray-1": {"executor": "ray", "ray_workers": 1, "ray_concurrency": args.concurrency},
        "ray-2": {"executor": "ray", "ray_workers": 2, "ray_concurrency": args.concurrency},
    }
    print(f"local Ray cluster (num_cpus=2) started in {cluster_s:.1f} s; medians of {args.repeats} runs")
    print(f"{'agent':<34} {'executor':<8} {'trials':>6} {'trials/s':>9} {'steady/s':>9} {'vs local':>9}")
    for agent, tickets in ((reference, args.tickets), (slow, args.slow_tickets)) if not args.overhead_only else ():
        base: float | None = None
        local_figures: list[dict[str, Any]] | None = None
        for name, options in executors.items():
            settings = ReplaySettings(k=args.k, tickets_per_task_type=tickets, **options)  # type: ignore[arg-type]
            runs = [replay_once(store, agent, settings) for _ in range(args.repeats)]
            for run in runs:
                if local_figures is None:
                    local_figures = run.figures
                assert run.figures == local_figures, f"{name}: the figures differ from the local executor's"
            rate = statistics.median(r.per_second for r in runs)
            steady = statistics.median(r.steady_per_second for r in runs)
            base = base or rate
            print(f"{agent.label:<34} {name:<8} {runs[0].trials:>6} {rate:>9.2f} {steady:>9.2f} {rate / base:>8.2f}x")

    # Ray's per-trial overhead: one trial at a time, locally and on one worker (steady state, start-up apart).
    one_local = [
        replay_once(store, reference, ReplaySettings(k=args.k, tickets_per_task_type=args.tickets, parallel=1))
        for _ in range(args.repeats)
    ]
    one_ray = [
        replay_once(
            store,
            reference,
            ReplaySettings(
                k=args.k, tickets_per_task_type=args.tickets, executor="ray", ray_workers=1, ray_concurrency=1
            ),
        )
        for _ in range(args.repeats)
    ]
    local_around = statistics.median(r.around_s for r in one_local)
    ray_around = statistics.median(r.around_s for r in one_ray)
    startup = statistics.median(r.first_s for r in one_ray) - statistics.median(r.first_s for r in one_local)
    print(
        f"one trial at a time (ReferenceAgent, a trial {1000 * statistics.median(r.trial_s for r in one_local):.0f} "
        f"ms locally, {1000 * statistics.median(r.trial_s for r in one_ray):.0f} ms on a worker): beyond the trial, "
        f"{1000 * local_around:.1f} ms locally and {1000 * ray_around:.1f} ms on Ray between two finished trials: "
        f"Ray's overhead {1000 * (ray_around - local_around):.1f} ms a trial; workers' start-up (templates built, "
        f"first trial back) {startup:.1f} s later than locally"
    )
    store.close()
    ray.shutdown()


if __name__ == "__main__":
    main()
