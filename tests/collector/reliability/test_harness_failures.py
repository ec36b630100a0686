"""Trials the harness broke: in no figure whatever path reads them, and reported by cause with a fitting fix."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from passhat.collector.alerts import counts_from_trials
from passhat.collector.reliability import agent_trials, error_fix, harness_failures, summarize_trials
from passhat.collector.store import TrialRow

TASK_TYPES = ("refund", "cancel", "exchange")
WHEN = dt.datetime(2026, 11, 23, tzinfo=dt.UTC)
CAUSES = (
    ("infra_error", "agent raised DomainError('agent service http://127.0.0.1:8787/turn answered 404: not here')"),
    ("infra_error", "tool server failed: ExceptionGroup('unhandled errors in a TaskGroup', [ConnectError()])"),
    ("simulator_error", "customer failed: APIConnectionError('Connection error.')"),
)


def _row(task_type: str, ticket: str, attempt: int, passed: bool, label: str | None, evidence: str | None) -> TrialRow:
    return TrialRow(
        run_id="run-1", ticket_id=ticket, task_type=task_type, attempt=attempt, passed=passed,
        termination_reason=label or "customer_stop", started_at=WHEN, duration_s=1.0, domain="retail",
        failure_label=label, failure_evidence=evidence,
        infra_error=evidence if label == "infra_error" else None,
        simulator_error=evidence if label == "simulator_error" else None,
    )  # fmt: skip


tickets = st.lists(
    st.tuples(st.sampled_from(TASK_TYPES), st.lists(st.booleans(), min_size=1, max_size=6)), min_size=1, max_size=12
)
planted = st.lists(
    st.tuples(st.sampled_from(TASK_TYPES), st.integers(0, 14), st.integers(0, 9), st.sampled_from(CAUSES)),
    max_size=25,
)


def _agent_rows(drawn: list[tuple[str, list[bool]]]) -> list[TrialRow]:
    rows = []
    for index, (task_type, outcomes) in enumerate(drawn):
        for attempt, passed in enumerate(outcomes):
            # Agent trials take even attempts: planted failures may come before, between or after them.
            rows.append(_row(task_type, f"T-{index}", 2 * attempt, passed, None if passed else "no_write", None))
    return rows


def _planted_rows(drawn: list[tuple[str, int, int, tuple[str, str]]]) -> list[TrialRow]:
    # A planted failure joins an existing ticket or makes a new one (indices beyond the drawn tickets).
    return [
        _row(task_type, f"T-{ticket}", 2 * attempt + 1, False, label, evidence)
        for task_type, ticket, attempt, (label, evidence) in drawn
    ]


def _figures(rows: list[TrialRow], k: int, min_trials: int | None) -> list[dict[str, object]]:
    found = []
    for row in summarize_trials(rows, k, min_trials=min_trials):
        figures = row.to_dict()
        figures.pop("harness_failures")
        found.append(figures)
    return found


@settings(max_examples=150, deadline=None)
@given(tickets, planted, st.integers(1, 4), st.sampled_from([None, 1, 2]))
def test_planted_infrastructure_failures_leave_every_figure_unchanged(
    agent: list[tuple[str, list[bool]]], broken: list[tuple[str, int, int, tuple[str, str]]], k: int, first: int | None
) -> None:
    clean = _agent_rows(agent)
    # Same-ticket rows keep their task type: a planted row of another task type on a drawn ticket is a new ticket.
    noisy = clean + [
        row if row.ticket_id not in {r.ticket_id for r in clean} else _retype(row, clean)
        for row in _planted_rows(broken)
    ]
    assert _figures(noisy, k, first) == _figures(clean, k, first)
    counts_clean, counts_noisy = counts_from_trials("2026-W48", clean), counts_from_trials("2026-W48", noisy)
    assert counts_noisy == counts_clean  # the alerts', traffic's and mixture's input
    assert len(agent_trials(noisy)) == len(clean)
    assert sum(group.trials for group in harness_failures(noisy)) == len(noisy) - len(clean)
    shown = {r.task_type: r.harness_failures for r in summarize_trials(noisy, k, min_trials=first)}
    for task_type, count in shown.items():
        assert count == sum(1 for row in noisy[len(clean) :] if row.task_type == task_type)


def _retype(row: TrialRow, clean: list[TrialRow]) -> TrialRow:
    owner = next(r for r in clean if r.ticket_id == row.ticket_id)
    return _row(owner.task_type, row.ticket_id, row.attempt, False, row.failure_label, row.failure_evidence)


def test_harness_failures_are_grouped_by_error_type_and_message_whatever_differs_between_trials() -> None:
    rows = [
        _row("refund", "T-1", 0, False, "infra_error", "agent raised ReadTimeout('timed out after 120 s on :41003')"),
        _row("refund", "T-2", 0, False, "infra_error", "agent raised ReadTimeout('timed out after 118 s on :38221')"),
        _row("refund", "T-3", 0, False, "simulator_error", "customer failed: RateLimitError('429 too many requests')"),
        _row("refund", "T-4", 0, False, "no_write", "retrieved everything and never wrote"),
    ]
    groups = harness_failures(rows)
    assert [(g.trials, g.signature, g.error_type) for g in groups] == [
        (2, "infra_error", "ReadTimeout"),
        (1, "simulator_error", "RateLimitError"),
    ]
    assert groups[0].message == "timed out after 120 s on :41003"  # the first trial's own words
    assert groups[1].message == "429 too many requests"


def test_a_conflicting_tool_name_is_explained_as_the_agents_own_tool() -> None:
    evidence = (
        'agent raised UserError("Function toolset defines a tool whose name conflicts with existing tool from '
        "the agent: 'get_order'. Rename the tool.\")"
    )
    [group] = harness_failures([_row("refund", "T-1", 0, False, "infra_error", evidence)])
    assert group.error_type == "UserError"
    assert "the agent already has a tool named get_order" in group.fix


def test_each_kind_of_harness_failure_gets_a_fix_that_names_it() -> None:
    assert "is the agent service running at http://127.0.0.1:9/turn?" in error_fix(
        "infra_error", "DomainError", "agent service http://127.0.0.1:9/turn could not be reached: ConnectError()"
    )
    assert "answered 404" in error_fix("infra_error", "DomainError", "the agent at http://h/turn answered 404")
    assert "timed out" not in error_fix("simulator_error", "APIError", "quota exceeded")
    assert "never answered" in error_fix("infra_error", "McpError", "MCP error -32001: Request timed out")
    assert "simulated customer" in error_fix("simulator_error", "APIConnectionError", "Connection error.")


def test_only_a_check_that_broke_is_told_to_fix_the_check() -> None:
    """A check's own error says "the check NAME raised ..." (or returned something else); an adapter's refusal that
    asks to "check the names" is the agent's setup, not a check (it was told to fix the check before)."""
    for broke in (
        "the check refund_written raised KeyError: 'amount'",
        "the check order cancelled returned NoneType; a check returns a Verdict or a bool",
    ):
        assert "fix the check" in error_fix("infra_error", "InfrastructureError", broke)
    evidence = (
        "agent raised ValueError('langgraph_agent: approval_required names cancel_order, which the domain does not "
        "serve (it serves cancel_pending_order, get_order): check the names')"
    )
    [group] = harness_failures([_row("cancel", "T-1", 0, False, "infra_error", evidence)])
    assert group.error_type == "ValueError"
    assert "check" not in group.fix
    assert group.fix.startswith("the agent raised an exception on its turn (from its adapter's settings")


def test_an_exception_out_of_the_agents_turn_is_not_called_a_setup_failure() -> None:
    """A tool of the agent's own, or its model, raising in the middle of a conversation was told "the agent's setup
    failed before it could work"; the agent factory raising before the trial still is."""
    turn = "agent raised RuntimeError('members service unavailable')"
    factory = "the agent factory shop:build raised TypeError('build() missing 1 required positional argument')"
    mid, before = harness_failures(
        [_row("cancel", "T-1", 0, False, "infra_error", turn), _row("cancel", "T-1", 1, False, "infra_error", turn),
         _row("cancel", "T-2", 0, False, "infra_error", factory)]
    )  # fmt: skip
    assert (mid.error_type, mid.message, mid.trials) == ("RuntimeError", "members service unavailable", 2)
    assert mid.fix.startswith("the agent raised an exception on its turn") and "AgentError" in mid.fix
    assert "setup failed" not in mid.fix
    assert "shop:build" in before.message and before.fix.startswith("the agent's setup failed before it could work")


def test_a_ticket_the_harness_broke_is_listed_with_its_fix_said_once() -> None:
    """The reason a ticket was not measured quotes the first cause, and its fix says to replay again once (it
    read "fix it and replay again; then replay again")."""
    from passhat.collector.loop._cycle import _settled
    from passhat.collector.store import TicketTally

    factory = "the agent factory app:build raised TypeError('build() takes 1 positional argument')"
    tool_server = "tool server failed: ExceptionGroup('unhandled errors in a TaskGroup', [ConnectError()])"
    broken = [_row("refund", "T-1", a, False, "infra_error", factory) for a in range(3)]
    broken += [_row("cancel", "T-2", a, False, "infra_error", tool_server) for a in range(3)]
    tallies = [
        TicketTally("retail", "refund", "T-1", 0, 0, 0, 0, harness_errors=3),
        TicketTally("retail", "cancel", "T-2", 0, 0, 0, 0, harness_errors=3),
    ]
    kept, dropped = _settled(tallies, 3, broken)
    assert kept == []
    by_ticket = {entry.ticket_id: entry for entry in dropped}
    assert "3 of 3 trials ended in a simulator or infrastructure error" in by_ticket["T-1"].reason
    assert "app:build raised TypeError" in by_ticket["T-1"].reason
    assert by_ticket["T-1"].fix.count("again") == 1 and by_ticket["T-1"].fix.endswith("replay again")
    assert by_ticket["T-2"].fix.count("again") == 1 and by_ticket["T-2"].fix.endswith("; then replay again")
