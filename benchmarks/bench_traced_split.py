"""Benchmark: where a traced trial's CPU goes, and what that allows 2 worker processes against 1.

bench_workers.py measures 2 workers against 1; on a shared machine a worker's CPU a trial drifts by 20% between
its runs, which hides how the work is split. This one runs the same replay (bench_workers.py's week of retail
tickets, the ReferenceAgent) with ONE worker process in three ways, alternately, ``--repeats`` times each:

- ``untraced``: trials not traced;
- ``traced_driver_prepares``: traced as with fewer workers than cores (the one-worker replay): the worker sends
  each trial's spans, the driver turns them into the store's rows and writes them;
- ``traced_workers_build_rows``: traced as with a worker on every core (the two-worker replay on 2 cores): the
  worker builds the store's rows (`Store.row_builder`), the driver unpickles and inserts them.

and prints one JSON line: the median worker CPU (``w``) and driver CPU (``d``) a trial of each (ms), and what
they allow on 2 free cores: one worker and the driver each have a core (a trial takes max(w, d)), two workers and
the driver share both (a trial takes (w + d) / 2), so 2 workers against 1 is at most 2 max(w1, d1) / (w2 + d2).
Traced, the one-worker replay already keeps the driver busy on the second core, preparing and writing spans: that
share of the second core is printed as ``second_core_used_by_1_worker``.

Run: .venv/bin/python benchmarks/bench_traced_split.py [--tickets 6] [--k 10] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_workers import build_week, replay_once

import passhat.collector.replay._local as local
from passhat.collector.replay import SandboxPool
from passhat.sandbox import load_domain

MODES = ("untraced", "traced_driver_prepares", "traced_workers_build_rows")


def _workers_build_rows(build: bool) -> None:
    """Whether a replay's workers build the store's rows, whatever their number (the replay's own rule gives
    one worker on two cores none: `spans_prepared_in_workers`)."""
    rule: Callable[..., Any] = getattr(local, "_bench_rule", local.spans_prepared_in_workers)
    local._bench_rule = rule  # type: ignore[attr-defined]
    local.spans_prepared_in_workers = (lambda runtime, workers: rule(runtime, 1 << 10)) if build else rule


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tickets", type=int, default=6, help="tickets per task type")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    cpu: dict[str, list[tuple[float, float]]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory(prefix="passhat-bench-split-") as name:
        folder = Path(name)
        week = build_week(folder, args.tickets)
        pool = SandboxPool()
        pool.base(load_domain("retail"))
        trials = 0
        for _ in range(args.repeats):
            for mode in MODES:
                _workers_build_rows(mode == "traced_workers_build_rows")
                _, _, trials, driver, children = asyncio.run(
                    replay_once(week, folder, 1, args.tickets, args.k, pool, traced=mode != "untraced")
                )
                cpu[mode].append((1000 * children / trials, 1000 * driver / trials))
        _workers_build_rows(False)
        pool.close()
    split = {mode: tuple(round(statistics.median(v[i] for v in cpu[mode]), 3) for i in (0, 1)) for mode in MODES}
    (wu, du), (ws, ds), (wr, dr) = (split[mode] for mode in MODES)
    print(
        json.dumps(
            {
                "trials": trials,
                "repeats": args.repeats,
                "cpu_ms_per_trial": {mode: {"w": w, "d": d} for mode, (w, d) in split.items()},
                "tracing_in_worker_ms": round(ws - wu, 3),
                "rows_in_worker_ms": round(wr - ws, 3),
                "bound_2_vs_1_untraced": round(2 * max(wu, du) / (wu + du), 2),
                "bound_2_vs_1_traced": round(2 * max(ws, ds) / (wr + dr), 2),
                "second_core_used_by_1_worker": {"untraced": round(du / wu, 2), "traced": round(ds / ws, 2)},
            }
        )
    )


if __name__ == "__main__":
    main()
