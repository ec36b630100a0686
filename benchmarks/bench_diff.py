"""Diff a 100,000-row SQLite database with 10 changed rows: change log vs two snapshots, side by side.

The change log runs both ways: installed per trial (``record_changes(engine)``: triggers in, triggers out) and
installed once on a template (``install_change_log``: the trial copies inherit it; before-images come from
the shared snapshot), the way the sandbox runs trials.

Run:  .venv/bin/python benchmarks/bench_diff.py [--rows 100000] [--changes 10] [--repeats 31] [--json]

Prints the median (and min/max) of each way, measured in one run on the same database file. The change log
target is < 50 ms for the diff at the end of a trial.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine

from passhat.checks import diff_snapshots, install_change_log, record_changes, take_snapshot


def build(path: Path, rows: int) -> None:
    customers = rows // 5
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, email TEXT, created_at DATETIME);
        CREATE TABLE orders (
            id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), status TEXT,
            total NUMERIC(10, 2), placed_at DATETIME, meta JSON
        );
        """
    )
    db.executemany(
        "INSERT INTO customers VALUES (?, ?, ?, ?)",
        ((i, f"Customer {i}", f"c{i}@example.com", "2026-01-01 00:00:00.000000") for i in range(customers)),
    )
    db.executemany(
        "INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?)",
        (
            (
                i,
                i % customers,
                "delivered",
                f"{(i % 997) + 0.5:.2f}",
                "2026-02-01 10:00:00.000000",
                '{"channel": "web"}',
            )
            for i in range(rows - customers)
        ),
    )
    db.commit()
    db.close()


def change(engine: Engine, count: int) -> None:
    """``count`` row changes: mostly updates, plus inserts and deletes, in one transaction."""
    with engine.begin() as db:
        for i in range(count):
            kind = i % 5
            if kind in (0, 1, 2):
                db.exec_driver_sql("UPDATE orders SET status = 'refunded', total = 0 WHERE id = ?", (i * 7919,))
            elif kind == 3:
                db.exec_driver_sql(
                    "INSERT INTO orders (customer_id, status, total, placed_at) VALUES (1, 'new', 9.99, "
                    "'2026-11-29 12:00:00.000000')"
                )
            else:
                db.exec_driver_sql("DELETE FROM orders WHERE id = ?", (i * 104729 % 50000 + 1,))


def timed(function: Callable[[], Any], repeats: int) -> tuple[list[float], Any]:
    samples: list[float] = []
    result: Any = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        samples.append((time.perf_counter() - start) * 1000)
    return samples, result


def summary(samples: list[float]) -> dict[str, float]:
    return {
        "median_ms": round(statistics.median(samples), 2),
        "min_ms": round(min(samples), 2),
        "max_ms": round(max(samples), 2),
        "runs": len(samples),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--changes", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=31, help="runs of the change-log diff")
    parser.add_argument("--snapshot-repeats", type=int, default=5, help="runs of the snapshot diff")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.db"
        build(path, args.rows)
        engine = create_engine(f"sqlite:///{path}")
        before = take_snapshot(engine)

        start = time.perf_counter()
        log = record_changes(engine)
        log.__enter__()
        setup_ms = (time.perf_counter() - start) * 1000
        change(engine, args.changes)
        log_samples, log_diff = timed(log.diff, args.repeats)
        start = time.perf_counter()
        log.__exit__(None, None, None)
        teardown_ms = (time.perf_counter() - start) * 1000

        # Once per template: triggers, rowid map and snapshot; then each trial works on a copy.
        template_path = Path(folder) / "template.db"
        build(template_path, args.rows)
        template = create_engine(f"sqlite:///{template_path}")
        start = time.perf_counter()
        starting = install_change_log(template)
        install_ms = (time.perf_counter() - start) * 1000
        template.dispose()
        shutil.copyfile(template_path, Path(folder) / "copy.db")
        copy = create_engine(f"sqlite:///{Path(folder) / 'copy.db'}")
        start = time.perf_counter()
        trial_log = record_changes(copy, start=starting)
        trial_log.__enter__()
        trial_setup_ms = (time.perf_counter() - start) * 1000
        change(copy, args.changes)
        start_samples, start_diff = timed(trial_log.diff, args.repeats)
        start = time.perf_counter()
        trial_log.__exit__(None, None, None)
        trial_teardown_ms = (time.perf_counter() - start) * 1000
        copy.dispose()

        snapshot_samples, snapshot_diff = timed(
            lambda: diff_snapshots(before, take_snapshot(engine)), args.snapshot_repeats
        )
        after = take_snapshot(engine)
        compare_samples, _ = timed(lambda: diff_snapshots(before, after), args.snapshot_repeats)
        engine.dispose()

    if log_diff != snapshot_diff or start_diff != snapshot_diff:
        raise SystemExit("the change log and the snapshot diff disagree: this is a bug")
    result = {
        "rows": before.row_count,
        "changed_rows": len(log_diff),
        "change_log_diff": summary(log_samples),
        "change_log_setup_ms": round(setup_ms, 2),
        "change_log_teardown_ms": round(teardown_ms, 2),
        "template_log_diff": summary(start_samples),
        "template_install_ms": round(install_ms, 2),
        "template_log_setup_ms": round(trial_setup_ms, 2),
        "template_log_teardown_ms": round(trial_teardown_ms, 2),
        "snapshot_then_diff": summary(snapshot_samples),
        "diff_of_two_snapshots_in_memory": summary(compare_samples),
    }
    result["speedup_median"] = round(
        result["snapshot_then_diff"]["median_ms"] / result["change_log_diff"]["median_ms"], 1
    )
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"database: {result['rows']:,} rows, {result['changed_rows']} changed rows (same diff both ways)")
    print(f"{'way':<46}{'median ms':>11}{'min':>9}{'max':>9}{'runs':>6}")
    for label, key in (
        ("change log: log.diff()", "change_log_diff"),
        ("change log on a template copy: log.diff()", "template_log_diff"),
        ("snapshot: take_snapshot(after) + diff", "snapshot_then_diff"),
        ("snapshot: diff of two snapshots in memory", "diff_of_two_snapshots_in_memory"),
    ):
        row = result[key]
        print(f"{label:<46}{row['median_ms']:>11.2f}{row['min_ms']:>9.2f}{row['max_ms']:>9.2f}{row['runs']:>6}")
    print(f"change log setup {setup_ms:.1f} ms, teardown {teardown_ms:.1f} ms (once per trial)")
    print(
        f"template change log: install {install_ms:.1f} ms (once per template, snapshot included); "
        f"per trial setup {trial_setup_ms:.1f} ms, teardown {trial_teardown_ms:.1f} ms"
    )
    print(f"median speed-up of the change log over snapshot-then-diff: {result['speedup_median']}x")


if __name__ == "__main__":
    main()
