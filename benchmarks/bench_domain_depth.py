"""Benchmark: how deep a domain's task types are, read from the reference trials (failures off).

For each task type, runs the ReferenceAgent on N scenarios and reports the mean number of lookups and writes it
made, the systems those calls touched, and the tables its check expects written: what a real agent has to get
right for the ticket to pass. A deeper domain has more of each, so per-step failures make it fail more often.

Run: .venv/bin/python benchmarks/bench_domain_depth.py banking [--size small] [--scenarios 10] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from typing import Any

from passhat.sandbox import FlawConfig, ReferenceAgent, Sandbox, run_trials


def depth(domain: str, size: str, scenarios: int, seed: int = 0) -> list[dict[str, Any]]:
    """One row per task type: mean lookups, writes and systems touched by the reference trial."""
    rows: list[dict[str, Any]] = []
    with Sandbox(domain, seed=seed, size=size) as sandbox:
        systems = sandbox.domain.tool_systems
        for name, task in sandbox.domain.task_types.items():
            drawn = sandbox.scenarios(name, scenarios, seed=seed)
            results = asyncio.run(run_trials(sandbox, drawn, 1, ReferenceAgent.factory(FlawConfig.off())))
            lookups = [sum(not c.is_write for c in r.record.tool_calls) for r in results]
            writes = [sum(c.is_write and c.outcome == "ok" for c in r.record.tool_calls) for r in results]
            touched = [{systems.get(c.name, "?") for c in r.record.tool_calls} for r in results]
            changed = [len(r.record.diff) for r in results]
            rows.append(
                {
                    "task_type": name,
                    "kind": task.kind,
                    "scenarios": len(results),
                    "passed": sum(r.passed for r in results),
                    "lookups": round(statistics.mean(lookups), 1),
                    "writes": round(statistics.mean(writes), 1),
                    "writes_range": [min(writes), max(writes)],
                    "rows_changed": round(statistics.mean(changed), 1),
                    "systems": round(statistics.mean(len(t) for t in touched), 1),
                    "systems_touched": sorted(set().union(*touched)),
                    "tables_written": sorted(task.write_tables),
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domain")
    parser.add_argument("--size", default="small")
    parser.add_argument("--scenarios", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = depth(args.domain, args.size, args.scenarios)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("| task type | kind | lookups | writes | rows changed | systems touched | passed |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        low, high = row["writes_range"]
        writes = f"{row['writes']}" + (f" ({low}-{high})" if low != high else "")
        touched = f"{row['systems']} ({', '.join(row['systems_touched'])})"
        print(
            f"| {row['task_type']} | {row['kind']} | {row['lookups']} | {writes} | {row['rows_changed']} | {touched} | "
            f"{row['passed']}/{row['scenarios']} |"
        )
    means = {key: statistics.mean(r[key] for r in rows) for key in ("lookups", "writes", "rows_changed", "systems")}
    print(
        f"\nmean over task types: {means['lookups']:.1f} lookups, {means['writes']:.1f} writes, "
        f"{means['rows_changed']:.1f} rows changed, {means['systems']:.1f} systems"
    )


if __name__ == "__main__":
    main()
