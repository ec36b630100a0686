"""Benchmark: sandbox trials per second with the ReferenceAgent (an offline simulation), and the sandbox's overhead.

Runs every retail task type's scenarios k times each over the in-memory MCP transport, with the shipped failure
rates, and reports trials per second (wall clock, trials concurrent up to --parallel, one process: asyncio uses
one core) next to trials per CPU-second (less sensitive to other load on a shared machine), and the median
sandbox overhead per trial, measured in a sequential pass so other trials' turns do not count: database copy +
tool server start and MCP connection + grading (diff, check, classifier, trace events) + cleanup.
Targets: >= 50 trials/s and a median overhead <= 20 ms.

Run: .venv/bin/python benchmarks/bench_trials.py [--scenarios 10] [--k 4] [--parallel 16] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from passhat.sandbox import FlawConfig, ReferenceAgent, RunConfig, Sandbox, run_trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenarios", type=int, default=10, help="scenarios per task type")
    parser.add_argument("--k", type=int, default=4, help="trials per scenario")
    parser.add_argument("--parallel", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--transport", default="direct", choices=("direct", "memory", "http", "stdio"))
    args = parser.parse_args()
    with Sandbox("retail") as sandbox:
        scenarios = sandbox.scenarios(count=args.scenarios)
        factory = ReferenceAgent.factory(FlawConfig.default())
        config = RunConfig(parallel=args.parallel, transport=args.transport)
        asyncio.run(run_trials(sandbox, scenarios[:15], 1, factory, config=config))  # warm-up: imports, caches
        rates, cpu_rates, passed = [], [], []
        for _ in range(args.repeats):
            started, cpu_started = time.perf_counter(), time.process_time()
            results = asyncio.run(run_trials(sandbox, scenarios, args.k, factory, config=config))
            elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
            rates.append(len(results) / elapsed)
            cpu_rates.append(len(results) / cpu)
            passed.append(sum(r.passed for r in results) / len(results))
        sequential = RunConfig(parallel=1, transport=args.transport)
        results = asyncio.run(run_trials(sandbox, scenarios, 1, factory, config=sequential))
        overheads = [r.overhead_s for r in results]
    trials = len(scenarios) * args.k
    print(f"trials per run            {trials} ({len(scenarios)} scenarios x k={args.k}, {args.transport} transport)")
    print(f"trials per second         {statistics.median(rates):.1f} (median of {args.repeats}; target >= 50)")
    print(f"trials per CPU-second     {statistics.median(cpu_rates):.1f}")
    print(f"median sandbox overhead   {1000 * statistics.median(overheads):.1f} ms per trial (target <= 20 ms;")
    print(f"                          sequential pass over {len(overheads)} trials)")
    print(f"p90 sandbox overhead      {1000 * statistics.quantiles(overheads, n=10)[-1]:.1f} ms per trial")
    print(f"pass@1 (reference agent)  {statistics.mean(passed):.3f} (simulated failures at the shipped rates)")


if __name__ == "__main__":
    main()
