"""What the UI's figures read of one run, computed once from its per-ticket tallies: the overview's per task type
figures, the headlines of each task type, of every ticket pooled and of each domain pooled, failures by
signature and the settled (trials, passes) counts the mixture is fitted to.

A finished run's digest never changes; `passhat.collector.ui._kept` keeps it in the store, so the first overview
after a start reads a few kilobytes per run instead of every ticket's tally. Headlines weighted by a period's
traffic are combined from the task types' curves when read (`_reliability.RunViews`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from passhat.collector.reliability import HeadlineCurve, headline_curve, settled
from passhat.collector.store import ReplayRun, RunParams, TicketTally
from passhat.collector.ui._figures import TaskTypeFigures, figures_of_run

ALL = "All task types"
UNCLASSIFIED = "unclassified"


@dataclass(frozen=True)
class Headline:
    """One scope's figures at the run's k (``curve.at(k)``), the curve they sit on, and what was left out."""

    scope: str
    k: int
    curve: HeadlineCurve
    left_out: int  # tickets whose pass^k is not settled yet
    weighting: str = "tickets"  # "tickets": every ticket counts once; "traffic": task types weighted by traffic

    @property
    def pass_at_k(self) -> tuple[float, float, float]:
        return self.curve.at(self.k)[0]

    @property
    def pass_hat_k(self) -> tuple[float, float, float]:
        return self.curve.at(self.k)[1]


def headline_of(scope: str, run: ReplayRun, tallies: Sequence[TicketTally]) -> Headline | None:
    """The headline of some tickets of a run, or None when none of them is settled at the run's k."""
    counted = [t for t in tallies if t.trials > 0]
    if not counted:
        return None
    n = np.array([t.trials for t in counted], dtype=np.int64)
    c = np.array([t.passes for t in counted], dtype=np.int64)
    keep = settled(n, c, run.k)
    if not keep.any():
        return None
    kept = [t for t, ok in zip(counted, keep, strict=True) if ok]
    min_trials = RunParams.of(run).design.min_trials
    first_n = first_c = None
    if min_trials is not None:
        first_n = [min(t.trials, min_trials) for t in kept]
        first_c = [t.passes_in_first(min_trials) for t in kept]
    curve = headline_curve(n[keep], c[keep], run.k, first_n=first_n, first_c=first_c)
    return Headline(scope, run.k, curve, len(counted) - len(kept))


@dataclass(frozen=True)
class RunDigest:
    """Everything the overview, the seed's views and the side by side read of one run, but its tickets."""

    figures: dict[str, TaskTypeFigures]  # per task type, as the overview's table shows them
    names: tuple[str, ...]  # task types with tallies (sorted), with or without a settled ticket
    failures: dict[str | None, Counter[str]]  # by signature, per task type; None: all task types
    settled_counts: dict[str | None, Counter[tuple[int, int]]]  # settled tickets by (trials, passes)
    task_types: dict[str, Headline]  # the task types with a settled ticket
    pooled: Headline | None  # every ticket of the run counted once
    domains: dict[str, tuple[frozenset[str], Headline | None]]  # each domain's task types and pooled headline
    trials: int  # the run's trials the digest was computed from, harness errors included


def digest_of(run: ReplayRun, tallies: Sequence[TicketTally]) -> RunDigest:
    """A run's digest from its tallies (one pass over them; a run can hold 50,000 tickets)."""
    by_type: dict[str, list[TicketTally]] = {}
    by_domain: dict[str, list[TicketTally]] = {}
    failures: dict[str | None, Counter[str]] = {None: Counter()}
    settled_counts: dict[str | None, Counter[tuple[int, int]]] = {None: Counter()}
    k, total = run.k, 0
    for tally in tallies:
        name = tally.task_type
        group = by_type.get(name)
        if group is None:
            group = by_type[name] = []
            failures[name], settled_counts[name] = Counter(), Counter()
        group.append(tally)
        by_domain.setdefault(tally.domain or "unknown", []).append(tally)
        trials, passes = tally.trials, tally.passes
        total += trials + tally.harness_errors
        if trials > 0 and (trials >= k or 0 < passes < trials):
            settled_counts[name][trials, passes] += 1
        failed = trials - passes
        if failed > 0:
            mine = failures[name]
            for label, count in tally.signatures.items():
                mine[label] += count
                failed -= count
            if failed > 0:
                mine[UNCLASSIFIED] += failed
    for name in by_type:
        failures[None].update(failures[name])
        settled_counts[None].update(settled_counts[name])
    per_type = {name: headline_of(name, run, members) for name, members in by_type.items()}
    return RunDigest(
        figures=figures_of_run(run, tallies),
        names=tuple(sorted(by_type)),
        failures=failures,
        settled_counts=settled_counts,
        task_types={name: h for name, h in per_type.items() if h is not None},
        pooled=headline_of(ALL, run, tallies),
        domains={
            domain: (frozenset(t.task_type for t in members), headline_of(domain, run, members))
            for domain, members in sorted(by_domain.items())
        },
        trials=total,
    )
