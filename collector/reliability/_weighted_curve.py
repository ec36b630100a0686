"""One pass@k / pass^k curve with its band over strata (task types) of known weights (their daily traffic).

The headline figure at k, a domain's figure at k and the curve's band at k are all read from `weighted_curve`, so
the band drawn at k is the interval printed for k: where every stratum's trials reach, each value gets the
stratified interval (`stratified_interval`: task types the strata, their weights known) of the strata's per-ticket
means at that k. One stratum of weight 1 gives its own continuity-corrected Wilson interval, the one
`curve_band` and `summarize_task_type` give. Beyond the trials, the band keeps the interval at the last measured k
and follows the weighted decay of the strata's own bands (the spread of the mixtures their data do not reject).

Averaging the strata's bands instead (as if their errors ran together) is far wider than the stratified interval
the headline prints: at k = 20 on six task types it drew 9-50% around a headline of 16-36%.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from passhat.collector.reliability._curves import Curve, CurveBand
from passhat.collector.reliability._estimators import FloatArray
from passhat.collector.reliability._intervals import Interval, stratified_interval


@dataclass(frozen=True)
class Stratum:
    """One task type as the weighted curve sees it: its own curve and band, its tickets and its weight."""

    curve: Curve
    band: CurveBand
    tickets: int
    weight: float


@dataclass(frozen=True)
class CurvePoint:
    """The curve's values at one k with their intervals (the band there) and the tickets behind them."""

    k: int
    pass_at_k: float
    pass_at_k_ci: Interval
    pass_hat_k: float
    pass_hat_k_ci: Interval
    extrapolated: bool
    tickets: int


@dataclass(frozen=True)
class WeightedCurve:
    """The weighted curve, its band, and the tickets behind it; `at(k)` is what a headline prints for k."""

    curve: Curve
    band: CurveBand
    tickets: int

    def at(self, k: int) -> CurvePoint:
        if not 1 <= k <= len(self.curve.k):
            raise ValueError(f"k must lie between 1 and {len(self.curve.k)}, got {k}")
        i = k - 1
        return CurvePoint(
            k=k,
            pass_at_k=float(self.curve.pass_at_k[i]),
            pass_at_k_ci=(float(self.band.pass_at_k_low[i]), float(self.band.pass_at_k_high[i])),
            pass_hat_k=float(self.curve.pass_hat_k[i]),
            pass_hat_k_ci=(float(self.band.pass_hat_k_low[i]), float(self.band.pass_hat_k_high[i])),
            extrapolated=bool(self.curve.extrapolated[i]),
            tickets=self.tickets,
        )


def _stack(strata: Sequence[Stratum], name: str, *, band: bool = False) -> FloatArray:
    rows = [np.asarray(getattr(s.band if band else s.curve, name), dtype=np.float64) for s in strata]
    stacked: FloatArray = np.vstack(rows)
    return stacked


def _decay(lows: FloatArray, weights: FloatArray, seam: int) -> FloatArray:
    """The weighted bound of the strata relative to its value at the last measured k (1 where it is zero)."""
    mixed: FloatArray = weights @ lows
    base = float(mixed[seam])
    if base <= 0.0:
        return np.ones(mixed.size - seam - 1)
    ratio: FloatArray = mixed[seam + 1 :] / base
    return ratio


def weighted_curve(strata: Sequence[Stratum], level: float = 0.95) -> WeightedCurve:
    """The strata's curves weighted by their weights, with a band whose value at each k is the headline's interval.

    Every stratum's curve and band must cover the same k = 1..K. Where every stratum is measured (not
    extrapolated) the band at k is the stratified interval of the strata's values at k; beyond, it is scaled from
    the interval at the last measured k by the weighted decay of the strata's own band bounds, and widened where
    needed so that it always contains the curve.
    """
    if not strata:
        raise ValueError("a weighted curve needs at least one stratum")
    ks = strata[0].curve.k
    if any(len(s.curve.k) != len(ks) or len(s.band.k) != len(ks) for s in strata):
        raise ValueError("every stratum's curve and band must cover the same k")
    weights = np.array([s.weight for s in strata], dtype=np.float64)
    tickets = np.array([s.tickets for s in strata], dtype=np.float64)
    if np.any(weights < 0) or weights.sum() <= 0 or np.any(tickets <= 0):
        raise ValueError("strata need tickets, and weights that are non-negative and not all zero")
    weights = weights / weights.sum()
    at_k, hat_k = _stack(strata, "pass_at_k"), _stack(strata, "pass_hat_k")
    at = np.clip(weights @ at_k, 0.0, 1.0)
    hat = np.clip(weights @ hat_k, 0.0, 1.0)
    extrapolated = np.logical_or.reduce([np.asarray(s.curve.extrapolated, dtype=bool) for s in strata])
    measured = int(np.argmax(extrapolated)) if extrapolated.any() else len(ks)
    at_low, at_high = np.zeros(len(ks)), np.ones(len(ks))
    hat_low, hat_high = np.zeros(len(ks)), np.ones(len(ks))
    for i in range(measured):
        _, (at_low[i], at_high[i]), _ = stratified_interval(at_k[:, i], tickets, weights, level)
        _, (hat_low[i], hat_high[i]), _ = stratified_interval(hat_k[:, i], tickets, weights, level)
    if 0 < measured < len(ks):
        seam = measured - 1
        hat_low[measured:] = hat_low[seam] * _decay(_stack(strata, "pass_hat_k_low", band=True), weights, seam)
        hat_high[measured:] = hat_high[seam] * _decay(_stack(strata, "pass_hat_k_high", band=True), weights, seam)
        # pass@k decays through its misses (1 - pass@k), as `curve_band` draws it.
        miss_high = 1.0 - _stack(strata, "pass_at_k_low", band=True)
        miss_low = 1.0 - _stack(strata, "pass_at_k_high", band=True)
        at_low[measured:] = 1.0 - (1.0 - at_low[seam]) * _decay(miss_high, weights, seam)
        at_high[measured:] = 1.0 - (1.0 - at_high[seam]) * _decay(miss_low, weights, seam)
    band = CurveBand(
        ks,
        np.clip(np.minimum(at_low, at), 0.0, 1.0),
        np.clip(np.maximum(at_high, at), 0.0, 1.0),
        np.clip(np.minimum(hat_low, hat), 0.0, 1.0),
        np.clip(np.maximum(hat_high, hat), 0.0, 1.0),
        tuple(sorted({m for s in strata for m in s.band.models})),
    )
    return WeightedCurve(Curve(ks, at, hat, extrapolated), band, int(tickets.sum()))
