"""Benchmark: sandbox trials per CPU-second in one domain, with the ReferenceAgent (an offline simulation).

Runs `--scenarios` scenarios of every task type of the domain `--k` times each, in this process, with the trial
runner's default settings (whatever this commit's default transport is), after a warm-up pass, and prints one
JSON line: trials, CPU seconds and trials per CPU-second (process time: less sensitive to other load on a shared
machine than wall time). `bench_vs_commit.py` runs it beside an earlier commit's code for a side-by-side ratio.

Run: .venv/bin/python benchmarks/bench_trial_cpu.py --domain retail [--scenarios 3] [--k 4] [--parallel 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from passhat.sandbox import FlawConfig, ReferenceAgent, RunConfig, Sandbox, run_trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--domain", default="retail")
    parser.add_argument("--scenarios", type=int, default=3, help="scenarios per task type")
    parser.add_argument("--k", type=int, default=4, help="trials per scenario")
    parser.add_argument("--parallel", type=int, default=8)
    args = parser.parse_args()
    with Sandbox(args.domain) as sandbox:
        scenarios = sandbox.scenarios(count=args.scenarios)
        factory = ReferenceAgent.factory(FlawConfig.default())
        config = RunConfig(parallel=args.parallel)
        asyncio.run(run_trials(sandbox, scenarios, 1, factory, config=config))  # warm-up: imports, caches
        started = time.process_time()
        results = asyncio.run(run_trials(sandbox, scenarios, args.k, factory, config=config))
        cpu = time.process_time() - started
    line = {
        "domain": args.domain,
        "trials": len(results),
        "cpu_s": round(cpu, 3),
        "trials_per_cpu_s": round(len(results) / cpu, 1),
        "pass_at_1": round(sum(r.passed for r in results) / len(results), 3),
    }
    print(json.dumps(line))


if __name__ == "__main__":
    main()
