"""Benchmark: how deep each task type of a domain is, measured on its reference trials.

For every task type, runs the ReferenceAgent with failures off on a few scenarios and counts, per trial, the
lookups and the writes it made (successful tool calls of each kind) and the systems those calls touched; prints
a markdown table per domain with the mean and the range over the scenarios, and the domain's overall means.
A deeper domain needs more lookups, writes and systems per ticket, so with per-step failure injection it
comes out lower on pass@1 and pass^k.

Run: .venv/bin/python benchmarks/bench_domain_depth.py [insurance retail ...] [--scenarios 5] [--size small]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics

from passhat.sandbox import FlawConfig, ReferenceAgent, Sandbox, run_trials


def _spread(values: list[int]) -> str:
    mean = statistics.fmean(values)
    low, high = min(values), max(values)
    return f"{mean:.1f}" if low == high else f"{mean:.1f} ({low}-{high})"


def depth_table(name: str, scenarios: int, size: str) -> list[str]:
    """The markdown lines of one domain's table."""
    lines = [
        f"### {name} ({scenarios} reference trials per task type, size {size})",
        "",
        "| task type | kind | lookups | writes | systems touched |",
        "|---|---|---|---|---|",
    ]
    every: dict[str, list[int]] = {"lookups": [], "writes": [], "systems": []}
    with Sandbox(name, seed=0, size=size) as sandbox:
        domain = sandbox.domain
        for task_name, task in sorted(domain.task_types.items()):
            drawn = sandbox.scenarios(task_name, scenarios)
            results = asyncio.run(run_trials(sandbox, drawn, 1, ReferenceAgent.factory(FlawConfig.off())))
            counts: dict[str, list[int]] = {"lookups": [], "writes": [], "systems": []}
            names: set[str] = set()
            for result in results:
                calls = [call for call in result.record.tool_calls if call.outcome == "ok"]
                counts["lookups"].append(sum(call.name in domain.lookup_tools for call in calls))
                counts["writes"].append(sum(call.name in domain.write_tools for call in calls))
                touched = {domain.tool_systems.get(call.name, "?") for call in calls}
                counts["systems"].append(len(touched))
                names |= touched
            for key, values in counts.items():
                every[key].extend(values)
            lines.append(
                f"| {task_name} | {task.kind} | {_spread(counts['lookups'])} | {_spread(counts['writes'])} | "
                f"{_spread(counts['systems'])}: {', '.join(sorted(names))} |"
            )
    lines.append(
        f"| **all** | | {statistics.fmean(every['lookups']):.2f} | {statistics.fmean(every['writes']):.2f} | "
        f"{statistics.fmean(every['systems']):.2f} |"
    )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domains", nargs="*", default=["retail", "insurance"])
    parser.add_argument("--scenarios", type=int, default=5)
    parser.add_argument("--size", default="small")
    options = parser.parse_args()
    for name in options.domains:
        print("\n".join(depth_table(name, options.scenarios, options.size)))
        print()


if __name__ == "__main__":
    main()
