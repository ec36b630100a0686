"""The read side at scale: a weekly report and the web UI's figures on a store of a million trials.

Run:  .venv/bin/python benchmarks/bench_read.py [--trials 1000000] [--store sqlite|chdb] [--repeats 3]
                                               [--keep DIR] [--json]

Load: 8 weekly official runs (the UI's history) of 15 task types over 3 domains, k = 20 trials a ticket, the
tickets' per-attempt success drawn from the seed's mixture (31% p = 0.98, 60% p = 0.6, 9% p = 0), 1% of the
trials ended by an infrastructure error; each trial carries a verdict and a trial record (a backend change, a
four-turn transcript, the final response), as the replay stores them.

Each figure is measured in a fresh process (`--measure`), so the peak resident size is that job's alone, and is
the median over `--repeats` processes:
- `report`: the latest period's report as the loop builds it (`report_input_for` + `build_report`), from the
  store's per-ticket tallies (`Store.ticket_tallies`);
- `report (every trial)`: the same report from every trial row (`list_trials`, how the report was read before
  the tallies), side by side;
- `ui overview`: the UI's first overview after a start (the 8 runs' figures, cold) from tallies, and
  `ui overview (every trial)` the same from every trial row, side by side;
- `ui task type`: a task type page once the figures are cached.
CPU seconds are the process's user + system time; the machine may be shared, so read the ratios.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import pathlib
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from passhat.checks import RowChange
from passhat.collector.store import ReplayRun, Store, TrialRow, open_store, parse_period
from passhat.sandbox import TrialDetails

PROJECT = "bench"
K = 20
PERIODS = 8
TASK_TYPES = [(f"domain{i % 3}", f"type{i:02d}") for i in range(15)]
LABELS = ["tool_usage.precondition", "tool_usage.empty_lookup", "wrong_entity", "unresolved", "no_write"]
MEASURES = ("report", "report (every trial)", "ui overview", "ui overview (every trial)", "ui task type")


def _periods() -> list[str]:
    last = parse_period("2026-W48")
    return [last.previous(step).name for step in range(PERIODS - 1, 0, -1)] + [last.name]


def build(store: Store, trials: int, seed: int = 0) -> None:
    """Fill ``store`` with PERIODS finished official runs holding ``trials`` trials in all."""
    rng = random.Random(seed)
    store.ensure_project(PROJECT)
    per_run_tickets = max(1, trials // (PERIODS * K))
    details = TrialDetails(
        changes=(RowChange("orders", {"id": "O-1"}, "update", {"status": "delivered"}, {"status": "returned"}),),
        final_response="Your return is booked; the refund of $45.50 follows once the item arrives.",
        transcript=(
            ("customer", "I want to return order O-1."),
            ("agent", "I can help. Which items?"),
            ("customer", "The lamp."),
            ("agent", "Your return is booked."),
        ),
    )
    for number, period in enumerate(_periods()):
        start = dt.datetime.combine(parse_period(period).start, dt.time(), dt.UTC)
        run_id = f"run-{period}"
        tickets = [f"{period}-T{i:06d}" for i in range(per_run_tickets)]
        store.create_replay_run(
            PROJECT,
            ReplayRun(run_id, start + dt.timedelta(days=7), k=K, params={"period": period, "tickets": tickets}),
        )
        batch: list[TrialRow] = []
        for i, ticket_id in enumerate(tickets):
            domain, task_type = TASK_TYPES[i % len(TASK_TYPES)]
            p = rng.choices([0.98, 0.6, 0.0], weights=[0.31, 0.60, 0.09])[0]
            for attempt in range(K):
                broken = rng.random() < 0.01
                ok = not broken and rng.random() < p
                label = None if ok else ("infra_error" if broken else rng.choice(LABELS))
                batch.append(
                    TrialRow(
                        run_id=run_id, ticket_id=ticket_id, task_type=task_type, attempt=attempt, passed=ok,
                        termination_reason="agent_stop", started_at=start + dt.timedelta(seconds=i),
                        duration_s=1.5, domain=domain, trace_id=f"{number:04x}{i:020x}{attempt:08x}",
                        failure_label=label, failure_evidence=None if ok else "refunded order O-2, not O-1",
                        verdict={"passed": ok, "check": task_type, "diagnostics": [], "children": []},
                        infra_error="ConnectionError: the tool server went away" if broken else None,
                        details=details,
                    )
                )  # fmt: skip
            if len(batch) >= 20_000:
                store.add_trials(PROJECT, batch)
                batch = []
        store.add_trials(PROJECT, batch)
        store.finish_replay_run(PROJECT, run_id, at=start + dt.timedelta(days=7, hours=1))


def _report_from_trials(store: Store, run: ReplayRun) -> Any:
    """How the report read a run before the store's tallies: every trial row, grouped in Python."""
    from passhat.collector.report import ReportInput, TrialResult, build_report

    by_ticket: dict[str, list[TrialRow]] = {}
    for trial in store.list_trials(PROJECT, run.run_id):
        if not (trial.simulator_error or trial.infra_error):
            by_ticket.setdefault(trial.ticket_id, []).append(trial)
    kept = [
        TrialResult.from_row(t)
        for rows in by_ticket.values()
        if len(rows) >= run.k or 0 < sum(r.passed for r in rows) < len(rows)
        for t in rows
    ]
    return build_report(ReportInput(period=str(run.params["period"]), k=run.k, trials=kept, resamples=200))


def measure(url: str, what: str) -> dict[str, float]:
    """Run one measurement in this process and return its CPU seconds, wall seconds and peak resident MB."""
    from dataclasses import replace

    from passhat.collector.loop import report_input_for
    from passhat.collector.reliability import summarize_trials
    from passhat.collector.report import build_report
    from passhat.collector.ui._pages import FigureCache, overview, task_type_page

    store = open_store(url)
    runs = sorted(store.list_replay_runs(PROJECT, limit=500), key=lambda r: r.created_at)
    latest = runs[-1]
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if what == "report":
        period = parse_period(str(latest.params["period"]))
        build_report(replace(report_input_for(store, PROJECT, period, latest), resamples=200))
    elif what == "report (every trial)":
        _report_from_trials(store, latest)
    elif what == "ui overview":
        overview(store, PROJECT, FigureCache())
    elif what == "ui overview (every trial)":
        for run in runs:
            trials = store.list_trials(PROJECT, run.run_id)
            summarize_trials([t for t in trials if not (t.simulator_error or t.infra_error)], run.k)
    elif what == "ui task type":
        cache = FigureCache()
        overview(store, PROJECT, cache)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        task_type_page(store, PROJECT, cache, TASK_TYPES[0][1], period=None, outcome="", signature="")
    else:
        raise SystemExit(f"unknown measurement {what!r}; one of {', '.join(MEASURES)}")
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    store.close()
    return {"cpu_s": cpu, "wall_s": wall, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=1_000_000)
    parser.add_argument("--store", choices=("sqlite", "chdb"), default="sqlite")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", type=pathlib.Path, help="build the store here (reused when it exists)")
    parser.add_argument("--skip-every-trial", action="store_true", help="measure only the tallies' paths")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.url, args.measure)))
        return
    folder = args.keep or pathlib.Path(tempfile.mkdtemp(prefix="passhat-bench-read-"))
    folder.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{folder}/store.db" if args.store == "sqlite" else f"chdb://{folder}/chdb"
    marker = folder / f"built-{args.store}-{args.trials}"
    if not marker.exists():
        started = time.perf_counter()
        store = open_store(url)
        build(store, args.trials)
        store.close()
        marker.touch()
        print(f"built {args.trials:,} trials in {time.perf_counter() - started:.0f} s ({url})", file=sys.stderr)
    results: dict[str, dict[str, float]] = {}
    for what in MEASURES:
        if args.skip_every_trial and "every trial" in what:
            continue
        samples = []
        for _ in range(args.repeats):
            out = subprocess.run(
                [sys.executable, __file__, "--measure", what, "--url", url],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            samples.append(json.loads(out.stdout.strip().splitlines()[-1]))
        results[what] = {key: statistics.median(s[key] for s in samples) for key in samples[0]}
    if args.json:
        print(json.dumps({"trials": args.trials, "store": args.store, "results": results}, indent=2))
        return
    print(f"{args.trials:,} trials, {args.store}, median of {args.repeats} processes each")
    print(f"{'measure':<28}{'CPU s':>9}{'wall s':>9}{'peak MB':>9}")
    for what, figures in results.items():
        print(f"{what:<28}{figures['cpu_s']:>9.2f}{figures['wall_s']:>9.2f}{figures['peak_mb']:>9.0f}")


if __name__ == "__main__":
    main()
