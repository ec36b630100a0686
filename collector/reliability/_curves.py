"""pass@k and pass^k as curves over k = 1..K: estimated where the trials reach, extrapolated beyond."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import beta

from passhat.collector.reliability._estimators import (
    ArrayLike,
    BoolArray,
    FloatArray,
    IntArray,
    as_counts,
    pass_at_k_array,
    pass_hat_k_array,
)
from passhat.collector.reliability._intervals import wilson_bounds
from passhat.collector.reliability._mixture import Mixture, fit_mixture
from passhat.collector.reliability._summary import distinct_counts


@dataclass(frozen=True)
class Curve:
    """pass@k and pass^k for k = 1..K; ``extrapolated[i]`` marks values taken from the mixture, not the data."""

    k: IntArray
    pass_at_k: FloatArray
    pass_hat_k: FloatArray
    extrapolated: BoolArray

    def to_dict(self) -> dict[str, list[float] | list[int] | list[bool]]:
        return {
            "k": [int(v) for v in self.k],
            "pass_at_k": [float(v) for v in self.pass_at_k],
            "pass_hat_k": [float(v) for v in self.pass_hat_k],
            "extrapolated": [bool(v) for v in self.extrapolated],
        }


def mixture_curve(mixture: Mixture, max_k: int) -> Curve:
    """The curves a mixture predicts for k = 1..max_k (all model-based, none marked extrapolated)."""
    if max_k < 1:
        raise ValueError(f"the curve needs max_k >= 1, got {max_k}")
    ks = np.arange(1, max_k + 1, dtype=np.int64)
    return Curve(ks, mixture.pass_at_k(ks), mixture.pass_hat_k(ks), np.zeros(max_k, dtype=bool))


def reliability_curve(n: ArrayLike, c: ArrayLike, max_k: int, *, mixture: Mixture | None = None) -> Curve:
    """Curves for k = 1..max_k from per-ticket counts.

    For k up to the smallest trial count the unbiased estimators are averaged over tickets; beyond it the
    values come from ``mixture`` (fitted to the same counts when not given) and are marked extrapolated.
    """
    n_arr, c_arr = as_counts(n, c)
    if n_arr.size == 0:
        raise ValueError("a curve needs at least one ticket with trials")
    if max_k < 1:
        raise ValueError(f"the curve needs max_k >= 1, got {max_k}")
    reach = int(n_arr.min())
    un, uc, weights = distinct_counts(n_arr, c_arr)
    share = weights / weights.sum()
    ks = np.arange(1, max_k + 1, dtype=np.int64)
    at = np.empty(max_k)
    hat = np.empty(max_k)
    for i, k in enumerate(ks[ks <= reach]):
        at[i] = share @ pass_at_k_array(un, uc, int(k))
        hat[i] = share @ pass_hat_k_array(un, uc, int(k))
    beyond = ks > reach
    if beyond.any():
        model = mixture if mixture is not None else fit_mixture(n_arr, c_arr)
        at[beyond] = model.pass_at_k(ks[beyond])
        hat[beyond] = model.pass_hat_k(ks[beyond])
    return Curve(ks, at, hat, beyond)


#: Numbers of mixture components whose BIC is this close to the best stay in the band ("not rejected").
PLAUSIBLE_BIC = 10.0


@dataclass(frozen=True)
class CurveBand:
    """Bounds around a curve: intervals where the trials reach, the spread of plausible models beyond.

    ``models`` names the mixtures whose extrapolations the band spans (by number of components).
    """

    k: IntArray
    pass_at_k_low: FloatArray
    pass_at_k_high: FloatArray
    pass_hat_k_low: FloatArray
    pass_hat_k_high: FloatArray
    models: tuple[int, ...]


def curve_band(n: ArrayLike, c: ArrayLike, max_k: int, *, level: float = 0.95, max_components: int = 3) -> CurveBand:
    """A band around the curves for k = 1..max_k that spans sampling noise and the choice of model.

    Up to the smallest trial count each value gets its continuity-corrected Wilson interval over tickets.
    Beyond it, the decay is taken from each mixture with 1..``max_components`` components fitted to the same
    counts whose BIC is within ``PLAUSIBLE_BIC`` of the best (EM needs about 150 tickets to tell them apart, so
    none of the plausible ones is privileged) and from the anchor that
    tickets which passed every trial never fail (a flat path), each scaled to meet the measured value at the
    last measured k; the band runs from the lowest to the highest of them, scaled again by the interval at that
    k. So pass^k beyond the trials is bounded above by its interval at the last measured k, and below by the
    fastest decay a fitted mixture gives. One dashed line would hide that pass^50 from 8 tickets can be almost
    anything.
    """
    n_arr, c_arr = as_counts(n, c)
    if n_arr.size == 0 or max_k < 1:
        raise ValueError("a band needs at least one ticket with trials and max_k >= 1")
    reach = min(int(n_arr.min()), max_k)
    ks = np.arange(1, max_k + 1, dtype=np.int64)
    tickets = float(n_arr.size)
    hat_sum = np.array([pass_hat_k_array(n_arr, c_arr, int(k)).sum() for k in ks[:reach]])
    miss_sum = tickets - np.array([pass_at_k_array(n_arr, c_arr, int(k)).sum() for k in ks[:reach]])
    hat_low, hat_high = np.zeros(max_k), np.zeros(max_k)
    miss_low, miss_high = np.zeros(max_k), np.zeros(max_k)
    hat_low[:reach], hat_high[:reach] = wilson_bounds(hat_sum, np.full(reach, tickets), level)
    miss_low[:reach], miss_high[:reach] = wilson_bounds(miss_sum, np.full(reach, tickets), level)
    models: tuple[int, ...] = ()
    if reach < max_k:
        beyond = ks[reach:]
        hat_paths, miss_paths = [], []
        chosen = fit_mixture(n_arr, c_arr, max_components=max_components, tol=1e-8)
        best = min(chosen.bic_by_components.values())
        for m in sorted(chosen.bic_by_components):
            if chosen.bic_by_components[m] > best + PLAUSIBLE_BIC:
                continue  # the data reject this number of groups
            fitted = fit_mixture(n_arr, c_arr, components=m, tol=1e-8)
            models += (m,)
            for model in (fitted, _pessimistic(fitted, float(n_arr.sum()), level)):
                seam_hat = float(model.pass_hat_k(reach)[0])
                seam_miss = 1.0 - float(model.pass_at_k(reach)[0])
                hat_paths.append(model.pass_hat_k(beyond) / seam_hat if seam_hat > 0 else np.zeros(beyond.size))
                miss_paths.append(
                    (1.0 - model.pass_at_k(beyond)) / seam_miss if seam_miss > 0 else np.ones(beyond.size)
                )
        # The trials cannot tell p = 0.97 from p = 1 for tickets that passed every one of them (moving that anchor
        # changes pass^100 25-fold), nor p = 0.03 from p = 0 for tickets that never passed: a flat path, the
        # anchor at "every time" / "never", is as consistent with the data as any fitted decay.
        hat_paths.append(np.ones(beyond.size))
        miss_paths.append(np.ones(beyond.size))
        # Each path is the decay relative to the last measured k; the band scales it by that k's interval.
        hat_low[reach:] = hat_low[reach - 1] * np.min(hat_paths, axis=0)
        hat_high[reach:] = hat_high[reach - 1] * np.max(hat_paths, axis=0)
        miss_low[reach:] = miss_low[reach - 1] * np.min(miss_paths, axis=0)
        miss_high[reach:] = miss_high[reach - 1] * np.max(miss_paths, axis=0)
    clip = np.clip
    return CurveBand(
        ks,
        clip(1.0 - miss_high, 0.0, 1.0),
        clip(1.0 - miss_low, 0.0, 1.0),
        clip(hat_low, 0.0, 1.0),
        clip(hat_high, 0.0, 1.0),
        models,
    )


def _pessimistic(model: Mixture, trials: float, level: float) -> Mixture:
    """The mixture with each group's success rate at the low end of its interval (Clopper-Pearson, one-sided).

    A group that passed all of its trials is estimated at p = 1, yet p = 0.97 fits its trials as well and decays
    far faster beyond them; this is the fastest decay the trials support.
    """
    shares = model.weights * trials
    passes = model.probabilities * shares
    low = np.where(passes > 0, beta.ppf(1.0 - level, np.maximum(passes, 1e-9), shares - passes + 1.0), 0.0)
    return Mixture.of(model.weights, np.clip(np.nan_to_num(low), 0.0, 1.0))
