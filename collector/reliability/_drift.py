"""Drop detection: did pass^k fall in this period, against a baseline of earlier periods, beyond noise?

The test is a one-sided permutation test over tickets. The statistic is the drop
D = mean per-ticket pass^k of the baseline - mean per-ticket pass^k of the current period. Under the null
hypothesis "nothing changed", a ticket of this period and a ticket of the baseline are exchangeable: which side a
ticket landed on is an accident of when it arrived. So shuffling tickets (each with all its trials) between the two
sides draws from the exact null distribution of D, whatever the (usually bimodal, near 0 and 1) shape of per-ticket
pass^k. The Monte Carlo p-value (1 + #{D* >= D}) / (1 + B) is valid at every sample size: the chance of a false
alarm is at most 1 - confidence, by construction rather than by an asymptotic approximation. (A bootstrap test of
the difference of means is only asymptotically calibrated and runs hot with a few dozen tickets of 0/1 values.)

Task types are strata: with strata, tickets are shuffled only within their task type and the statistic is a
weighted sum of per-task-type drops, so a shift in the mix of task types between periods is not read as a drop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from passhat.collector.reliability._estimators import ArrayLike, FloatArray, as_counts, pass_hat_k_array


@dataclass(frozen=True)
class DropTest:
    """The outcome of one drop test: the two pass^k values, the drop, its p-value and the decision."""

    k: int
    current_tickets: int
    baseline_tickets: int
    current_pass_hat_k: float | None
    baseline_pass_hat_k: float | None
    drop: float | None
    p_value: float | None
    confidence: float
    min_drop: float
    permutations: int
    dropped: bool
    reason: str

    def to_dict(self) -> dict[str, object]:
        """The JSON shape used in alert payloads and reports."""
        return {
            "test": "one-sided permutation test over tickets",
            "k": self.k,
            "current_tickets": self.current_tickets,
            "baseline_tickets": self.baseline_tickets,
            "current_pass_hat_k": self.current_pass_hat_k,
            "baseline_pass_hat_k": self.baseline_pass_hat_k,
            "drop": self.drop,
            "p_value": self.p_value,
            "confidence": self.confidence,
            "min_drop": self.min_drop,
            "permutations": self.permutations,
            "dropped": self.dropped,
            "reason": self.reason,
        }


def _strata(labels: Sequence[str] | None, size: int, side: str) -> list[str]:
    if labels is None:
        return [""] * size
    out = [str(label) for label in labels]
    if len(out) != size:
        raise ValueError(f"{side}_strata has {len(out)} labels for {size} tickets")
    return out


def _check_settings(confidence: float, min_tickets: int, min_drop: float, permutations: int) -> None:
    if not 0.5 <= confidence < 1.0:
        raise ValueError(f"confidence must lie in [0.5, 1), got {confidence}")
    if min_tickets < 1:
        raise ValueError(f"min_tickets must be at least 1, got {min_tickets}")
    if not 0.0 <= min_drop < 1.0:
        raise ValueError(f"min_drop must lie in [0, 1), got {min_drop}")
    if (permutations + 1) * (1.0 - confidence) < 1.0:
        needed = int(np.ceil(1.0 / (1.0 - confidence))) - 1
        raise ValueError(
            f"{permutations} permutations cannot reach a p-value below {1.0 - confidence:.3g}; use at least {needed}"
        )


def detect_drop(
    current_n: ArrayLike,
    current_c: ArrayLike,
    baseline_n: ArrayLike,
    baseline_c: ArrayLike,
    k: int,
    *,
    confidence: float = 0.99,
    min_tickets: int = 20,
    min_drop: float = 0.0,
    permutations: int = 2000,
    current_strata: Sequence[str] | None = None,
    baseline_strata: Sequence[str] | None = None,
    weights: dict[str, float] | None = None,
    seed: int | np.random.Generator = 0,
) -> DropTest:
    """Test whether pass^k of the current period's tickets dropped below the baseline's, beyond noise.

    Inputs are per-ticket trial counts (n trials, c successes) of each side. ``dropped`` is true when the
    permutation p-value is at most ``1 - confidence`` and the observed drop is at least ``min_drop``; with fewer
    than ``min_tickets`` tickets on either side no decision is made (``p_value`` is None). With strata (one label
    per ticket, e.g. the task type), tickets are shuffled within their stratum and the drop is the sum of
    per-stratum drops weighted by ``weights`` (e.g. daily traffic; default: the current period's ticket shares);
    strata seen on one side only are left out.
    """
    _check_settings(confidence, min_tickets, min_drop, permutations)
    cur_n, cur_c = as_counts(current_n, current_c)
    base_n, base_c = as_counts(baseline_n, baseline_c)
    cur_labels = _strata(current_strata, cur_n.size, "current")
    base_labels = _strata(baseline_strata, base_n.size, "baseline")
    cur_values = pass_hat_k_array(cur_n, cur_c, k, curtailed=True) if cur_n.size else np.zeros(0)
    base_values = pass_hat_k_array(base_n, base_c, k, curtailed=True) if base_n.size else np.zeros(0)

    shared = sorted(set(cur_labels) & set(base_labels))
    cur_groups = [cur_values[np.array([lab == s for lab in cur_labels])] for s in shared]
    base_groups = [base_values[np.array([lab == s for lab in base_labels])] for s in shared]
    n_cur = sum(g.size for g in cur_groups)
    n_base = sum(g.size for g in base_groups)

    def result(current: float | None, baseline: float | None, p: float | None, dropped: bool, reason: str) -> DropTest:
        drop = None if current is None or baseline is None else baseline - current
        return DropTest(
            k=k,
            current_tickets=n_cur,
            baseline_tickets=n_base,
            current_pass_hat_k=current,
            baseline_pass_hat_k=baseline,
            drop=drop,
            p_value=p,
            confidence=confidence,
            min_drop=min_drop,
            permutations=permutations,
            dropped=dropped,
            reason=reason,
        )

    if n_cur < min_tickets or n_base < min_tickets:
        return result(
            None,
            None,
            None,
            False,
            f"too few tickets to decide: {n_cur} this period and {n_base} in the baseline (need {min_tickets} each)",
        )

    if weights is None:
        w = np.array([g.size for g in cur_groups], dtype=np.float64)
    else:
        w = np.array([max(float(weights.get(s, 0.0)), 0.0) for s in shared], dtype=np.float64)
        if w.sum() <= 0.0:
            raise ValueError("the weights give no positive weight to any task type seen on both sides")
    w = w / w.sum()
    current = float(sum(wi * g.mean() for wi, g in zip(w, cur_groups, strict=True)))
    baseline = float(sum(wi * g.mean() for wi, g in zip(w, base_groups, strict=True)))
    observed = baseline - current

    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    null = np.zeros(permutations, dtype=np.float64)
    for wi, cur_g, base_g in zip(w, cur_groups, base_groups, strict=True):
        null += wi * _permuted_drops(cur_g, base_g, permutations, rng)
    # Ties in floating point (the same set of values summed in another order) must count as ties.
    exceed = int(np.count_nonzero(null >= observed - 1e-12))
    p_value = (1 + exceed) / (1 + permutations)
    alpha = 1.0 - confidence
    if p_value > alpha:
        reason = f"within noise: p = {p_value:.3g} > {alpha:.3g}"
        return result(current, baseline, p_value, False, reason)
    if observed < min_drop:
        reason = f"significant (p = {p_value:.3g}) but the drop {observed:.3f} is below min_drop {min_drop:.3f}"
        return result(current, baseline, p_value, False, reason)
    reason = f"dropped by {observed:.3f} (p = {p_value:.3g} <= {alpha:.3g})"
    return result(current, baseline, p_value, True, reason)


def _permuted_drops(
    current: FloatArray, baseline: FloatArray, permutations: int, rng: np.random.Generator
) -> FloatArray:
    """Null replicates of mean(baseline) - mean(current) with tickets shuffled between the two sides.

    A shuffle matters only through how many tickets of each distinct value land on the current side, and that
    count vector is multivariate hypergeometric: drawing it directly gives the same null distribution as
    shuffling, at a cost that depends on the number of distinct values (at most n + 1 per trial count), not
    on the number of tickets.
    """
    pooled = np.concatenate([current, baseline])
    values, counts = np.unique(pooled, return_counts=True)
    if values.size == 1:
        return np.zeros(permutations, dtype=np.float64)  # every shuffle gives the same two means
    m = current.size
    total = float(pooled.sum())
    drawn = rng.multivariate_hypergeometric(counts, m, size=permutations)
    cur_sum = drawn.astype(np.float64) @ values
    out: FloatArray = (total - cur_sum) / baseline.size - cur_sum / m
    return out


def simulate_alarm_rate(
    baseline_mixture: Sequence[tuple[float, float]],
    current_mixture: Sequence[tuple[float, float]],
    *,
    tickets: int,
    baseline_tickets: int,
    trials: int,
    k: int,
    weeks: int,
    confidence: float = 0.99,
    min_drop: float = 0.0,
    permutations: int = 2000,
    seed: int = 0,
) -> float:
    """The share of simulated weeks in which `detect_drop` alarms.

    Each ticket's success probability is drawn from a mixture of (weight, p) components, then its ``trials``
    outcomes. With ``current_mixture == baseline_mixture`` the result estimates the false-alarm rate (at most
    ``1 - confidence`` in theory); with a worse current mixture it estimates the power to detect that drop.
    """
    if weeks < 1:
        raise ValueError(f"weeks must be at least 1, got {weeks}")
    rng = np.random.default_rng(seed)

    def draw(mixture: Sequence[tuple[float, float]], count: int) -> tuple[FloatArray, FloatArray]:
        weights = np.array([wt for wt, _ in mixture], dtype=np.float64)
        probs = np.array([p for _, p in mixture], dtype=np.float64)
        chosen = rng.choice(len(mixture), size=count, p=weights / weights.sum())
        c = rng.binomial(trials, probs[chosen])
        return np.full(count, trials, dtype=np.float64), c.astype(np.float64)

    alarms = 0
    for _ in range(weeks):
        base_n, base_c = draw(baseline_mixture, baseline_tickets)
        cur_n, cur_c = draw(current_mixture, tickets)
        test = detect_drop(
            cur_n,
            cur_c,
            base_n,
            base_c,
            k,
            confidence=confidence,
            min_tickets=1,
            min_drop=min_drop,
            permutations=permutations,
            seed=rng,
        )
        alarms += int(test.dropped)
    return alarms / weeks
