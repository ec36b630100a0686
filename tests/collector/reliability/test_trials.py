"""Per-task-type figures from graded trials: the table both `passhat replay` sources print."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from passhat.collector.reliability import summarize_task_type, summarize_trials


@dataclass(frozen=True)
class Trial:
    """A graded trial as a summary reads it (stored rows and sandbox results have the same attributes)."""

    domain: str | None
    task_type: str
    ticket_id: str
    passed: bool
    failure_label: str | None = None
    attempt: int = 0


def _ticket(ticket: str, outcomes: str, task_type: str = "refund", domain: str | None = "retail") -> list[Trial]:
    """One ticket's trials: ``p`` passed, ``f`` failed as no_write."""
    return [
        Trial(domain, task_type, ticket, o == "p", None if o == "p" else "no_write", attempt)
        for attempt, o in enumerate(outcomes)
    ]


def test_each_task_type_is_summarised_from_its_tickets_counts() -> None:
    trials = _ticket("T-1", "ppp") + _ticket("T-2", "pfp")
    [row] = summarize_trials(trials, 3)
    assert (row.domain, row.task_type) == ("retail", "refund")
    assert row.summary == summarize_task_type(np.array([3, 3]), np.array([3, 2]), 3)


def test_rows_come_in_domain_then_task_type_order() -> None:
    trials = _ticket("T-1", "pp", "return") + _ticket("T-2", "pp", "cancel") + _ticket("B-1", "pp", "dispute", "bank")
    assert [(r.domain, r.task_type) for r in summarize_trials(trials, 2)] == [
        ("bank", "dispute"),
        ("retail", "cancel"),
        ("retail", "return"),
    ]


def test_tickets_with_fewer_than_k_trials_are_left_out_of_the_figures() -> None:
    trials = _ticket("T-1", "ppp") + _ticket("T-2", "f") + _ticket("X-1", "p", "exchange")
    [row] = summarize_trials(trials, 3)
    assert (row.task_type, row.summary.tickets) == ("refund", 1)


def test_signatures_count_every_failed_trial_of_the_task_type() -> None:
    # Even those of a ticket short of k trials: the failure happened, whatever the figures can say.
    [row] = summarize_trials(_ticket("T-1", "ppp") + _ticket("T-2", "f"), 3)
    assert row.signatures == {"no_write": 1}


def test_failed_trials_are_counted_by_signature() -> None:
    trials = [*_ticket("T-1", "pf"), Trial("retail", "refund", "T-2", False, "wrong_entity"), *_ticket("T-2", "f")]
    [row] = summarize_trials(trials, 2)
    assert row.signatures == {"no_write": 2, "wrong_entity": 1}


def test_a_trial_without_a_domain_counts_under_unknown() -> None:
    [row] = summarize_trials(_ticket("T-1", "pp", domain=None), 2)
    assert row.domain == "unknown"


def test_the_json_row_names_the_figures_the_cli_prints() -> None:
    [row] = summarize_trials(_ticket("T-1", "pf"), 2)
    assert list(row.to_dict()) == [
        "domain",
        "task_type",
        "tickets",
        "trials_per_ticket",
        "trials",
        "settled_early",
        "pass_at_1",
        "pass_at_k",
        "pass_hat_k",
        "pass_at_1_ci",
        "pass_at_k_ci",
        "pass_hat_k_ci",
        "pass_hat_k_half_width",
        "sample_size",
        "unsettled_tickets",
        "harness_failures",
        "signatures",
    ]


def test_a_curtailed_ticket_counts_once_settled_and_an_unsettled_one_is_counted_apart() -> None:
    # "pf" settled pass^3 at 2 trials (one pass, one fail); "pp" has not (it could still fail at the third).
    [row] = summarize_trials(_ticket("T-1", "pf") + _ticket("T-2", "pp") + _ticket("T-3", "ppp"), 3)
    assert row.summary.tickets == 2 and row.unsettled_tickets == 1
