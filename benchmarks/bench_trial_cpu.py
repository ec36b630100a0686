"""Benchmark: sandbox trials per CPU-second in one domain, with the ReferenceAgent (an offline simulation).

Runs `--scenarios` scenarios of every task type of the domain `--k` times each, in this process, with the trial
runner's default settings (whatever this commit's default transport is), after a warm-up pass, and prints one
JSON line: trials, CPU seconds and trials per CPU-second (process time: less sensitive to other load on a shared
machine than wall time). `bench_vs_commit.py` runs it beside an earlier commit's code for a side-by-side ratio.

``--own-rows``: each scenario's k trials start from a sandbox of its own, derived from the seed with a row laid
over it and closed after them, as a replayed production ticket's trials do when its captured rows differ from
the seed (a real customer's rows always do; the simulated weeks the other benchmarks replay are drawn from the
seed, so their tickets share the seed's template). The derivation is timed with the trials. The row laid is one
seeded row with its own values: the cost measured is the path's, not the data's.

Run: .venv/bin/python benchmarks/bench_trial_cpu.py --domain retail [--scenarios 3] [--k 4] [--parallel 8]
[--own-rows]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

from passhat.sandbox import (
    AgentFactory,
    FlawConfig,
    ReferenceAgent,
    RowImage,
    RunConfig,
    Sandbox,
    TrialResult,
    run_trials,
)


def a_seeded_row(sandbox: Sandbox) -> RowImage:
    """One seeded row of the domain's first table with rows, as a captured image of it (partial: its columns)."""
    for name in sorted(sandbox.domain.metadata.tables):
        table = sandbox.initial.table(name)
        for key, values in table.rows.items():
            return RowImage(name, dict(zip(table.primary_key, key, strict=True)), dict(values), partial=True)
    raise SystemExit(f"domain {sandbox.domain.name!r} seeds no rows to lay over")


async def by_ticket(
    sandbox: Sandbox, scenarios: list[Any], k: int, factory: AgentFactory, config: RunConfig, *, own_rows: bool
) -> list[TrialResult]:
    """Each scenario's k trials as a replayed ticket's, ``config.parallel`` trials in flight at most (whole
    tickets: ``parallel // k`` of them at once); ``own_rows``: from a sandbox derived for the ticket, closed
    after its trials (as a ticket whose rows differ from the seed), else from the seed's."""
    image = a_seeded_row(sandbox)
    tickets = asyncio.Semaphore(max(1, config.parallel // k))

    async def ticket(scenario: Any) -> list[TrialResult]:
        async with tickets:
            start = sandbox.derive([image]) if own_rows else sandbox
            try:
                return await run_trials(start, [scenario], k, factory, config=config)
            finally:
                if start is not sandbox:
                    start.close()

    results: list[TrialResult] = []
    for each in await asyncio.gather(*(ticket(scenario) for scenario in scenarios)):
        results.extend(each)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--domain", default="retail")
    parser.add_argument("--scenarios", type=int, default=3, help="scenarios per task type")
    parser.add_argument("--k", type=int, default=4, help="trials per scenario")
    parser.add_argument("--parallel", type=int, default=8)
    parser.add_argument("--own-rows", action="store_true", help="each scenario's trials on a derived sandbox")
    args = parser.parse_args()
    with Sandbox(args.domain) as sandbox:
        scenarios = sandbox.scenarios(count=args.scenarios)
        factory = ReferenceAgent.factory(FlawConfig.default())
        config = RunConfig(parallel=args.parallel)
        asyncio.run(run_trials(sandbox, scenarios, 1, factory, config=config))  # warm-up: imports, caches
        if args.own_rows:  # the same tickets from the seed's template and from their own, alternately
            cpu = {True: 0.0, False: 0.0}
            for own in (False, True, False, True):
                started = time.process_time()
                results = asyncio.run(by_ticket(sandbox, scenarios, args.k, factory, config, own_rows=own))
                cpu[own] += (time.process_time() - started) / 2
        else:
            started = time.process_time()
            results = asyncio.run(run_trials(sandbox, scenarios, args.k, factory, config=config))
            cpu = {False: time.process_time() - started}
    line: dict[str, Any] = {
        "domain": args.domain,
        "own_rows": args.own_rows,
        "trials": len(results),
        "cpu_s": round(cpu[args.own_rows], 3),
        "trials_per_cpu_s": round(len(results) / cpu[args.own_rows], 1),
        "pass_at_1": round(sum(r.passed for r in results) / len(results), 3),
    }
    if args.own_rows:  # the same tickets' trials from the seed's template, in the same run
        line["seed_template_trials_per_cpu_s"] = round(len(results) / cpu[False], 1)
        line["own_vs_seed"] = round(cpu[False] / cpu[True], 2)
    print(json.dumps(line))


if __name__ == "__main__":
    main()
