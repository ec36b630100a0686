"""Benchmark: sandbox trials per second with the ReferenceAgent (an offline simulation), and the sandbox's overhead.

Runs every retail task type's scenarios k times each over the in-memory MCP transport, with the shipped failure
rates, and reports trials per second (wall clock, all trials concurrent up to --parallel) and the median
sandbox overhead per trial: database copy + tool server start and MCP connection + grading (diff, check,
classifier, trace events) + cleanup. Targets: >= 50 trials/s and a median overhead <= 20 ms.

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
    parser.add_argument("--transport", default="memory", choices=("memory", "http", "stdio"))
    args = parser.parse_args()
    with Sandbox("retail") as sandbox:
        scenarios = sandbox.scenarios(count=args.scenarios)
        factory = ReferenceAgent.factory(FlawConfig.default())
        config = RunConfig(parallel=args.parallel, transport=args.transport)
        asyncio.run(run_trials(sandbox, scenarios[:15], 1, factory, config=config))  # warm-up: imports, caches
        rates, overheads, passed = [], [], []
        for _ in range(args.repeats):
            started = time.perf_counter()
            results = asyncio.run(run_trials(sandbox, scenarios, args.k, factory, config=config))
            elapsed = time.perf_counter() - started
            rates.append(len(results) / elapsed)
            overheads.extend(r.overhead_s for r in results)
            passed.append(sum(r.passed for r in results) / len(results))
    trials = len(scenarios) * args.k
    print(f"trials per run            {trials} ({len(scenarios)} scenarios x k={args.k}, {args.transport} transport)")
    print(f"trials per second         {statistics.median(rates):.1f} (median of {args.repeats}; target >= 50)")
    print(f"median sandbox overhead   {1000 * statistics.median(overheads):.1f} ms per trial (target <= 20 ms)")
    print(f"p90 sandbox overhead      {1000 * statistics.quantiles(overheads, n=10)[-1]:.1f} ms per trial")
    print(f"pass@1 (reference agent)  {statistics.mean(passed):.3f} (simulated failures at the shipped rates)")


if __name__ == "__main__":
    main()
