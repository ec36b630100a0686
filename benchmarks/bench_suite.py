"""Benchmark: the frozen suite at k = 20 with the ReferenceAgent, with and without --stop-early.

Runs the suite (`--tasks-per-type` caps each task type's tasks for a smaller slice; 0 runs all 507) through
`run_suite` exactly as `passhat suite run` does (worker processes on every core, a fresh SQLite store per
variant), once with the fixed design (k trials a task) and once curtailed (`--stop-early`: a task stops once one
attempt passed and one failed, after at least 2). For each: trials run, wall seconds, CPU seconds of the driver
and its worker processes (read from /proc while they run), trials per wall second.

Then the estimated cost of the same trials with a model agent taking `--trial-s` seconds a trial (30 s: the
model's latency dominates, the sandbox's CPU is noise beside it), on 1, 4 and 10 Ray nodes each running
`--slots` trials at once: wall hours = trials x trial-s / (nodes x slots), and model hours (trials x trial-s,
what a per-second or per-token price multiplies). Prints a table and one JSON line.

Run:  .venv/bin/python benchmarks/bench_suite.py [--k 20] [--tasks-per-type 0] [--profile default]
          [--trial-s 30] [--slots 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import threading
import time
from pathlib import Path

from passhat.collector.store import open_store
from passhat.collector.suite import SuiteRunSettings, load_suite, run_suite, suite_agent

TICKS = os.sysconf("SC_CLK_TCK")


class DescendantCpu:
    """CPU seconds of this process and every process under it (worker processes too), sampled from /proc."""

    def __init__(self, every: float = 0.2) -> None:
        self.every = every
        self.seen: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> DescendantCpu:
        self.start = os.times()
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._sample()
        self._stop.set()
        self._thread.join()
        end = os.times()
        self.own = (end.user - self.start.user) + (end.system - self.start.system)

    @property
    def total(self) -> float:
        return self.own + sum(self.seen.values())

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self._sample()

    def _sample(self) -> None:
        parents: dict[int, int] = {}
        cpu: dict[int, float] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                text = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = text[text.rindex(")") + 2 :].split()
            parents[int(entry)] = int(fields[1])
            cpu[int(entry)] = (int(fields[11]) + int(fields[12])) / TICKS
        mine = {os.getpid()}
        grew = True
        while grew:
            found = {pid for pid, parent in parents.items() if parent in mine} - mine
            grew = bool(found)
            mine |= found
        for pid in mine - {os.getpid()}:
            self.seen[pid] = max(self.seen.get(pid, 0.0), cpu.get(pid, 0.0))


def run_variant(folder: Path, settings: SuiteRunSettings, profile: str) -> dict[str, float]:
    store = open_store(f"sqlite:///{folder / 'suite.db'}")
    store.ensure_project("bench")
    agent = suite_agent("reference", flaws=profile)
    started = time.perf_counter()
    with DescendantCpu() as cpu:
        outcome = asyncio.run(run_suite(store, "bench", agent, settings))
    wall = time.perf_counter() - started
    store.close()
    trials = len(outcome.trials)
    return {
        "trials": trials,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu.total, 1),
        "trials_per_s": round(trials / wall, 1),
        "cpu_ms_per_trial": round(1000 * cpu.total / trials, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--tasks-per-type", type=int, default=0, help="0: the whole suite")
    parser.add_argument("--profile", default="default")
    parser.add_argument("--trial-s", type=float, default=30.0)
    parser.add_argument("--slots", type=int, default=8, help="trials in flight per Ray node")
    args = parser.parse_args()
    suite = load_suite()  # built once, before the clock
    tasks = [t for t in suite.tasks if not args.tasks_per_type or int(t.task_id[-2:]) < args.tasks_per_type]
    results: dict[str, dict[str, float]] = {}
    for name, stop_early in (("fixed", False), ("stop_early", True)):
        settings = SuiteRunSettings(k=args.k, stop_early=stop_early, tasks_per_type=args.tasks_per_type)
        with tempfile.TemporaryDirectory(prefix="passhat-bench-suite-") as folder:
            results[name] = run_variant(Path(folder), settings, args.profile)
    cost = {
        name: {
            f"{nodes}_nodes_wall_h": round(result["trials"] * args.trial_s / (nodes * args.slots) / 3600, 2)
            for nodes in (1, 4, 10)
        }
        | {"model_h": round(result["trials"] * args.trial_s / 3600, 1)}
        for name, result in results.items()
    }
    saved = 1 - results["stop_early"]["trials"] / results["fixed"]["trials"]
    cores = os.cpu_count()
    print(f"suite {suite.version}: {len(tasks)} tasks, k = {args.k}, ReferenceAgent/{args.profile}, {cores} cores")
    print(f"{'design':<11} {'trials':>7} {'wall s':>7} {'CPU s':>7} {'trials/s':>9} {'CPU ms/trial':>13}"
          f" | at {args.trial_s:g} s/trial, {args.slots} slots/node: wall h on 1 / 4 / 10 nodes, model h")  # fmt: skip
    for name, result in results.items():
        c = cost[name]
        measured = f"{result['trials']:>7} {result['wall_s']:>7} {result['cpu_s']:>7} {result['trials_per_s']:>9}"
        print(f"{name:<11} {measured} {result['cpu_ms_per_trial']:>13} | {c['1_nodes_wall_h']} / "
              f"{c['4_nodes_wall_h']} / {c['10_nodes_wall_h']}, {c['model_h']}")  # fmt: skip
    print(f"--stop-early ran {100 * saved:.0f}% fewer trials")
    summary = {"tasks": len(tasks), "k": args.k, "profile": args.profile, "results": results, "cost": cost}
    print(json.dumps({**summary, "trial_s": args.trial_s, "slots_per_node": args.slots, "saved": round(saved, 3)}))


if __name__ == "__main__":
    main()
