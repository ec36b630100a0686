"""Benchmark: how deep a domain's tickets are, measured on its reference path (ReferenceAgent, failures off).

For each task type, runs clean reference trials on a few scenarios and reports the median number of lookups,
writes and other calls the path makes, the systems its calls touch, and the tables and rows it changes. A
deeper domain (more calls, more systems, more writes per ticket) gives the per-step failure modes more chances,
so its pass@1 and pass^k come out lower at the same per-step rates.

Run: .venv/bin/python benchmarks/bench_domain_depth.py travel [--scenarios 5] [--size small] [--markdown]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics

from passhat.sandbox import FlawConfig, ReferenceAgent, Sandbox, load_domain, run_trials


def measure(name: str, scenarios: int, size: str) -> list[dict[str, object]]:
    """One row per task type: median lookups, writes, others and changed rows; the systems and tables touched."""
    domain = load_domain(name)
    rows: list[dict[str, object]] = []
    with Sandbox(domain, size=size) as sandbox:
        for task_type in domain.task_types:
            drawn = sandbox.scenarios(task_type, scenarios)
            results = asyncio.run(run_trials(sandbox, drawn, 1, ReferenceAgent.factory(FlawConfig.off())))
            lookups, writes, others, changed = [], [], [], []
            systems: set[str] = set()
            tables: set[str] = set()
            for result in results:
                calls = result.record.tool_calls
                lookups.append(sum(c.name in domain.lookup_tools for c in calls))
                writes.append(sum(c.name in domain.write_tools for c in calls))
                others.append(sum(c.name not in domain.lookup_tools | domain.write_tools for c in calls))
                systems |= {domain.tool_systems.get(c.name, "?") for c in calls}
                tables |= {change.table for change in result.record.diff}
                changed.append(len(result.record.diff))
            rows.append(
                {
                    "task_type": task_type,
                    "kind": domain.task_type(task_type).kind,
                    "passed": f"{sum(r.passed for r in results)}/{len(results)}",
                    "lookups": statistics.median(lookups),
                    "writes": statistics.median(writes),
                    "other": statistics.median(others),
                    "rows_changed": statistics.median(changed),
                    "systems": sorted(systems),
                    "tables_written": sorted(tables),
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domain", nargs="?", default="retail", help="an installed domain (default: retail)")
    parser.add_argument("--scenarios", type=int, default=5)
    parser.add_argument("--size", default="small")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    rows = measure(args.domain, args.scenarios, args.size)
    if args.markdown:
        print("| task type | kind | reference passed | lookups | writes | rows changed | systems | tables written |")
        print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        systems, tables = ", ".join(row["systems"]), ", ".join(row["tables_written"]) or "-"  # type: ignore[arg-type]
        if args.markdown:
            print(
                f"| {row['task_type']} | {row['kind']} | {row['passed']} | {row['lookups']} | {row['writes']} "
                f"| {row['rows_changed']} "
                f"| {len(row['systems'])}: {systems} | {tables} |"  # type: ignore[arg-type]
            )
        else:
            print(row)
    count = len(rows)
    mean = {key: sum(float(r[key]) for r in rows) / count for key in ("lookups", "writes", "rows_changed")}  # type: ignore[arg-type]
    mean_systems = sum(len(r["systems"]) for r in rows) / count  # type: ignore[arg-type]
    print(
        f"\n{args.domain}: {count} task types, {args.scenarios} scenarios each ({args.size}); mean per ticket: "
        f"{mean['lookups']:.1f} lookups, {mean['writes']:.1f} writes, {mean['rows_changed']:.1f} rows changed, "
        f"{mean_systems:.1f} systems"
    )


if __name__ == "__main__":
    main()
