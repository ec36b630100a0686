"""The mixture behind a curve, with the fit's uncertainty: each group's share and per-attempt success rate, and
how far they move when the tickets are resampled (a cluster bootstrap over tickets, the number of groups held
at the one BIC chose).

Each replicate restarts EM from the point fit, so it converges in a few iterations and a replicate costs the
same whatever the number of tickets (it works on the distinct (trials, passes) pairs). Groups are matched
across replicates by their order of success rate, most reliable first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from passhat.collector.reliability._estimators import ArrayLike, as_counts
from passhat.collector.reliability._mixture import MixtureFit, _em, fit_mixture
from passhat.collector.reliability._summary import distinct_counts

#: Below this many tickets a fit says little (EM needs about 150 to tell groups apart); the view says so.
FEW_TICKETS_FOR_MIXTURE = 30


@dataclass(frozen=True)
class GroupSpread:
    """One group of the mixture: share of tickets and per-attempt success rate, each with its interval."""

    share: float
    share_ci: tuple[float, float]
    rate: float
    rate_ci: tuple[float, float]


@dataclass(frozen=True)
class MixtureSpread:
    """A fitted mixture with bootstrap intervals for each group (``resamples`` replicates at ``level``)."""

    fit: MixtureFit
    groups: tuple[GroupSpread, ...]
    tickets: int
    resamples: int
    level: float

    @property
    def few_tickets(self) -> bool:
        return self.tickets < FEW_TICKETS_FOR_MIXTURE


def mixture_spread(
    n: ArrayLike,
    c: ArrayLike,
    *,
    max_components: int = 3,
    resamples: int = 60,
    level: float = 0.95,
    seed: int = 0,
) -> MixtureSpread:
    """Fit a binomial mixture (1..max_components groups by BIC) and bootstrap its groups' shares and rates."""
    n_arr, c_arr = as_counts(n, c)
    if n_arr.size == 0:
        raise ValueError("fitting a mixture needs at least one ticket with trials")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"the confidence level must lie strictly between 0 and 1, got {level}")
    fit = fit_mixture(n_arr, c_arr, max_components=max_components, tol=1e-8)
    un, uc, counts = distinct_counts(n_arr, c_arr)
    nf, cf = un.astype(np.float64), uc.astype(np.float64)
    w0, p0 = fit.weights, fit.probabilities
    rng = np.random.default_rng(seed)
    total = int(counts.sum())
    draws = rng.multinomial(total, counts / total, size=resamples).astype(np.float64)
    shares = np.empty((resamples, w0.size))
    rates = np.empty((resamples, w0.size))
    for r in range(resamples):
        present = draws[r] > 0
        w, p, _ = _em(nf[present], cf[present], draws[r][present], p0, w0, max_iter=200, tol=1e-8)
        order = np.argsort(-p, kind="stable")
        shares[r], rates[r] = w[order] / w.sum(), p[order]
    alpha = (1.0 - level) / 2.0
    low_w, high_w = np.quantile(shares, [alpha, 1.0 - alpha], axis=0)
    low_p, high_p = np.quantile(rates, [alpha, 1.0 - alpha], axis=0)
    groups = tuple(
        GroupSpread(
            float(w0[i]), (float(low_w[i]), float(high_w[i])), float(p0[i]), (float(low_p[i]), float(high_p[i]))
        )
        for i in range(w0.size)
    )
    return MixtureSpread(fit, groups, int(n_arr.size), resamples, level)
