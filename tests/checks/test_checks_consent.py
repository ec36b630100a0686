"""confirmed_before: the agent proposed the write with its key values, the customer said yes, then the write."""

from __future__ import annotations

import pytest

from passhat.checks import (
    ANY_ACTION,
    CheckContext,
    StateDiff,
    ToolCallRecord,
    TrialRecord,
    Turn,
    classify_failure,
    confirmed_before,
    rerun,
    with_consent,
)

PROPOSAL = Turn("agent", "I will cancel order #W100 because it was ordered by mistake. Shall I go ahead?")
YES = Turn("customer", "Yes, please.", consent=ANY_ACTION)
CONVERSATION = (
    Turn("customer", "Please cancel my order #W100."),
    PROPOSAL,
    YES,
    Turn("agent", "Done: order #W100 is cancelled."),
)
RULE = {"cancel_pending_order": ["order_id"]}


def _cancel(turn: int | None, order_id: str = "#W100") -> ToolCallRecord:
    return ToolCallRecord("cancel_pending_order", {"order_id": order_id}, "ok", is_write=True, turn=turn)


def _verdict(calls: list[ToolCallRecord], conversation: tuple[Turn, ...] = CONVERSATION):  # type: ignore[no-untyped-def]
    ctx = CheckContext(diff=StateDiff(), conversation=conversation, tool_calls=tuple(calls))
    return confirmed_before(RULE)(ctx)


def test_a_write_after_the_customers_yes_to_its_proposal_passes() -> None:
    verdict = _verdict([ToolCallRecord("get_order", {"order_id": "#W100"}, "ok", turn=1), _cancel(3)])
    assert verdict.passed and verdict.role == "consent"


def test_a_write_before_the_yes_fails_naming_the_turns() -> None:
    verdict = _verdict([_cancel(1)])
    assert not verdict.passed
    assert verdict.explanation == (
        "cancel_pending_order(order_id='#W100') was written in turn 1 without the customer's yes: "
        "the customer agreed only in turn 2, after the write in turn 1"
    )


def test_a_yes_to_a_proposal_that_did_not_state_the_key_values_does_not_count() -> None:
    vague = (CONVERSATION[0], Turn("agent", "Shall I cancel it?"), YES, CONVERSATION[3])
    verdict = _verdict([_cancel(3)], vague)
    assert "the agent's proposal did not state order_id='#W100'" in verdict.explanation


def test_a_yes_to_another_action_does_not_cover_this_write() -> None:
    other = (CONVERSATION[0], PROPOSAL, Turn("customer", "Yes.", consent="modify_pending_order_address"))
    assert not _verdict([_cancel(3)], other).passed
    named = (CONVERSATION[0], PROPOSAL, Turn("customer", "Yes.", consent="cancel_pending_order"))
    assert _verdict([_cancel(3)], named).passed


def test_a_write_to_another_order_than_the_one_proposed_is_unconfirmed() -> None:
    assert not _verdict([_cancel(3, "#W200")]).passed


def test_failed_writes_and_calls_of_unknown_position_are_not_judged() -> None:
    refused = ToolCallRecord(
        "cancel_pending_order", {"order_id": "#W100"}, "error", "not_allowed", is_write=True, turn=1
    )
    assert _verdict([refused, _cancel(None)]).passed


def test_a_stored_consent_check_reruns_from_its_spec() -> None:
    ctx = CheckContext(diff=StateDiff(), conversation=CONVERSATION, tool_calls=(_cancel(1),))
    verdict = confirmed_before(RULE)(ctx)
    assert verdict.spec == {"check": "confirmed_before", "args": {"actions": RULE}}
    assert rerun(verdict.spec, ctx) == verdict


def test_with_consent_keeps_the_task_check_and_adds_no_line_of_its_own() -> None:
    ctx = CheckContext(diff=StateDiff(), conversation=CONVERSATION, tool_calls=(_cancel(1),))
    verdict = with_consent(confirmed_before({"refund": []}), RULE)(ctx)
    assert not verdict.passed and [child.passed for child in verdict.children] == [True, False]
    assert verdict.explanation.startswith("cancel_pending_order(order_id='#W100') was written in turn 1")


def test_acting_before_the_yes_is_a_policy_violation() -> None:
    calls = [_cancel(1)]
    transcript = [(turn.role, turn.text) for turn in CONVERSATION]
    record = TrialRecord(
        passed=False,
        verdict=_verdict(calls),
        diff=StateDiff(),
        tool_calls=calls,
        termination_reason="customer_stop",
        transcript=transcript,
        consents={2: ANY_ACTION},
    )
    signature = classify_failure(record)
    assert signature is not None and signature.label == "policy_violation"
    assert "without the customer's yes" in signature.evidence
    assert record.conversation[2] == YES


def test_a_rule_is_tool_names_and_argument_names() -> None:
    with pytest.raises(TypeError, match="maps a tool name"):
        confirmed_before(["cancel_pending_order"])  # type: ignore[arg-type]
