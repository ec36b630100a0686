"""A finite binomial mixture: task types (or tickets) fall into a few groups, each with its own per-attempt
success probability. Fitted by EM to per-ticket (n, c) counts, the number of groups chosen by BIC; it predicts
pass@k and pass^k for any k, which is how curves are extrapolated beyond the trials actually run.

Under the model, pass^k = sum_j w_j p_j^k and pass@k = 1 - sum_j w_j (1 - p_j)^k, which are exactly the
expectations of the unbiased per-ticket estimators, so the two agree wherever both exist.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.special import gammaln, xlog1py, xlogy

from passhat.collector.reliability._estimators import ArrayLike, FloatArray, IntArray, as_counts
from passhat.collector.reliability._summary import distinct_counts


@dataclass(frozen=True)
class Component:
    """One group of the mixture: its share and its per-attempt success probability."""

    weight: float
    p: float

    def to_dict(self) -> dict[str, float]:
        return {"weight": self.weight, "p": self.p}


@dataclass(frozen=True)
class Mixture:
    """A binomial mixture, components sorted by success probability, most reliable first."""

    components: tuple[Component, ...]

    @classmethod
    def of(cls, weights: ArrayLike, ps: ArrayLike) -> Mixture:
        """Build a mixture from weights and probabilities (renormalised, sorted by p descending)."""
        w = np.atleast_1d(np.asarray(weights, dtype=np.float64))
        p = np.atleast_1d(np.asarray(ps, dtype=np.float64))
        if w.shape != p.shape or w.size == 0:
            raise ValueError("a mixture needs as many weights as probabilities, and at least one of each")
        if np.any(w < 0) or not np.isfinite(w).all() or w.sum() <= 0:
            raise ValueError("mixture weights must be non-negative and not all zero")
        if np.any((p < 0) | (p > 1)) or not np.isfinite(p).all():
            raise ValueError("mixture success probabilities must lie in [0, 1]")
        w = w / w.sum()
        order = np.argsort(-p, kind="stable")
        return cls(tuple(Component(float(w[i]), float(p[i])) for i in order))

    @property
    def weights(self) -> FloatArray:
        return np.array([c.weight for c in self.components], dtype=np.float64)

    @property
    def probabilities(self) -> FloatArray:
        return np.array([c.p for c in self.components], dtype=np.float64)

    def pass_hat_k(self, k: ArrayLike) -> FloatArray:
        """Predicted pass^k for each k given."""
        ks = np.atleast_1d(np.asarray(k, dtype=np.float64))
        result: FloatArray = (self.weights[None, :] * self.probabilities[None, :] ** ks[:, None]).sum(axis=1)
        return result

    def pass_at_k(self, k: ArrayLike) -> FloatArray:
        """Predicted pass@k for each k given."""
        ks = np.atleast_1d(np.asarray(k, dtype=np.float64))
        miss = (1.0 - self.probabilities[None, :]) ** ks[:, None]
        result: FloatArray = 1.0 - (self.weights[None, :] * miss).sum(axis=1)
        return result

    def to_dict(self) -> dict[str, object]:
        return {"components": [c.to_dict() for c in self.components]}


@dataclass(frozen=True)
class MixtureFit(Mixture):
    """A mixture fitted to per-ticket counts, with the evidence for its number of components."""

    log_likelihood: float = 0.0
    bic: float = 0.0
    tickets: int = 0
    bic_by_components: dict[int, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "components": [c.to_dict() for c in self.components],
            "log_likelihood": self.log_likelihood,
            "bic": self.bic,
            "bic_by_components": {str(m): b for m, b in self.bic_by_components.items()},
        }


def _log_binomial_pmf(n: FloatArray, c: FloatArray, p: FloatArray) -> FloatArray:
    """log Binomial(c; n, p) for each distinct ticket (rows) and component (columns); p may be 0 or 1."""
    log_choose = gammaln(n + 1) - gammaln(c + 1) - gammaln(n - c + 1)
    with np.errstate(divide="ignore"):
        result: FloatArray = (
            log_choose[:, None] + xlogy(c[:, None], p[None, :]) + xlog1py(n[:, None] - c[:, None], -p[None, :])
        )
    return result


def _logsumexp_rows(x: FloatArray) -> FloatArray:
    """log(sum(exp(x), axis=1)) without scipy's per-call overhead (EM calls this thousands of times)."""
    top = x.max(axis=1)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        result: FloatArray = top + np.log(np.exp(x - top[:, None]).sum(axis=1))
    return result


def _em(
    n: FloatArray,
    c: FloatArray,
    weights: FloatArray,
    p0: FloatArray,
    w0: FloatArray,
    *,
    max_iter: int,
    tol: float,
) -> tuple[FloatArray, FloatArray, float]:
    p, w = p0.copy(), w0.copy()
    previous = -math.inf
    loglik = -math.inf
    for _ in range(max_iter):
        with np.errstate(divide="ignore"):
            log_joint = _log_binomial_pmf(n, c, p) + np.log(w)[None, :]
        log_norm = _logsumexp_rows(log_joint)
        loglik = float(weights @ log_norm)
        resp = np.exp(log_joint - log_norm[:, None]) * weights[:, None]
        mass = resp.sum(axis=0)
        w = np.maximum(mass / weights.sum(), 1e-300)
        trials = resp.T @ n
        p = np.where(trials > 0, (resp.T @ c) / np.where(trials > 0, trials, 1.0), p)
        if loglik - previous < tol * max(1.0, abs(loglik)):
            break
        previous = loglik
    return w, p, loglik


def fit_mixture(
    n: ArrayLike,
    c: ArrayLike,
    *,
    max_components: int = 4,
    components: int | None = None,
    restarts: int = 6,
    seed: int = 0,
    max_iter: int = 1000,
    tol: float = 1e-10,
) -> MixtureFit:
    """Fit a binomial mixture to per-ticket counts; choose 1..max_components components by BIC.

    ``components`` fixes the number instead of choosing it. Deterministic for a given seed.
    """
    n_arr, c_arr = as_counts(n, c)
    if n_arr.size == 0:
        raise ValueError("fitting a mixture needs at least one ticket with trials")
    candidates = [components] if components is not None else list(range(1, max_components + 1))
    if any(m < 1 for m in candidates):
        raise ValueError("a mixture needs at least one component")
    un, uc, counts = distinct_counts(n_arr, c_arr)
    nf, cf, wf = un.astype(np.float64), uc.astype(np.float64), counts.astype(np.float64)
    total = float(counts.sum())
    rng = np.random.default_rng(seed)
    rates = np.repeat(cf / nf, counts)
    best: dict[int, tuple[FloatArray, FloatArray, float]] = {}
    for m in candidates:
        starts = [np.quantile(rates, (np.arange(m) + 0.5) / m)]
        starts += [rng.uniform(0.02, 0.98, size=m) for _ in range(restarts)]
        for p0 in starts:
            p0 = np.clip(p0, 1e-3, 1 - 1e-3)
            w, p, ll = _em(nf, cf, wf, p0, np.full(m, 1.0 / m), max_iter=max_iter, tol=tol)
            if m not in best or ll > best[m][2] + 1e-9:
                best[m] = (w, p, ll)
    bics = {m: -2.0 * ll + (2 * m - 1) * math.log(total) for m, (_, _, ll) in best.items()}
    chosen = min(bics, key=lambda m: (bics[m], m))
    w, p, ll = best[chosen]
    base = Mixture.of(w, p)
    # Components that EM left with no mass carry no information; drop them from the report.
    kept = tuple(comp for comp in base.components if comp.weight > 1e-9)
    return MixtureFit(
        components=kept,
        log_likelihood=ll,
        bic=bics[chosen],
        tickets=int(total),
        bic_by_components=bics,
    )


def mixture_log_likelihood(mixture: Mixture, n: IntArray, c: IntArray) -> float:
    """Log-likelihood of per-ticket counts under a mixture."""
    with np.errstate(divide="ignore"):
        log_joint = _log_binomial_pmf(n.astype(np.float64), c.astype(np.float64), mixture.probabilities)
        log_joint = log_joint + np.log(mixture.weights)[None, :]
    return float(_logsumexp_rows(log_joint).sum())
