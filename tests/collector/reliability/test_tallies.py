"""Figures from a store's per-ticket tallies equal the figures from the trials they count."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from passhat.collector.reliability import summarize_tallies, summarize_trials
from passhat.collector.store import TrialRow, tallies_of_trials

START = dt.datetime(2026, 11, 23, tzinfo=dt.UTC)


def _trial(ticket: int, attempt: int, passed: bool, task_type: str, harness: bool) -> TrialRow:
    return TrialRow(
        run_id="run",
        ticket_id=f"T-{ticket}",
        task_type=task_type,
        attempt=attempt,
        passed=passed and not harness,
        termination_reason="agent_stop",
        started_at=START,
        duration_s=1.0,
        domain="retail",
        failure_label=None if passed and not harness else ("infra_error" if harness else "wrong_entity"),
        infra_error="ConnectionError: refused" if harness else None,
    )


tickets = st.lists(
    st.tuples(
        st.sampled_from(["refund", "exchange"]),
        st.lists(st.booleans(), max_size=8),
        st.lists(st.integers(min_value=0, max_value=7), max_size=2),  # attempts that hit a harness error
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(tickets=tickets, k=st.integers(min_value=1, max_value=6), curtailed=st.booleans())
def test_tallies_give_the_figures_of_their_trials(
    tickets: list[tuple[str, list[bool], list[int]]], k: int, curtailed: bool
) -> None:
    trials = []
    for number, (task_type, outcomes, broken) in enumerate(tickets):
        for attempt, passed in enumerate(outcomes):
            trials.append(_trial(number, attempt, passed, task_type, attempt in broken))
    min_trials = 2 if curtailed else None
    expected = summarize_trials(trials, k, min_trials=min_trials)  # it leaves the harness's failures out itself
    got = summarize_tallies(tallies_of_trials(trials), k, min_trials=min_trials)
    assert [_rounded(row.to_dict()) for row in got] == [_rounded(row.to_dict()) for row in expected]


def _rounded(value: object) -> object:
    """Figures equal up to the order their tickets were summed in."""
    if isinstance(value, float):
        return round(value, 12)
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    return value


def test_a_ticket_whose_every_trial_hit_the_harness_is_not_a_ticket() -> None:
    trials = [_trial(1, a, False, "refund", True) for a in range(3)] + [
        _trial(2, a, True, "refund", False) for a in range(3)
    ]
    (row,) = summarize_tallies(tallies_of_trials(trials), 3)
    assert (row.summary.tickets, row.unsettled_tickets, row.signatures, row.harness_failures) == (1, 0, {}, 3)
