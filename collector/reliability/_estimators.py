"""Unbiased per-ticket estimators of pass@k and pass^k from n trials with c successes.

pass@k = 1 - C(n-c, k) / C(n, k)   (at least one of k attempts succeeds)
pass^k =     C(c, k)   / C(n, k)   (all k attempts succeed; tau-bench's definition)

Curtailed replay stops a ticket's trials once one passed and one failed: then every set of k attempts that
includes both contains a failure and a success, so with k trials pass^k would be 0 and pass@k 1 whatever the
attempts not run. ``curtailed=True`` accepts such settled tickets with fewer than k trials and gives them exactly
those values, the ones the full design of k trials computes for the same attempts.

Both are computed from log-gamma differences, so they neither overflow nor lose precision for n up to
thousands: each ratio is exact to ~1e-12, far inside the 1e-9 we promise.
"""

from __future__ import annotations

from typing import overload

import numpy as np
import numpy.typing as npt
from scipy.special import gammaln

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
ArrayLike = int | float | npt.ArrayLike


def as_counts(n: ArrayLike, c: ArrayLike) -> tuple[IntArray, IntArray]:
    """Validate per-ticket trial counts and return them as int64 arrays of one shape."""
    n_arr = np.atleast_1d(np.asarray(n))
    c_arr = np.atleast_1d(np.asarray(c))
    for name, arr in (("n", n_arr), ("c", c_arr)):
        if arr.dtype.kind not in "iuf" and arr.size:
            raise ValueError(f"{name} must hold numbers of trials, got values of type {arr.dtype}")
        if arr.dtype.kind == "f" and arr.size and not np.all(np.isfinite(arr) & (arr == np.round(arr))):
            raise ValueError(f"{name} must hold whole numbers of trials")
    try:
        n_b, c_b = np.broadcast_arrays(n_arr.astype(np.int64), c_arr.astype(np.int64))
    except ValueError:
        raise ValueError(f"n and c must have the same length, got {n_arr.shape} and {c_arr.shape}") from None
    if n_b.size and int(n_b.min()) < 1:
        raise ValueError("every ticket needs at least one trial (n >= 1)")
    if c_b.size and (int(c_b.min()) < 0 or bool(np.any(c_b > n_b))):
        raise ValueError("successes must lie between 0 and the number of trials (0 <= c <= n)")
    return n_b.copy(), c_b.copy()


def settled(n: ArrayLike, c: ArrayLike, k: int) -> BoolArray:
    """Which tickets have their pass^k and pass@k settled: k trials run, or one passed and one failed already."""
    n_arr, c_arr = as_counts(n, c)
    result: BoolArray = (n_arr >= k) | ((c_arr > 0) & (c_arr < n_arr))
    return result


def _check_k(k: int, n: IntArray, c: IntArray | None = None) -> int:
    """Validate k; with ``c`` given (curtailed counts), tickets short of k trials must be settled."""
    if isinstance(k, bool) or int(k) != k:
        raise ValueError(f"k must be a whole number of attempts, got {k!r}")
    k = int(k)
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if c is not None:
        open_ = (n < k) & ((c == 0) | (c == n))
        if open_.any():
            worst = int(n[open_].min())
            raise ValueError(
                f"k={k} exceeds the number of trials of a ticket (n={worst}) whose outcomes all agree, so its "
                f"pass^{k} is not settled; run its trials until one passes and one fails or {k} have run, or leave "
                f"it out"
            )
        return k
    if n.size and k > int(n.min()):
        worst = int(n.min())
        raise ValueError(
            f"k={k} exceeds the number of trials of some ticket (n={worst}); pass@k and pass^k can only be "
            f"estimated for k <= n. Run more trials, or extrapolate with the mixture fit (fit_mixture)."
        )
    return k


def _log_choose_ratio(a: IntArray, n: IntArray, k: int) -> FloatArray:
    """log(C(a, k) / C(n, k)) for a >= k."""
    a_f = a.astype(np.float64)
    n_f = n.astype(np.float64)
    result: FloatArray = gammaln(a_f + 1) - gammaln(a_f - k + 1) - gammaln(n_f + 1) + gammaln(n_f - k + 1)
    return result


def pass_hat_k_array(n: ArrayLike, c: ArrayLike, k: int, *, curtailed: bool = False) -> FloatArray:
    """pass^k for each ticket: the unbiased probability that k attempts drawn without replacement all pass.

    ``curtailed=True`` also accepts settled tickets with fewer than k trials (see the module docstring)."""
    n_arr, c_arr = as_counts(n, c)
    k = _check_k(k, n_arr, c_arr if curtailed else None)
    out = np.zeros(n_arr.shape, dtype=np.float64)
    mask = (c_arr >= k) & (n_arr >= k)
    out[mask] = np.exp(_log_choose_ratio(c_arr[mask], n_arr[mask], k))
    out[c_arr == n_arr] = 1.0  # exact where the ratio is exactly one
    return out


def pass_at_k_array(n: ArrayLike, c: ArrayLike, k: int, *, curtailed: bool = False) -> FloatArray:
    """pass@k for each ticket: the unbiased probability that at least one of k attempts passes.

    ``curtailed=True`` also accepts settled tickets with fewer than k trials (see the module docstring)."""
    n_arr, c_arr = as_counts(n, c)
    k = _check_k(k, n_arr, c_arr if curtailed else None)
    failures = n_arr - c_arr
    out = np.ones(n_arr.shape, dtype=np.float64)
    mask = (failures >= k) & (n_arr >= k)
    out[mask] = -np.expm1(_log_choose_ratio(failures[mask], n_arr[mask], k))
    out[c_arr == 0] = 0.0  # exact where no attempt ever passed
    return out


@overload
def pass_hat_k(n: int, c: int, k: int) -> float: ...
@overload
def pass_hat_k(n: npt.ArrayLike, c: npt.ArrayLike, k: int) -> float | FloatArray: ...
def pass_hat_k(n: ArrayLike, c: ArrayLike, k: int) -> float | FloatArray:
    """pass^k for one ticket (scalars in, float out) or for many (arrays in, array out)."""
    result = pass_hat_k_array(n, c, k)
    return float(result[0]) if np.ndim(n) == 0 and np.ndim(c) == 0 else result


@overload
def pass_at_k(n: int, c: int, k: int) -> float: ...
@overload
def pass_at_k(n: npt.ArrayLike, c: npt.ArrayLike, k: int) -> float | FloatArray: ...
def pass_at_k(n: ArrayLike, c: ArrayLike, k: int) -> float | FloatArray:
    """pass@k for one ticket (scalars in, float out) or for many (arrays in, array out)."""
    result = pass_at_k_array(n, c, k)
    return float(result[0]) if np.ndim(n) == 0 and np.ndim(c) == 0 else result
