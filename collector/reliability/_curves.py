"""pass@k and pass^k as curves over k = 1..K: estimated where the trials reach, extrapolated beyond."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from passhat.collector.reliability._estimators import (
    ArrayLike,
    BoolArray,
    FloatArray,
    IntArray,
    as_counts,
    pass_at_k_array,
    pass_hat_k_array,
)
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
