"""Two agents on the same tickets: the paired difference in pass@1 and pass^k, with a paired interval.

Each ticket was replayed by both agents, so the difference is estimated ticket by ticket (candidate minus
baseline, each side's unbiased per-ticket estimate from all its trials) and its spread is the spread of those
differences: the ticket's own difficulty cancels, which makes the interval far tighter than comparing two
independent samples (two weeks). The interval is the normal one on the mean difference; with fewer than
`MIN_PAIRED_TICKETS` tickets it is not given (too few pairs to trust the normal approximation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from passhat.collector.reliability._estimators import ArrayLike, as_counts, pass_at_k_array, pass_hat_k_array

MIN_PAIRED_TICKETS = 5


@dataclass(frozen=True)
class PairedDifference:
    """Candidate minus baseline over the same tickets, with a two-sided interval at ``level``."""

    tickets: int
    baseline: float
    candidate: float
    difference: float
    interval: tuple[float, float] | None
    level: float

    @property
    def credibly_lower(self) -> bool:
        """The candidate is worse beyond doubt at this level: the whole interval lies below zero."""
        return self.interval is not None and self.interval[1] < 0.0

    @property
    def credibly_higher(self) -> bool:
        """The candidate is better beyond doubt at this level: the whole interval lies above zero."""
        return self.interval is not None and self.interval[0] > 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "tickets": self.tickets,
            "baseline": self.baseline,
            "candidate": self.candidate,
            "difference": self.difference,
            "interval": None if self.interval is None else list(self.interval),
            "level": self.level,
            "credibly_lower": self.credibly_lower,
            "credibly_higher": self.credibly_higher,
        }


def _paired(base: np.ndarray, cand: np.ndarray, level: float) -> PairedDifference:
    diffs = cand - base
    size = int(diffs.size)
    mean = float(diffs.mean())
    interval: tuple[float, float] | None = None
    if size >= MIN_PAIRED_TICKETS:
        z = NormalDist().inv_cdf(0.5 + level / 2.0)
        spread = float(diffs.std(ddof=1)) / math.sqrt(size)
        interval = (max(-1.0, mean - z * spread), min(1.0, mean + z * spread))
    return PairedDifference(size, float(base.mean()), float(cand.mean()), mean, interval, level)


def paired_difference(
    baseline_n: ArrayLike,
    baseline_c: ArrayLike,
    candidate_n: ArrayLike,
    candidate_c: ArrayLike,
    k: int,
    *,
    level: float = 0.95,
    curtailed: bool = False,
) -> tuple[PairedDifference, PairedDifference]:
    """(pass@1, pass^k) differences, candidate minus baseline; ticket i of both sides is the same ticket.

    ``curtailed=True`` accepts tickets with fewer than k trials whose pass^k is settled (one pass and one fail)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"the interval level must lie strictly between 0 and 1, got {level}")
    bn, bc = as_counts(baseline_n, baseline_c)
    cn, cc = as_counts(candidate_n, candidate_c)
    if bn.size != cn.size:
        raise ValueError(f"paired tickets: {bn.size} baseline tickets but {cn.size} candidate tickets")
    if bn.size == 0:
        raise ValueError("no ticket was replayed by both agents: nothing to compare")
    at_1 = _paired(pass_at_k_array(bn, bc, 1), pass_at_k_array(cn, cc, 1), level)
    hat_k = _paired(
        pass_hat_k_array(bn, bc, k, curtailed=curtailed), pass_hat_k_array(cn, cc, k, curtailed=curtailed), level
    )
    return at_1, hat_k


def unpaired_difference(
    baseline: tuple[float, float, float], candidate: tuple[float, float, float]
) -> tuple[float, tuple[float, float]]:
    """Candidate minus baseline for two independent samples (two runs on different tickets), each given as
    (value, low, high) of its own interval: Newcombe's hybrid score interval, which combines the two intervals
    (Newcombe 1998, method 10; with Wilson bounds it keeps its level where a normal interval on the difference
    does not). Far wider than a paired difference on shared tickets."""
    b, b_low, b_high = baseline
    c, c_low, c_high = candidate
    for name, (v, lo, hi) in (("baseline", baseline), ("candidate", candidate)):
        if not 0.0 <= lo <= v <= hi <= 1.0:
            raise ValueError(f"the {name} must be (value, low, high) with 0 <= low <= value <= high <= 1")
    difference = c - b
    low = difference - math.sqrt((c - c_low) ** 2 + (b_high - b) ** 2)
    high = difference + math.sqrt((c_high - c) ** 2 + (b - b_low) ** 2)
    return difference, (max(-1.0, low), min(1.0, high))
