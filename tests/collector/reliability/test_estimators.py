"""The per-ticket estimators: exact, vectorised, and consistent with their definitions."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passhat.collector.reliability import pass_at_k, pass_at_k_array, pass_hat_k, pass_hat_k_array


@st.composite
def counts(draw: st.DrawFn, max_n: int = 60) -> tuple[int, int, int]:
    n = draw(st.integers(1, max_n))
    c = draw(st.integers(0, n))
    k = draw(st.integers(1, n))
    return n, c, k


def exact_pass_hat(n: int, c: int, k: int) -> Fraction:
    return Fraction(math.comb(c, k), math.comb(n, k))


def exact_pass_at(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


@given(counts())
def test_k_of_one_is_the_success_rate(nck: tuple[int, int, int]) -> None:
    n, c, _ = nck
    assert pass_hat_k(n, c, 1) == pytest.approx(c / n, abs=1e-12)
    assert pass_at_k(n, c, 1) == pytest.approx(c / n, abs=1e-12)


@given(counts())
def test_pass_hat_k_at_most_pass_at_1_at_most_pass_at_k(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    assert pass_hat_k(n, c, k) <= c / n + 1e-12
    assert c / n <= pass_at_k(n, c, k) + 1e-12


@given(counts())
def test_monotone_in_k(nck: tuple[int, int, int]) -> None:
    n, c, _ = nck
    hats = [pass_hat_k(n, c, k) for k in range(1, n + 1)]
    ats = [pass_at_k(n, c, k) for k in range(1, n + 1)]
    assert all(b <= a + 1e-12 for a, b in itertools.pairwise(hats))
    assert all(b >= a - 1e-12 for a, b in itertools.pairwise(ats))


@given(counts())
def test_edge_cases(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    if c < k:
        assert pass_hat_k(n, c, k) == 0.0
    if n - c < k:
        assert pass_at_k(n, c, k) == 1.0
    assert pass_hat_k(n, n, k) == pytest.approx(1.0, abs=1e-12)
    assert pass_at_k(n, 0, k) == 0.0


@settings(max_examples=300)
@given(st.integers(1, 1000).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_exact_against_rational_arithmetic_up_to_n_1000(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    assert abs(pass_hat_k(n, c, k) - float(exact_pass_hat(n, c, k))) < 1e-9
    assert abs(pass_at_k(n, c, k) - float(exact_pass_at(n, c, k))) < 1e-9


def test_vectorised_matches_scalar() -> None:
    rng = np.random.default_rng(3)
    n = rng.integers(5, 40, size=500)
    c = rng.integers(0, n + 1)
    k = 5
    vector_hat = pass_hat_k_array(n, c, k)
    vector_at = pass_at_k_array(n, c, k)
    for i in range(0, 500, 37):
        assert vector_hat[i] == pytest.approx(pass_hat_k(int(n[i]), int(c[i]), k), abs=1e-15)
        assert vector_at[i] == pytest.approx(pass_at_k(int(n[i]), int(c[i]), k), abs=1e-15)


def test_agrees_with_monte_carlo_draws_without_replacement() -> None:
    rng = np.random.default_rng(11)
    n, c, k = 20, 13, 4
    outcomes = np.array([1] * c + [0] * (n - c))
    draws = np.array([rng.choice(outcomes, size=k, replace=False) for _ in range(40_000)])
    assert draws.all(axis=1).mean() == pytest.approx(pass_hat_k(n, c, k), abs=0.01)
    assert draws.any(axis=1).mean() == pytest.approx(pass_at_k(n, c, k), abs=0.01)


def test_unbiased_for_the_true_rate() -> None:
    # E[C(c,k)/C(n,k)] = p^k when c ~ Binomial(n, p): averaged over many simulated tickets.
    rng = np.random.default_rng(5)
    p, n, k = 0.7, 12, 5
    c = rng.binomial(n, p, size=200_000)
    assert pass_hat_k_array(np.full_like(c, n), c, k).mean() == pytest.approx(p**k, abs=0.003)
    assert pass_at_k_array(np.full_like(c, n), c, k).mean() == pytest.approx(1 - (1 - p) ** k, abs=0.003)


def test_k_larger_than_n_is_an_error_that_says_so() -> None:
    with pytest.raises(ValueError, match=r"k=5 exceeds the number of trials .*n=3"):
        pass_hat_k(3, 2, 5)
    with pytest.raises(ValueError, match="exceeds"):
        pass_at_k_array([10, 3], [5, 1], 4)


@pytest.mark.parametrize(
    ("n", "c", "k", "message"),
    [
        (0, 0, 1, "at least one trial"),
        (5, 6, 1, "between 0"),
        (5, -1, 1, "between 0"),
        (5, 2, 0, "at least 1"),
    ],
)
def test_bad_counts_are_named(n: int, c: int, k: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pass_hat_k(n, c, k)
