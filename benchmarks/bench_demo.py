"""Benchmark: `passhat demo` end to end (two simulated weeks, k = 20 replays, reports and the drop alert).

Runs the demo in a fresh folder as `make demo` does once installed (the command's start-up included), and prints
one JSON line: its wall seconds and the CPU seconds of the demo's process tree (the command, its collector and
the worker processes). Side by side with an earlier commit (`bench_vs_commit.py`), the same interpreter and
dependencies run both.

Run: .venv/bin/python benchmarks/bench_demo.py
     .venv/bin/python benchmarks/bench_vs_commit.py --commit f3e4cfb --rounds 2 --figure demo_wall_s -- \\
         benchmarks/bench_demo.py
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def main() -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    with tempfile.TemporaryDirectory(prefix="passhat-bench-demo-") as folder:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", "from passhat.collector.cli import main; main()", "demo"],
            cwd=folder, capture_output=True, text=True, env={**os.environ, "COLUMNS": "100"},
        )  # fmt: skip
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"passhat demo failed (exit code {done.returncode}):\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(json.dumps({"demo_wall_s": round(wall, 1), "demo_cpu_s": round(cpu, 1)}))


if __name__ == "__main__":
    main()
