"""Benchmark: building and writing a weekly report at the demo's scale and at ten times its sample.

Demo scale: 15 task types x 20 sampled tickets x k = 20 trials (6,000 trials), a week of traffic. Large: 15 task
types x 200 tickets x 20 trials (60,000 trials). Each run builds the report (1,000 bootstrap resamples, mixture
fits for the curves to k = 50) and writes report.html / .json / .md. The demo has 3 minutes for its whole loop,
so the report should take a few seconds at most.

Run: .venv/bin/python benchmarks/bench_report.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import statistics
import tempfile
import time

from passhat.collector.report import DailyTraffic, ReportInput, TrialResult, build_report, write_report

TASK_TYPES = 15
TRIALS = 20
LABELS = ["tool_usage.precondition", "tool_usage.empty_lookup", "wrong_entity", "unresolved", "no_write"]


def make_input(tickets_per_type: int, seed: int = 0) -> ReportInput:
    rng = random.Random(seed)
    trials: list[TrialResult] = []
    traffic: list[DailyTraffic] = []
    monday = dt.date(2026, 11, 23)
    for t in range(TASK_TYPES):
        domain, task_type = f"domain{t % 3}", f"type{t:02d}"
        for i in range(tickets_per_type):
            p = rng.choices([0.99, 0.6, 0.0], weights=[0.31, 0.60, 0.09])[0]
            for attempt in range(1, TRIALS + 1):
                ok = rng.random() < p
                trials.append(
                    TrialResult(domain, task_type, f"{task_type}-{i}", attempt, ok, None if ok else rng.choice(LABELS))
                )
        volume = int(2000 / (t + 1))  # skewed traffic, as in the demo
        traffic += [DailyTraffic(domain, task_type, monday + dt.timedelta(days=d), volume) for d in range(7)]
    return ReportInput(period="2026-W48", k=TRIALS, trials=trials, traffic=traffic, agent="benchmark")


def run(report_input: ReportInput, out: str) -> tuple[float, float]:
    start = time.perf_counter()
    report = build_report(report_input)
    built = time.perf_counter()
    write_report(report, out)
    return built - start, time.perf_counter() - built


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as out:
        for label, tickets in (("demo scale", 20), ("10x sample", 200)):
            report_input = make_input(tickets)
            run(report_input, out)  # warm-up
            builds, writes = zip(*(run(report_input, out) for _ in range(args.repeats)), strict=True)
            print(
                f"bench_report [{label}]: {TASK_TYPES} task types x {tickets} tickets x {TRIALS} trials "
                f"({len(report_input.trials):,} trials): build median {statistics.median(builds):.2f} s "
                f"(min {min(builds):.2f}), write median {statistics.median(writes):.3f} s over {args.repeats} runs"
            )


if __name__ == "__main__":
    main()
