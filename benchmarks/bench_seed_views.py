"""The seed's views (overview headlines, curve, mixture, traffic, signature shares; a task type's) at a million
trials: CPU time of the first computation after a start and of a warm page, from the store's per-ticket tallies.

Run:  .venv/bin/python benchmarks/bench_seed_views.py [--tickets 6250] [--task-types 50] [--periods 8] [--k 20]

Load: `--periods` official runs of `--tickets` tickets each with k trials (by default 8 x 6,250 x 20 = a million
trials), per-ticket success drawn from the seed's mixture (31% at 0.99, 60% at 0.58, 9% never), as the store's
`TicketTally` rows; a week of production traffic. Times the UI's `overview_views` and a task type's views through
the same `ViewCache` the pages use: the first call (one pass over each period's tallies, the newest run's
headlines and its mixture fit with 60 bootstrap resamples) and the median of 7 warm calls. The HTTP and template
times of the same pages are in `bench_ui.py`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import time

import numpy as np

from passhat.collector.store import ReplayRun, TicketTally
from passhat.collector.ui._digest import RunDigest, digest_of
from passhat.collector.ui._figures import History
from passhat.collector.ui._reliability import (
    PeriodTraffic,
    RunViews,
    ViewCache,
    overview_views,
    period_traffic,
    signature_table,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tickets", type=int, default=6250)
    parser.add_argument("--task-types", type=int, default=50)
    parser.add_argument("--periods", type=int, default=8)
    parser.add_argument("--k", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    now = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
    runs, tallies = {}, {}
    for i in range(args.periods):
        period = f"2026-W{30 + i}"
        p = rng.choice([0.99, 0.58, 0.0], size=args.tickets, p=[0.31, 0.60, 0.09])
        c = rng.binomial(args.k, p)
        runs[period] = ReplayRun(f"run-{i}", now, k=args.k, params={"period": period}, status="finished")
        tallies[period] = [
            TicketTally(f"domain-{t % 5}", f"type-{t % args.task_types}", f"T{i}-{t}", args.k, int(c[t]),
                        (1 << args.k) - 1, 0, 0, {"wrong_entity": args.k - int(c[t])} if c[t] < args.k else {})
            for t in range(args.tickets)
        ]  # fmt: skip
    hist = History(list(runs), runs, {}, tallies)
    days = [
        (dt.date(2026, 11, 1) + dt.timedelta(days=d), f"type-{t}", 40) for d in range(7) for t in range(args.task_types)
    ]

    def traffic(run: ReplayRun) -> PeriodTraffic:
        return period_traffic(run.params["period"], days)

    cache = ViewCache()
    digests: dict[str, RunDigest] = {}  # computed on first use, as a run not kept in the store yet

    def of(period: str) -> RunViews:
        if period not in digests:
            digests[period] = digest_of(runs[period], tallies[period])
        return cache.get("bench", hist.runs[period], digests[period])

    def task_type() -> None:
        latest = of(hist.periods[-1])
        latest.task_types.get("type-3")
        latest.mixture("type-3")
        signature_table({p: of(p) for p in hist.periods}, "type-3")

    trials = args.periods * args.tickets * args.k
    print(f"{trials:,} trials: {args.periods} periods x {args.tickets:,} tickets x k = {args.k}")
    for name, call in (("overview", lambda: overview_views(hist, traffic, of)), ("task type", task_type)):
        times = []
        for _ in range(8):
            start = time.process_time()
            call()
            times.append(time.process_time() - start)
        warm = 1000 * statistics.median(times[1:])
        print(f"{name:>10}: first {1000 * times[0]:7.1f} ms CPU, warm median {warm:6.1f} ms")


if __name__ == "__main__":
    main()
