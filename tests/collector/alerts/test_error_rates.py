"""Drop alerts with stated error rates: simulated quiet years stay within α, real drops stay fired, power is exact."""

from __future__ import annotations

import numpy as np
import pytest

from passhat.collector.alerts import EVERY_TASK_TYPE, AlertRule, AlertState, PeriodCounts, TicketCounts, evaluate
from passhat.collector.reliability import drop_power, simulate_alarm_rate

K = 5
TYPES = 15


def _week(label: str, a: np.ndarray, b: np.ndarray, tickets: int, rng: np.random.Generator) -> PeriodCounts:
    """One week of 15 task types: each ticket's success rate from its task type's Beta, then K trials."""
    c = rng.binomial(K, rng.beta(a[:, None], b[:, None], size=(a.size, tickets)))
    return PeriodCounts(
        period=label, task_types={f"type-{h:02d}": TicketCounts(n=[K] * tickets, c=list(c[h])) for h in range(a.size)}
    )


@pytest.mark.slow
def test_quiet_weeks_raise_a_false_alert_in_at_most_alpha_of_them_across_fifteen_task_types() -> None:
    rng = np.random.default_rng(11)
    a, b = rng.uniform(1.0, 8.0, TYPES), rng.uniform(0.3, 2.0, TYPES)
    rule = AlertRule(
        "drop", "drop", task_type=EVERY_TASK_TYPE, min_tickets=20, confidence=0.95, permutations=999, baseline_periods=4
    )
    weeks = [_week(f"w{i:03d}", a, b, 20, rng) for i in range(264)]  # about five years of weekly periods
    alerting = 0
    tested = 0
    for i in range(4, len(weeks)):
        result = evaluate([rule], weeks[i], weeks[i - 4 : i][::-1], AlertState(), k=K, seed=i)
        tested += 1
        alerting += bool(result.fire)
    # Holm keeps P(any false alert in a week) <= 0.05; 260 weeks put the 99% upper bound of 0.05 at about 0.085.
    assert alerting / tested <= 0.085, alerting


@pytest.mark.slow
def test_without_correction_the_same_quiet_weeks_alert_far_more_often() -> None:
    rng = np.random.default_rng(11)
    a, b = rng.uniform(1.0, 8.0, TYPES), rng.uniform(0.3, 2.0, TYPES)
    rule = AlertRule(
        "drop", "drop", task_type=EVERY_TASK_TYPE, min_tickets=20, confidence=0.95, permutations=999,
        correction="none",
    )  # fmt: skip
    weeks = [_week(f"w{i:03d}", a, b, 20, rng) for i in range(64)]
    alerting = sum(
        bool(evaluate([rule], weeks[i], weeks[i - 4 : i][::-1], AlertState(), k=K, seed=i).fire)
        for i in range(4, len(weeks))
    )
    assert alerting / 60 > 0.2


@pytest.mark.slow
def test_a_planted_persistent_drop_fires_and_stays_fired() -> None:
    rng = np.random.default_rng(5)
    a, b = np.full(TYPES, 6.0), np.full(TYPES, 0.5)
    rule = AlertRule("drop", "drop", task_type=EVERY_TASK_TYPE, min_tickets=30, permutations=999)
    weeks = [_week(f"w{i:03d}", a, b, 30, rng) for i in range(6)]
    worse_a, worse_b = a.copy(), b.copy()
    worse_a[3], worse_b[3] = 1.0, 1.5  # type-03 falls from pass^5 0.73 to 0.09 and stays there
    weeks += [_week(f"w{i:03d}", worse_a, worse_b, 30, rng) for i in range(6, 30)]
    state = AlertState()
    outcomes: list[str] = []
    for i in range(4, len(weeks)):
        result = evaluate([rule], weeks[i], weeks[:i][::-1], state, k=K, seed=i)
        state = result.state
        outcomes.append(next(d.outcome for d in result.decisions if d.task_type == "type-03"))
    fired = outcomes.index("fired")
    assert fired <= 3  # within a few weeks of the drop (week 6 is outcome 2)
    assert set(outcomes[fired + 1 :]) == {"still_open"}, outcomes


@pytest.mark.slow
def test_a_fired_drop_resolves_once_the_task_type_has_recovered() -> None:
    rng = np.random.default_rng(6)
    a, b = np.full(TYPES, 6.0), np.full(TYPES, 0.5)
    worse_a, worse_b = a.copy(), b.copy()
    worse_a[3], worse_b[3] = 1.0, 1.5
    rule = AlertRule("drop", "drop", task_type=EVERY_TASK_TYPE, min_tickets=30, permutations=999)
    weeks = [_week(f"w{i:03d}", a, b, 30, rng) for i in range(5)]
    weeks += [_week(f"w{i:03d}", worse_a, worse_b, 30, rng) for i in range(5, 8)]
    weeks += [_week(f"w{i:03d}", a, b, 30, rng) for i in range(8, 14)]
    state = AlertState()
    outcomes: list[str] = []
    for i in range(4, len(weeks)):
        result = evaluate([rule], weeks[i], weeks[:i][::-1], state, k=K, seed=i)
        state = result.state
        outcomes.append(next(d.outcome for d in result.decisions if d.task_type == "type-03"))
    assert "fired" in outcomes[:4] and "resolved" in outcomes[4:], outcomes


def test_power_matches_the_exact_figures_of_the_audit() -> None:
    # pass^20 falling from 0.4 to 0.2, one-sided at 99%: nearly blind at 8 vs 8, about 80% at 114 vs 114.
    assert drop_power(8, 8, 0.4, 0.2, alpha=0.01) == pytest.approx(0.011, abs=0.001)
    assert drop_power(30, 30, 0.4, 0.2, alpha=0.01) == pytest.approx(0.17, abs=0.01)
    assert drop_power(114, 114, 0.4, 0.2, alpha=0.01) == pytest.approx(0.80, abs=0.01)


@pytest.mark.slow
def test_the_exact_power_agrees_with_the_simulated_permutation_test() -> None:
    # Tickets that pass every time or never: per-ticket pass^k is 0/1 with the stated means.
    simulated = simulate_alarm_rate(
        [(0.4, 1.0), (0.6, 0.0)], [(0.2, 1.0), (0.8, 0.0)], tickets=30, baseline_tickets=60, trials=K, k=K,
        weeks=600, confidence=0.95, permutations=999, seed=3,
    )  # fmt: skip
    exact = drop_power(30, 60, 0.4, 0.2, alpha=0.05)
    assert simulated == pytest.approx(exact, abs=0.05)
