"""Benchmark: trials per ticket of the fixed and the curtailed replay design at k = 20, same estimates.

Curtailed replay stops a ticket's attempts once one passed and one failed (its pass^k = 0 and pass@k = 1 are then
settled), after at least --min-trials attempts. Two populations:

1. The seed's mixture (fitted to the paper's pass@1 = 0.654, pass@20 = 0.911, pass^20 = 0.253: 31% of tickets at
   p = 0.99, 60% at p = 0.58, 9% at p = 0), simulated for --tickets tickets; every ticket's 20 outcomes are
   drawn once and both designs read the same outcomes.
2. The retail domain with the ReferenceAgent (an offline simulation, shipped failure rates), every task type,
   --scenarios scenarios each: `run_trials` of the fixed design and of the curtailed design on the same seeds.

For each, it prints trials per ticket of both designs, the saving, and checks that every ticket's pass^k and
pass@k are identical between the designs. Target: at least 2x fewer trials on the seed's mixture.

Run: .venv/bin/python benchmarks/bench_replay_cost.py [--tickets 100000] [--scenarios 4] [--min-trials 2]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import time

import numpy as np

from passhat.collector.reliability import (
    AggregatePoint,
    fit_mixture_to_points,
    pass_at_k_array,
    pass_hat_k_array,
)
from passhat.sandbox import Curtailment, FlawConfig, ReferenceAgent, RunConfig, Sandbox, TrialResult, run_trials

K = 20
SEED_POINTS = ["pass@1=0.654", "pass@20=0.911", "pass^20=0.253"]


def curtailed_counts(outcomes: np.ndarray, min_trials: int) -> tuple[np.ndarray, np.ndarray]:
    """(trials run, passes) per ticket under the curtailed design, from each ticket's full row of outcomes."""
    k = outcomes.shape[1]
    passes = np.cumsum(outcomes, axis=1)
    runs = np.arange(1, k + 1)[None, :]
    mixed = (passes > 0) & (passes < runs) & (runs >= min_trials)
    stop = np.where(mixed.any(axis=1), mixed.argmax(axis=1) + 1, k)
    return stop, passes[np.arange(outcomes.shape[0]), stop - 1]


def seed_mixture(tickets: int, min_trials: int, seed: int) -> None:
    fit = fit_mixture_to_points([AggregatePoint.parse(p) for p in SEED_POINTS])
    weights, ps = fit.mixture.weights, fit.mixture.probabilities
    rng = np.random.default_rng(seed)
    p = ps[rng.choice(ps.size, p=weights, size=tickets)]
    outcomes = rng.random((tickets, K)) < p[:, None]
    started = time.perf_counter()
    n_cur, c_cur = curtailed_counts(outcomes, min_trials)
    full_c = outcomes.sum(axis=1)
    same_hat = np.array_equal(pass_hat_k_array(K, full_c, K), pass_hat_k_array(n_cur, c_cur, K, curtailed=True))
    same_at = np.array_equal(pass_at_k_array(K, full_c, K), pass_at_k_array(n_cur, c_cur, K, curtailed=True))
    mixture = ", ".join(f"{100 * c.weight:.0f}% p={c.p:.2f}" for c in fit.mixture.components)
    print(f"seed's mixture ({mixture}), {tickets} simulated tickets, k = {K}, min_trials = {min_trials}")
    print(f"  trials per ticket     fixed {K:.2f}   curtailed {n_cur.mean():.2f}   ({K / n_cur.mean():.2f}x fewer)")
    print(f"  identical per ticket  pass^{K} {same_hat}   pass@{K} {same_at}   ({time.perf_counter() - started:.2f} s)")


def _counts(results: list[TrialResult]) -> dict[str, tuple[int, int]]:
    """(usable trials, passes) per ticket."""
    outcomes: dict[str, list[bool]] = collections.defaultdict(list)
    for r in results:
        if r.record.simulator_error is None and r.record.infra_error is None:
            outcomes[r.scenario.scenario_id].append(r.passed)
    return {t: (len(v), sum(v)) for t, v in outcomes.items()}


def retail(scenarios: int, min_trials: int, parallel: int) -> None:
    with Sandbox("retail") as sandbox:
        chosen = sandbox.scenarios(count=scenarios)
        factory = ReferenceAgent.factory(FlawConfig.default())
        started = time.perf_counter()
        config = RunConfig(parallel=parallel)
        full = asyncio.run(run_trials(sandbox, chosen, K, factory, config=config))
        full_s = time.perf_counter() - started
        started = time.perf_counter()
        curtailment = Curtailment(min_trials=min_trials)
        cut = asyncio.run(run_trials(sandbox, chosen, K, factory, config=config, curtailment=curtailment))
        cut_s = time.perf_counter() - started
    a, b = _counts(full), _counts(cut)
    tickets = sorted(a)
    n_a, c_a = np.array([a[t][0] for t in tickets]), np.array([a[t][1] for t in tickets])
    n_b, c_b = np.array([b[t][0] for t in tickets]), np.array([b[t][1] for t in tickets])
    same_hat = np.array_equal(pass_hat_k_array(n_a, c_a, K), pass_hat_k_array(n_b, c_b, K, curtailed=True))
    same_at = np.array_equal(pass_at_k_array(n_a, c_a, K), pass_at_k_array(n_b, c_b, K, curtailed=True))
    per_full, per_cut = len(full) / len(chosen), len(cut) / len(chosen)
    print(f"retail, ReferenceAgent (simulation, shipped failure rates), {len(chosen)} tickets, k = {K}")
    print(f"  trials per ticket     fixed {per_full:.2f}   curtailed {per_cut:.2f}   ({per_full / per_cut:.2f}x fewer)")
    print(f"  identical per ticket  pass^{K} {same_hat}   pass@{K} {same_at}")
    print(f"  wall clock            fixed {full_s:.1f} s   curtailed {cut_s:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tickets", type=int, default=100_000, help="simulated tickets from the seed's mixture")
    parser.add_argument("--scenarios", type=int, default=4, help="retail scenarios per task type (0: skip retail)")
    parser.add_argument("--min-trials", type=int, default=2)
    parser.add_argument("--parallel", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    seed_mixture(args.tickets, args.min_trials, args.seed)
    if args.scenarios > 0:
        retail(args.scenarios, args.min_trials, args.parallel)


if __name__ == "__main__":
    main()
