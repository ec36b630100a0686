"""Shares of failed trials by signature, with counts and intervals: comparable across periods of any size."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from passhat.collector.reliability._intervals import wilson_bounds


@dataclass(frozen=True)
class SignatureShare:
    """One signature's failed trials and their share of all failed trials, with a Wilson interval."""

    signature: str
    failures: int
    total: int
    share: float
    share_ci: tuple[float, float]


def signature_shares(counts: Mapping[str, int], *, level: float = 0.95) -> list[SignatureShare]:
    """Each signature's share of the failed trials counted (most frequent first).

    The interval treats failed trials as independent draws of a signature; trials of one ticket tend to fail
    the same way, so read it as a lower bound on the uncertainty.
    """
    kept = {name: int(v) for name, v in counts.items() if v > 0}
    total = sum(kept.values())
    if total == 0:
        return []
    names = sorted(kept, key=lambda name: (-kept[name], name))
    lows, highs = wilson_bounds(np.array([kept[n] for n in names], dtype=np.float64), np.full(len(names), total), level)
    return [
        SignatureShare(name, kept[name], total, kept[name] / total, (float(lo), float(hi)))
        for name, lo, hi in zip(names, lows, highs, strict=True)
    ]
