"""Benchmark: reliability statistics for 100,000 tickets x 20 trials.

Per-task-type pass@1 / pass@k / pass^k with cluster-bootstrap CIs (1,000 resamples) over 20 task types,
the overall curve, and a mixture fit (BIC over 1..4 components). Target: under 2 seconds on a 2-core machine.

Run: .venv/bin/python benchmarks/bench_reliability.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from passhat.collector.reliability import fit_mixture, reliability_curve, summarize_task_type

TICKETS = 100_000
TRIALS = 20
TASK_TYPES = 20


def make_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    task_type = rng.integers(0, TASK_TYPES, size=TICKETS)
    p = rng.choice([0.99, 0.58, 0.0], p=[0.31, 0.60, 0.09], size=TICKETS)
    return task_type, np.full(TICKETS, TRIALS), rng.binomial(TRIALS, p)


def pipeline(task_type: np.ndarray, n: np.ndarray, c: np.ndarray) -> None:
    for t in range(TASK_TYPES):
        mask = task_type == t
        summarize_task_type(n[mask], c[mask], TRIALS, resamples=1000, seed=t)
    mixture = fit_mixture(n, c)
    reliability_curve(n, c, 50, mixture=mixture)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    data = make_data()
    pipeline(*data)  # warm-up: imports, caches
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        pipeline(*data)
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    print(
        f"bench_reliability: {TICKETS:,} tickets x {TRIALS} trials, {TASK_TYPES} task types, 1,000 bootstrap "
        f"resamples each, mixture fit + 50-point curve: median {median:.3f} s over {args.repeats} runs "
        f"(min {min(times):.3f} s, max {max(times):.3f} s); target < 2 s: {'met' if median < 2 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
