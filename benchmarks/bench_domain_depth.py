"""Benchmark: how deep a domain's task types are, measured on the reference trials (failures off).

For each task type, runs the ReferenceAgent with failures off on N scenarios and reports, per trial, the lookups
it made, the writes, and the systems it touched (mean, and the range over the scenarios), with the share that
passed. A deeper domain needs more lookups and writes across more systems per ticket.

Run: .venv/bin/python benchmarks/bench_domain_depth.py consulting [--size default] [--scenarios 10] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics

from passhat.sandbox import FlawConfig, ReferenceAgent, Sandbox, run_trials


def measure(domain: str, size: str, scenarios: int) -> list[dict[str, object]]:
    """One row per task type: lookups, writes and systems per reference trial."""
    rows: list[dict[str, object]] = []
    with Sandbox(domain, size=size) as sandbox:
        systems = sandbox.domain.tool_systems
        for name in sorted(sandbox.domain.task_types):
            drawn = sandbox.scenarios(name, scenarios)
            results = asyncio.run(run_trials(sandbox, drawn, 1, ReferenceAgent.factory(FlawConfig.off())))
            lookups = [sum(not c.is_write for c in r.record.tool_calls) for r in results]
            writes = [sum(c.is_write and c.outcome == "ok" for c in r.record.tool_calls) for r in results]
            touched = [len({systems.get(c.name, c.name) for c in r.record.tool_calls}) for r in results]
            rows.append(
                {
                    "task_type": name,
                    "kind": sandbox.domain.task_type(name).kind,
                    "scenarios": len(results),
                    "passed": sum(r.passed for r in results),
                    "lookups": _summary(lookups),
                    "writes": _summary(writes),
                    "systems": _summary(touched),
                }
            )
    return rows


def _summary(values: list[int]) -> dict[str, float]:
    return {"mean": round(statistics.fmean(values), 1), "min": min(values), "max": max(values)}


def _cell(value: object) -> str:
    summary = value if isinstance(value, dict) else {}
    spread = "" if summary["min"] == summary["max"] else f" ({summary['min']}-{summary['max']})"
    return f"{summary['mean']}{spread}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domain")
    parser.add_argument("--size", default="default")
    parser.add_argument("--scenarios", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = measure(args.domain, args.size, args.scenarios)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("| task type | kind | lookups | writes | systems touched | reference passed |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        cells = [_cell(row["lookups"]), _cell(row["writes"]), _cell(row["systems"])]
        print(f"| {row['task_type']} | {row['kind']} | {' | '.join(cells)} | {row['passed']}/{row['scenarios']} |")


if __name__ == "__main__":
    main()
