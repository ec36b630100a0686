"""Benchmark: replay throughput with 1 and 2 local worker processes (CPU-bound trials: the ReferenceAgent).

Builds a store holding a week of simulated retail production tickets, then replays it (`--tickets` per task type,
`--k` trials each) with 1 and with 2 worker processes, alternately, `--repeats` times, each on a fresh copy of the
store. The workers are started before the clock starts (their start-up, templates included, is printed apart),
and so are the driver's own templates (which rows a ticket restores, whether they fit: built once per process,
as the demo and the collector's loop keep them), so the figure is the replay itself: trials per wall-second,
from the plan to the last stored row. Prints one JSON line: medians per worker count and the 2-worker / 1-worker
ratio of each pair (the goal is >= 1.8x on 2 free cores; on a busy machine the second core is not free, and the
ratio says so).

Where a trial's CPU goes is the robust figure on a shared machine: the driver's CPU per trial (planning, taking
rows, storing them) and the workers'. On 2 free cores one worker and the driver each have a core (a trial takes
max(workers, driver)), two workers and the driver share both (workers + driver over 2): the ratio they imply is
``ratio_on_2_free_cores_from_cpu`` (planning, serial in both, left aside: it is in the measured ratio).

``--cold``: each replay starts its own workers, as `passhat replay` and the collector's cycle do, and the clock
includes their start (the workers' CPU is not counted then): a replay starts them before it plans, so they build
their templates meanwhile.

``--traced``: every trial is traced into the store, as `passhat replay` and the collector's cycle trace them by
default (a `passhat.source = sandbox` ticket per trial, its tool calls and state writes: what the UI's trial
trace view reads); the clock includes the last spans stored. Without it the trials are not traced.

``--cores``: one core against two as well. Each repeat also replays with one worker pinned to one core, its driver
and its worker alike (`sched_setaffinity`, every thread), as `passhat replay` runs on a one-core machine, where the
worker prepares its trials' spans itself (`spans_prepared_in_workers`: no core is left for the driver to do it).
``ratio_2_cores_vs_1_core`` is then what the second core adds. The one-worker replay of the 2-against-1 ratio has
the second core for its driver, which prepares and stores the spans there while the worker runs trials: traced,
about 0.7 ms of a trial's 5.5, so that replay uses about 1.14 cores and that ratio is at most about 2 / 1.14 = 1.75
whatever the workers do.

``busy_share_2_workers``: the share of the two cores a two-worker replay kept busy (its trials a second times their
CPU, the workers' and the driver's, over 2); the rest is a core waiting for work. ``--ahead 0,8``: the workers
hold that many trials queued beyond the 4 each runs (`WorkerProcesses(ahead=)`), each value in every repeat,
alternately, so they are compared side by side (the figures of each under ``by_ahead``).

Run: .venv/bin/python benchmarks/bench_workers.py [--tickets 3] [--k 10] [--repeats 3] [--cold] [--traced]
     [--ahead 0,8] [--cores]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import passhat
from passhat.collector.demo import TrafficPlan, plan_arrivals, serve_traffic
from passhat.collector.demo._traffic import simulated_clock
from passhat.collector.ingest import StoreSpanExporter
from passhat.collector.loop import store_runtime
from passhat.collector.replay import AgentSpec, ReplaySettings, SandboxPool, WorkerProcesses, replay_period
from passhat.collector.store import open_store, parse_period
from passhat.sandbox import FlawConfig, ReferenceAgent, load_domain

WEEK = parse_period("2026-W40")
FLAWS = FlawConfig.default()


def build_week(folder: Path, tickets: int) -> Path:
    path = folder / "week.db"
    store = open_store(f"sqlite:///{path}")
    pool = SandboxPool()
    try:
        retail = load_domain("retail")
        base = pool.base(retail)
        scenarios = {name: base.scenarios(name, 10) for name in sorted(retail.task_types)}
        plan = TrafficPlan(WEEK, tickets * len(scenarios) * 2, {name: 1.0 for name in scenarios})
        runtime = passhat.configure(
            make_global=False, source="production", clock=simulated_clock, send=False, redact_mode="blank",
            span_processors=[SimpleSpanProcessor(StoreSpanExporter(store, "shop"))],
        )  # fmt: skip
        asyncio.run(serve_traffic(base, plan_arrivals(plan, scenarios), ReferenceAgent.factory(FLAWS), runtime))
        runtime.shutdown()
    finally:
        pool.close()
        store.close()
    return path


def pin(pid: int, cores: set[int]) -> None:
    """Every thread of process ``pid`` runs on ``cores`` only (threads it starts later inherit it)."""
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
            os.sched_setaffinity(int(task), cores)


def _workers_cpu(processes: WorkerProcesses) -> float:
    """CPU seconds the live worker processes have used (from /proc: they are the forkserver's children)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for worker in processes._workers:
        fields = Path(f"/proc/{worker.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return total


async def replay_once(
    week: Path,
    folder: Path,
    workers: int,
    tickets: int,
    k: int,
    pool: SandboxPool,
    *,
    cold: bool = False,
    traced: bool = False,
    ahead: int | None = None,
    cores: set[int] | None = None,
) -> tuple[float, float, int, float, float]:
    """(start-up seconds, replay seconds, trials, driver CPU-s, workers' CPU-s) for one replay on ``workers``
    processes; the CPU seconds cover the replay only. ``cold``: the replay starts its own workers, as `passhat
    replay` does, and the replay's seconds include their start (the workers' CPU is not counted then).
    ``cores``: the driver and its workers run on those cores only (`pin`)."""
    if cores is not None:
        pin(os.getpid(), cores)  # before anything reads the cores this process may use (`default_workers`)
    shutil.copy(week, folder / "copy.db")
    store = open_store(f"sqlite:///{folder / 'copy.db'}")
    retail = load_domain("retail")
    settings = ReplaySettings(k=k, tickets_per_task_type=tickets, parallel=4 * workers, workers=workers)
    agent = AgentSpec(ReferenceAgent.factory(FLAWS), "reference (simulation)", "1", True)
    runtime = store_runtime(store, "shop") if traced else None
    if cold:
        driver = time.process_time()
        began = time.perf_counter()
        try:
            outcome = await replay_period(
                store, "shop", WEEK, agent, domains={"retail": retail}, settings=settings, pool=pool, runtime=runtime
            )
            if runtime is not None:
                runtime.flush()  # the last spans stored
        finally:
            if runtime is not None:
                runtime.shutdown()
            store.close()
        return 0.0, time.perf_counter() - began, len(outcome.trials), time.process_time() - driver, 0.0
    started = time.perf_counter()
    processes = await WorkerProcesses({"retail": retail}, workers=workers, concurrency=4, ahead=ahead).start()
    if cores is not None:  # forked from a server started before, with that server's cores
        for worker in processes._workers:
            pin(worker.process.pid, cores)
    ready = time.perf_counter()
    driver = time.process_time()
    children = _workers_cpu(processes)
    try:
        outcome = await replay_period(
            store, "shop", WEEK, agent, domains={"retail": retail}, settings=settings, pool=pool,
            processes=processes, runtime=runtime,
        )  # fmt: skip
        if runtime is not None:
            runtime.flush()  # the last spans stored
        seconds = time.perf_counter() - ready
        driver = time.process_time() - driver
        children = _workers_cpu(processes) - children
    finally:
        processes.close()
        if runtime is not None:
            runtime.shutdown()
        store.close()
    return ready - started, seconds, len(outcome.trials), driver, children


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tickets", type=int, default=3, help="tickets per task type")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--cold", action="store_true", help="each replay starts its own workers (the clock includes their start)"
    )
    parser.add_argument("--traced", action="store_true", help="trace every trial into the store, as by default")
    parser.add_argument(
        "--cores",
        action="store_true",
        help="one core against two as well: each repeat also replays with one worker and its driver pinned to one"
        " core (ratio_2_cores_vs_1_core)",
    )
    parser.add_argument(
        "--ahead",
        default="",
        help="trials each worker holds queued beyond the 4 it runs (default: the library's); a list (0,8) runs"
        " each value in every repeat, alternately, and prints each one's figures under by_ahead",
    )
    args = parser.parse_args()
    try:
        aheads: list[int | None] = [int(value) for value in args.ahead.split(",") if value.strip()] or [None]
    except ValueError:
        parser.error(f"--ahead takes whole numbers separated by commas (0,8), not {args.ahead!r}")
    if any(ahead is not None and ahead < 0 for ahead in aheads):
        parser.error(f"--ahead takes numbers of trials, 0 or more, not {args.ahead!r}")
    if args.cores and len(os.sched_getaffinity(0)) < 2:
        parser.error("--cores compares one core with two: this process may use only one")
    if args.cores and args.cold:
        parser.error("--cores pins the workers the benchmark starts: leave out --cold")
    if args.cold and aheads != [None]:
        parser.error("--ahead measures workers started by the benchmark: leave out --cold")
    results = _measure_all(args, aheads)
    if len(aheads) == 1:
        print(json.dumps(results[aheads[0]]))
    else:
        print(json.dumps({"by_ahead": {str(ahead): result for ahead, result in results.items()}}))


def _measure_all(args: argparse.Namespace, aheads: list[int | None]) -> dict[int | None, dict[str, object]]:
    """Each ahead value's figures, the replays of every value alternating within each repeat."""
    runs = {ahead: _Runs() for ahead in aheads}
    with tempfile.TemporaryDirectory(prefix="passhat-bench-workers-") as name:
        folder = Path(name)
        week = build_week(folder, args.tickets)
        # The driver's own templates (which rows a ticket restores and whether they fit), built once per process
        # as the demo and the collector's loop keep them, like the workers' templates: printed apart.
        began = time.perf_counter()
        pool = SandboxPool()
        pool.base(load_domain("retail"))
        templates = time.perf_counter() - began
        both = set(sorted(os.sched_getaffinity(0))[:2])
        # (workers, the cores they and the driver run on: None for every core this process may use)
        replays: list[tuple[int, set[int] | None]] = [(1, None), (2, None)]
        if args.cores:
            replays = [(1, {min(both)}), (1, both), (2, both)]
        for _ in range(args.repeats):
            for ahead in aheads:
                for workers, cores in replays:
                    start, seconds, trials, driver, children = asyncio.run(
                        replay_once(
                            week, folder, workers, args.tickets, args.k, pool,
                            cold=args.cold, traced=args.traced, ahead=ahead, cores=cores,
                        )
                    )  # fmt: skip
                    key = ONE_CORE if cores is not None and len(cores) == 1 else workers
                    runs[ahead].add(key, start, seconds, trials, driver, children)
        pool.close()
    return {ahead: run.figures(args, templates) for ahead, run in runs.items()}


ONE_CORE = 0
"""The key of the replays of one worker pinned, with its driver, to one core (``--cores``)."""


class _Runs:
    """The replays of one setting: per worker count (`ONE_CORE`: one worker on one core), each repeat's figures."""

    def __init__(self) -> None:
        self.rates: dict[int, list[float]] = {ONE_CORE: [], 1: [], 2: []}
        self.startup: dict[int, list[float]] = {ONE_CORE: [], 1: [], 2: []}
        self.driver_cpu: dict[int, list[float]] = {ONE_CORE: [], 1: [], 2: []}
        self.worker_cpu: dict[int, list[float]] = {ONE_CORE: [], 1: [], 2: []}
        self.trials = 0

    def add(self, workers: int, start: float, seconds: float, trials: int, driver: float, children: float) -> None:
        self.trials = trials
        self.rates[workers].append(trials / seconds)
        self.startup[workers].append(start)
        self.driver_cpu[workers].append(driver / trials)
        self.worker_cpu[workers].append(children / trials)

    def figures(self, args: argparse.Namespace, templates: float) -> dict[str, object]:
        rates, driver_cpu, worker_cpu = self.rates, self.driver_cpu, self.worker_cpu
        ratios = [two / one for one, two in zip(rates[1], rates[2], strict=True)]
        cpu = {w: (statistics.median(worker_cpu[w]), statistics.median(driver_cpu[w])) for w in (1, 2)}
        implied = max(cpu[1]) / ((cpu[2][0] + cpu[2][1]) / 2)
        # The share of the two cores a two-worker replay's trials kept busy (its trials a second times their CPU,
        # the workers' and the driver's, in each repeat): what is left is idle, a core waiting for work.
        used = [
            rate * (worker + driver) / 2
            for rate, worker, driver in zip(rates[2], worker_cpu[2], driver_cpu[2], strict=True)
        ]
        return {
            "trials": self.trials,
            "traced": args.traced,
            "trials_per_s_1_worker": round(statistics.median(rates[1]), 1),
            "trials_per_s_2_workers": round(statistics.median(rates[2]), 1),
            "ratio_median": round(statistics.median(ratios), 2),
            "ratio_min": round(min(ratios), 2),
            "ratio_max": round(max(ratios), 2),
            "startup_s_1_worker": round(statistics.median(self.startup[1]), 2),
            "startup_s_2_workers": round(statistics.median(self.startup[2]), 2),
            "driver_templates_s": round(templates, 2),
            # Where a trial's CPU goes: the driver (planning, storing rows and spans) and the workers. On two cores
            # the driver's share bounds the 2-worker gain whatever the load.
            "driver_cpu_ms_per_trial": {w: round(1000 * statistics.median(driver_cpu[w]), 2) for w in (1, 2)},
            "workers_cpu_ms_per_trial": {w: round(1000 * statistics.median(worker_cpu[w]), 2) for w in (1, 2)},
            "ratio_on_2_free_cores_from_cpu": round(implied, 2),
            "busy_share_2_workers": round(statistics.median(used), 3) if not args.cold else None,
            "repeats": args.repeats,
            **(self._one_core() if args.cores else {}),
        }

    def _one_core(self) -> dict[str, object]:
        """One core against two (``--cores``): the one-worker replay pinned to one core, against two workers on
        two; from the CPU, a trial takes the worker's and the driver's CPU on one core, and half the two workers'
        and the driver's on two."""
        rates = self.rates
        ratios = [two / one for one, two in zip(rates[ONE_CORE], rates[2], strict=True)]
        one = statistics.median(self.worker_cpu[ONE_CORE]) + statistics.median(self.driver_cpu[ONE_CORE])
        two = statistics.median(self.worker_cpu[2]) + statistics.median(self.driver_cpu[2])
        return {
            "trials_per_s_1_worker_on_1_core": round(statistics.median(rates[ONE_CORE]), 1),
            "ratio_2_cores_vs_1_core_median": round(statistics.median(ratios), 2),
            "ratio_2_cores_vs_1_core_min": round(min(ratios), 2),
            "ratio_2_cores_vs_1_core_max": round(max(ratios), 2),
            "cpu_ms_per_trial_1_core": {
                "driver": round(1000 * statistics.median(self.driver_cpu[ONE_CORE]), 2),
                "worker": round(1000 * statistics.median(self.worker_cpu[ONE_CORE]), 2),
            },
            "ratio_2_cores_vs_1_core_from_cpu": round(one / (two / 2), 2),
        }


if __name__ == "__main__":
    main()
