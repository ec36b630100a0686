"""The drop test: quiet on noise (false-alarm rate at or below its stated level), loud on a real drop."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from passhat.collector.reliability import detect_drop, simulate_alarm_rate

#: The seed's fitted mixture: (share of tickets, per-trial success probability).
SEED_MIXTURE = [(0.31, 0.98), (0.60, 0.60), (0.09, 0.0)]
#: Half of the reliable tickets become merely "usually right": pass^5 falls from 0.33 to 0.12.
REGRESSED = [(0.06, 0.98), (0.85, 0.60), (0.09, 0.0)]


def _counts(rng: np.random.Generator, p: float, tickets: int, trials: int = 10) -> tuple[np.ndarray, np.ndarray]:
    return np.full(tickets, trials), rng.binomial(trials, p, size=tickets)


@pytest.mark.slow
def test_no_real_change_alarms_at_most_at_the_stated_rate() -> None:
    weeks = 1500
    rate = simulate_alarm_rate(
        SEED_MIXTURE,
        SEED_MIXTURE,
        tickets=60,
        baseline_tickets=240,
        trials=20,
        k=5,
        weeks=weeks,
        confidence=0.95,
        permutations=499,
        seed=11,
    )
    # 0.05 is the level; three binomial standard errors over 1500 weeks are about 0.017.
    assert rate <= 0.05 + 0.02, rate


@pytest.mark.slow
def test_a_drop_of_0_2_in_pass_hat_5_is_detected_with_high_power() -> None:
    power = simulate_alarm_rate(
        SEED_MIXTURE,
        REGRESSED,
        tickets=100,
        baseline_tickets=400,
        trials=20,
        k=5,
        weeks=100,
        confidence=0.99,
        permutations=499,
        seed=12,
    )
    assert power >= 0.9, power


def test_a_clear_drop_is_flagged_with_its_figures() -> None:
    rng = np.random.default_rng(0)
    base_n, base_c = _counts(rng, 0.95, 200)
    cur_n, cur_c = _counts(rng, 0.70, 50)
    test = detect_drop(cur_n, cur_c, base_n, base_c, 5, confidence=0.99)
    assert test.dropped
    assert test.p_value is not None and test.p_value <= 0.01
    assert test.drop is not None and test.drop > 0.3
    assert test.current_tickets == 50 and test.baseline_tickets == 200
    assert test.to_dict()["test"] == "one-sided permutation test over tickets"


def test_an_improvement_is_not_a_drop() -> None:
    rng = np.random.default_rng(1)
    base_n, base_c = _counts(rng, 0.70, 200)
    cur_n, cur_c = _counts(rng, 0.95, 50)
    test = detect_drop(cur_n, cur_c, base_n, base_c, 5)
    assert not test.dropped
    assert test.p_value is not None and test.p_value > 0.5


def test_too_few_tickets_makes_no_decision() -> None:
    test = detect_drop([10] * 5, [0] * 5, [10] * 100, [10] * 100, 5, min_tickets=20)
    assert not test.dropped
    assert test.p_value is None
    assert "too few tickets" in test.reason and "5 this period" in test.reason


def test_a_significant_but_small_drop_is_held_back_by_min_drop() -> None:
    rng = np.random.default_rng(2)
    base_n, base_c = _counts(rng, 0.97, 2000)
    cur_n, cur_c = _counts(rng, 0.955, 2000)
    loose = detect_drop(cur_n, cur_c, base_n, base_c, 1, confidence=0.95)
    strict = detect_drop(cur_n, cur_c, base_n, base_c, 1, confidence=0.95, min_drop=0.05)
    assert loose.dropped
    assert not strict.dropped and "below min_drop" in strict.reason


def test_identical_values_give_p_value_one() -> None:
    test = detect_drop([5] * 30, [5] * 30, [5] * 30, [5] * 30, 5)
    assert test.p_value == 1.0 and not test.dropped


def test_strata_keep_a_shift_in_the_task_type_mix_from_reading_as_a_drop() -> None:
    rng = np.random.default_rng(3)
    # Two task types with different but unchanged reliability; this period has more of the weak one.
    base = [(*_counts(rng, 0.99, 150), "easy"), (*_counts(rng, 0.5, 50), "hard")]
    cur = [(*_counts(rng, 0.99, 20), "easy"), (*_counts(rng, 0.5, 60), "hard")]

    def join(parts: list[tuple[np.ndarray, np.ndarray, str]]) -> tuple[np.ndarray, np.ndarray, list[str]]:
        n = np.concatenate([p[0] for p in parts])
        c = np.concatenate([p[1] for p in parts])
        return n, c, [p[2] for p in parts for _ in range(p[0].size)]

    cn, cc, cs = join(cur)
    bn, bc, bs = join(base)
    pooled = detect_drop(cn, cc, bn, bc, 5)
    stratified = detect_drop(cn, cc, bn, bc, 5, current_strata=cs, baseline_strata=bs)
    assert pooled.dropped  # the naive comparison mistakes the mix shift for a regression
    assert not stratified.dropped


def test_strata_seen_on_one_side_only_are_left_out() -> None:
    test = detect_drop(
        [5] * 30 + [5] * 30,
        [5] * 30 + [0] * 30,
        [5] * 30,
        [5] * 30,
        5,
        current_strata=["a"] * 30 + ["new"] * 30,
        baseline_strata=["a"] * 30,
    )
    assert test.current_tickets == 30 and not test.dropped


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"confidence": 1.0}, "confidence must lie in"),
        ({"permutations": 50}, "use at least 99"),
        ({"min_tickets": 0}, "min_tickets must be at least 1"),
        ({"min_drop": -0.1}, "min_drop must lie in"),
    ],
)
def test_bad_settings_are_rejected(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        detect_drop([5] * 30, [5] * 30, [5] * 30, [5] * 30, 5, **kwargs)  # type: ignore[arg-type]


def test_k_above_the_trials_names_the_problem() -> None:
    with pytest.raises(ValueError, match="exceeds the number of trials"):
        detect_drop([3] * 30, [3] * 30, [3] * 30, [3] * 30, 5)


def test_the_p_value_matches_exact_enumeration_of_every_split() -> None:
    # Eight tickets, four per side: all 70 ways of choosing the "current" four give the exact p-value.
    current_c = [5, 3, 2, 5]
    baseline_c = [5, 5, 4, 5]
    pooled = current_c + baseline_c
    values = [1.0 if c == 5 else 0.0 for c in pooled]
    observed = sum(values[4:]) / 4 - sum(values[:4]) / 4
    splits = list(itertools.combinations(range(8), 4))
    as_extreme = 0
    for chosen in splits:
        cur = sum(values[i] for i in chosen) / 4
        base = (sum(values) - 4 * cur) / 4
        as_extreme += base - cur >= observed - 1e-12
    exact = as_extreme / len(splits)
    test = detect_drop([5] * 4, current_c, [5] * 4, baseline_c, 5, min_tickets=4, permutations=20_000, confidence=0.5)
    assert test.p_value is not None
    assert test.p_value == pytest.approx(exact, abs=0.01)


def test_traffic_weights_decide_how_much_a_task_type_counts() -> None:
    # Task type "a" collapsed, "b" did not change; 60 tickets of each on both sides.
    cur_c = [0] * 60 + [5] * 60
    base_c = [5] * 60 + [5] * 60
    strata = ["a"] * 60 + ["b"] * 60
    n = [5] * 120

    def run(weights: dict[str, float]) -> bool:
        test = detect_drop(
            n, cur_c, n, base_c, 5, min_drop=0.05, current_strata=strata, baseline_strata=strata, weights=weights
        )
        return test.dropped

    assert run({"a": 0.9, "b": 0.1})
    assert not run({"a": 0.01, "b": 0.99})  # a drop of 0.01 in the traffic-weighted pass^k is below min_drop
