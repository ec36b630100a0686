"""Per-task-type aggregation with Wilson intervals over tickets (the bootstrap kept for comparison)."""

from __future__ import annotations

import numpy as np
import pytest

from passhat.collector.reliability import pass_hat_k_array, summarize_task_type


def test_point_estimates_are_means_over_tickets() -> None:
    n = np.array([10, 10, 10, 10])
    c = np.array([10, 9, 5, 0])
    summary = summarize_task_type(n, c, 3)
    assert summary.tickets == 4
    assert summary.trials_per_ticket == 10
    assert summary.pass_at_1 == pytest.approx(24 / 40)
    assert summary.pass_hat_k == pytest.approx(pass_hat_k_array(n, c, 3).mean())
    assert summary.pass_hat_k_ci[0] <= summary.pass_hat_k <= summary.pass_hat_k_ci[1]


def test_intervals_are_deterministic_and_widen_with_the_level() -> None:
    rng = np.random.default_rng(0)
    c = rng.binomial(20, 0.6, size=80)
    n = np.full(80, 20)
    a = summarize_task_type(n, c, 5)
    b = summarize_task_type(n, c, 5)
    wide = summarize_task_type(n, c, 5, level=0.99)
    assert a == b and a.interval == "wilson"
    assert wide.pass_at_1_ci[0] <= a.pass_at_1_ci[0] and wide.pass_at_1_ci[1] >= a.pass_at_1_ci[1]


def test_to_dict_uses_the_shared_field_names() -> None:
    summary = summarize_task_type([5, 5], [5, 3], 5)
    data = summary.to_dict()
    for key in ("tickets", "trials_per_ticket", "pass_at_1", "pass_at_k", "pass_hat_k", "pass_hat_k_ci"):
        assert key in data


def test_the_bootstrap_is_still_available_and_seeded() -> None:
    n, c = np.full(40, 10), np.random.default_rng(1).binomial(10, 0.7, size=40)
    a = summarize_task_type(n, c, 5, interval="bootstrap", seed=7, resamples=300)
    assert a == summarize_task_type(n, c, 5, interval="bootstrap", seed=7, resamples=300)
    assert a.interval == "bootstrap" and a.pass_hat_k_ci[0] <= a.pass_hat_k <= a.pass_hat_k_ci[1]


def test_curtailed_tickets_count_and_pass_at_1_comes_from_the_first_attempts() -> None:
    # Two tickets stopped after a pass and a failure; two ran all k = 5 attempts.
    n, c = [2, 3, 5, 5], [1, 2, 5, 0]
    summary = summarize_task_type(n, c, 5, first_n=[2, 2, 2, 2], first_c=[1, 2, 2, 0])
    assert (summary.pass_hat_k, summary.pass_at_k) == (0.25, 0.75)
    assert summary.pass_at_1 == pytest.approx((0.5 + 1.0 + 1.0 + 0.0) / 4)
    assert summary.settled_early == 2 and summary.trials == 15


def test_a_ticket_short_of_k_with_one_outcome_is_not_settled() -> None:
    with pytest.raises(ValueError, match="not settled"):
        summarize_task_type([2, 5], [2, 5], 5)


def test_intervals_cover_at_least_nominally_on_the_seed_mixture() -> None:
    # Tickets draw their own success probability from a mixture; the interval targets the population pass^k.
    rng = np.random.default_rng(2024)
    weights, probs = np.array([0.3, 0.6, 0.1]), np.array([0.97, 0.6, 0.05])
    k, trials, tickets = 5, 10, 60
    true_hat = float(weights @ probs**k)
    covered = 0
    runs = 400
    for _ in range(runs):
        p = rng.choice(probs, p=weights, size=tickets)
        c = rng.binomial(trials, p)
        summary = summarize_task_type(np.full(tickets, trials), c, k)
        covered += summary.pass_hat_k_ci[0] <= true_hat <= summary.pass_hat_k_ci[1]
    coverage = covered / runs
    assert coverage >= 0.93, coverage


def test_empty_task_type_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one ticket"):
        summarize_task_type([], [], 1)


def test_bad_level_is_an_error() -> None:
    with pytest.raises(ValueError, match="confidence level"):
        summarize_task_type([3], [1], 1, level=1.5)


def test_the_sample_size_note_gives_the_half_width_the_tables_print() -> None:
    """`passhat replay` prints "[2.7, 97.3] ±47" in its table and the note under it said "about ±48" (rounded up)."""
    from passhat.collector.cli._console import ci_text
    from passhat.collector.reliability._intervals import sample_size_note

    for interval in [(0.027, 0.973), (0.198, 1.0), (0.0, 0.802), (0.441, 0.559)]:
        half = ci_text(interval).rsplit("±", 1)[1]
        assert f"interval is about ±{half} pts" in sample_size_note("pass^3", interval, 2)


def test_the_sample_size_note_counts_one_ticket_in_the_singular() -> None:
    from passhat.collector.reliability._intervals import sample_size_note

    assert sample_size_note("pass^3", (0.0, 0.79), 1).startswith("with 1 ticket the pass^3 interval is about ±40 pts")
    assert sample_size_note("pass^3", (0.0, 0.6), 2).startswith("with 2 tickets the pass^3 interval")
