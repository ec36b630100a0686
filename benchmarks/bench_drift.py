"""Benchmark: the drop test's false-alarm rate, its power, and its cost.

Simulated weeks: each ticket's per-trial success probability comes from the seed's mixture (31% of tickets
p = 0.98, 60% p = 0.60, 9% p = 0), 20 trials per ticket, pass^5. "No change" weeks draw the current period from the
same mixture as the 4-period baseline; "drop" weeks move reliable tickets to the middle component.

Run: .venv/bin/python benchmarks/bench_drift.py [--weeks 2000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np

from passhat.collector.reliability import detect_drop, simulate_alarm_rate

SEED = [(0.31, 0.98), (0.60, 0.60), (0.09, 0.0)]
DROPS = {
    "pass^5 0.327 -> 0.203 (-0.12)": [(0.16, 0.98), (0.75, 0.60), (0.09, 0.0)],
    "pass^5 0.327 -> 0.120 (-0.21)": [(0.06, 0.98), (0.85, 0.60), (0.09, 0.0)],
}
SIZES = [(60, 240), (100, 400)]  # (tickets this period, tickets in the 4 baseline periods)


def binomial_ci(rate: float, n: int) -> str:
    half = 1.96 * math.sqrt(max(rate * (1 - rate), 1e-12) / n)
    return f"[{max(rate - half, 0):.3f}, {min(rate + half, 1):.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weeks", type=int, default=2000, help="simulated no-change weeks per setting")
    parser.add_argument("--power-weeks", type=int, default=300, help="simulated drop weeks per setting")
    parser.add_argument("--repeats", type=int, default=5, help="timing repeats")
    args = parser.parse_args()
    common = {"trials": 20, "k": 5, "permutations": 999}

    print("false-alarm rate (no real change):")
    for confidence in (0.95, 0.99):
        for tickets, baseline in SIZES:
            rate = simulate_alarm_rate(
                SEED, SEED, tickets=tickets, baseline_tickets=baseline, weeks=args.weeks, confidence=confidence,
                seed=1, **common,
            )  # fmt: skip
            print(
                f"  confidence {confidence}: {tickets} vs {baseline} tickets: {rate:.4f} "
                f"95% CI {binomial_ci(rate, args.weeks)} over {args.weeks} weeks (level {1 - confidence:.2f})"
            )

    print("power (share of drop weeks detected), confidence 0.99:")
    for label, mixture in DROPS.items():
        for tickets, baseline in SIZES:
            power = simulate_alarm_rate(
                SEED, mixture, tickets=tickets, baseline_tickets=baseline, weeks=args.power_weeks, confidence=0.99,
                seed=2, **common,
            )  # fmt: skip
            print(f"  {label}: {tickets} vs {baseline} tickets: {power:.3f} over {args.power_weeks} weeks")

    print("cost of one test (2,000 permutations):")
    rng = np.random.default_rng(3)
    for tickets, baseline in [(100, 400), (1000, 4000)]:
        cur_c, base_c = rng.binomial(20, 0.7, tickets), rng.binomial(20, 0.7, baseline)
        times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            detect_drop(np.full(tickets, 20), cur_c, np.full(baseline, 20), base_c, 5, permutations=2000, seed=0)
            times.append(time.perf_counter() - started)
        print(f"  {tickets} vs {baseline} tickets: median {1000 * statistics.median(times):.1f} ms")


if __name__ == "__main__":
    main()
