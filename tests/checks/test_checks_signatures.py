"""Failure signatures: one hand-built trial record per label, and the precedence between labels."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from passhat.checks import (
    NOT_AGENT_FAULT,
    SIGNATURES,
    Check,
    CheckContext,
    FailureSignature,
    RowChange,
    StateDiff,
    ToolCallRecord,
    TrialRecord,
    Verdict,
    all_of,
    classify_failure,
    inserted,
    no_other_writes,
    response_omits,
    unchanged,
    updated,
)

ORDER_O1 = {"id": "O-1", "customer_id": "C-1", "status": "delivered", "refunded": Decimal("0.00")}
ORDER_O3 = {"id": "O-3", "customer_id": "C-2", "status": "delivered", "refunded": Decimal("0.00")}

LOOKUP = ToolCallRecord("find_order", {"order_id": "O-1"}, "ok")
REFUND_OK = ToolCallRecord("refund_order", {"order_id": "O-1"}, "ok", is_write=True)


def _refund_check() -> Check:
    return all_of(
        updated("orders", where={"id": "O-1"}, to={"status": "refunded", "refunded": Decimal("45.50")}),
        no_other_writes(),
        response_omits("alan@example.com"),
    )


def _refund(row: dict[str, Any], **to: Any) -> RowChange:
    return RowChange("orders", {"id": row["id"]}, "update", dict(row), {**row, **to})


def _trial(
    changes: list[RowChange],
    calls: list[ToolCallRecord],
    *,
    termination: str = "customer_stop",
    final: str = "Your refund is done.",
    **extra: Any,
) -> TrialRecord:
    diff = StateDiff(changes)
    verdict = _refund_check()(CheckContext(diff=diff, final_response=final, agent_messages=[final]))
    return TrialRecord(
        passed=verdict.passed,
        verdict=verdict,
        diff=diff,
        tool_calls=calls,
        termination_reason=termination,
        transcript=[("customer", "Please refund O-1."), ("agent", final)],
        final_response=final,
        **extra,
    )


RIGHT = _refund(ORDER_O1, status="refunded", refunded=Decimal("45.50"))


def test_a_passing_trial_has_no_signature() -> None:
    record = _trial([RIGHT], [LOOKUP, REFUND_OK])
    assert record.passed
    assert classify_failure(record) is None


def test_infra_error() -> None:
    record = _trial([], [LOOKUP], termination="infra_error", infra_error="tool server exited with code 1")
    assert classify_failure(record) == _sig("infra_error", "tool server exited with code 1")


def test_a_broken_check_is_infra_not_the_agent() -> None:
    def broken(ctx: CheckContext) -> Verdict:
        raise RuntimeError("database locked")

    verdict = all_of(broken)(CheckContext(diff=StateDiff()))
    record = TrialRecord(False, verdict, StateDiff(), [LOOKUP], "agent_stop", [])
    signature = classify_failure(record)
    assert signature is not None and signature.label == "infra_error"
    assert "RuntimeError: database locked" in signature.evidence
    assert not signature.is_agent_failure


def test_simulator_error_wins_over_any_agent_evidence() -> None:
    wrong = _refund(ORDER_O3, status="refunded")
    record = _trial(
        [wrong],
        [REFUND_OK],
        termination="simulator_error",
        simulator_error="the customer model replied with an empty message",
    )
    signature = classify_failure(record)
    assert signature == _sig("simulator_error", "the customer model replied with an empty message")
    assert signature is not None and not signature.is_agent_failure


def test_wrong_entity() -> None:
    record = _trial([_refund(ORDER_O3, status="refunded", refunded=Decimal("45.50"))], [LOOKUP, REFUND_OK])
    signature = classify_failure(record)
    assert signature is not None and signature.label == "wrong_entity"
    assert signature.evidence.startswith("unexpected write: orders id='O-3' updated")
    assert "no orders row matching id='O-1' was updated" in signature.evidence


def test_wrong_entity_wins_over_an_earlier_tool_error() -> None:
    precondition = ToolCallRecord("refund_order", {"order_id": "O-1"}, "error", "precondition_failed")
    record = _trial([_refund(ORDER_O3, status="refunded")], [precondition, LOOKUP])
    assert _label(record) == "wrong_entity"


def test_wrong_entity_from_a_new_row_filed_against_another_order() -> None:
    filed = RowChange("refunds", {"id": 1}, "insert", None, {"id": 1, "order_id": "O-3", "amount": Decimal("45.50")})
    diff = StateDiff([filed])
    verdict = all_of(inserted("refunds", match={"order_id": "O-1", "amount": "45.50"}), no_other_writes())(
        CheckContext(diff=diff)
    )
    record = TrialRecord(False, verdict, diff, [REFUND_OK], "agent_stop", [])
    signature = classify_failure(record)
    assert signature is not None and signature.label == "wrong_entity"
    assert "refunds id=1 was inserted with order_id='O-3', expected 'O-1'" in signature.evidence


def test_wrong_entity_from_a_guarded_row_of_the_target_table() -> None:
    diff = StateDiff([_refund(ORDER_O3, status="refunded")])
    verdict = all_of(
        updated("orders", where={"id": "O-1"}, to={"status": "refunded"}),
        unchanged("orders", where={"customer_id": "C-2"}),
    )(CheckContext(diff=diff))
    assert _label(TrialRecord(False, verdict, diff, [REFUND_OK], "agent_stop", [])) == "wrong_entity"


def test_a_wrong_amount_on_the_right_row_is_a_wrong_value() -> None:
    record = _trial([_refund(ORDER_O1, status="refunded", refunded=Decimal("50.00"))], [LOOKUP, REFUND_OK])
    signature = classify_failure(record)
    assert signature == _sig("wrong_value", "orders id='O-1': refunded is 50.00, expected 45.50")


def test_policy_violation_confidential_value_revealed() -> None:
    leak = "Done. (The other account on file is alan@example.com.)"
    record = _trial([RIGHT], [LOOKUP, REFUND_OK], final=leak)
    signature = classify_failure(record)
    assert signature is not None and signature.label == "policy_violation"
    assert "reveals 'alan@example.com'" in signature.evidence


def test_tool_usage_precondition() -> None:
    rejected = ToolCallRecord(
        "refund_order",
        {"order_id": "O-1"},
        "error",
        "precondition_failed",
        "identify the customer first",
        True,
    )
    signature = classify_failure(_trial([], [LOOKUP, rejected]))
    assert signature == _sig(
        "tool_usage.precondition",
        "refund_order(order_id='O-1') failed with precondition_failed: identify the customer first, "
        "and was never called successfully again",
    )


def test_a_recovered_precondition_is_not_the_signature() -> None:
    rejected = ToolCallRecord("refund_order", {"order_id": "O-1"}, "error", "precondition_failed", is_write=True)
    record = _trial([], [rejected, LOOKUP, REFUND_OK])
    assert _label(record) == "unresolved"


def test_tool_usage_empty_lookup() -> None:
    empty = ToolCallRecord("find_order", {"order_id": "0-1"}, "empty")
    signature = classify_failure(_trial([], [empty]))
    assert signature == _sig(
        "tool_usage.empty_lookup",
        "find_order(order_id='0-1') came back empty, and the agent never got a result from it",
    )


def test_tool_usage_error_not_retried() -> None:
    failed = ToolCallRecord(
        "refund_order", {"order_id": "O-1", "amount": 99}, "error", "invalid_argument", is_write=True
    )
    record = _trial([], [LOOKUP, failed, failed])
    signature = classify_failure(record)
    assert signature is not None and signature.label == "tool_usage.error_not_retried"
    assert "failed with invalid_argument" in signature.evidence


def test_error_not_retried_points_at_the_error_the_agent_gave_up_on() -> None:
    failed = ToolCallRecord(
        "refund_order", {"order_id": "O-1", "amount": 99}, "error", "invalid_argument", is_write=True
    )
    retried = ToolCallRecord(
        "refund_order", {"order_id": "O-1", "amount": 98}, "error", "insufficient_funds", is_write=True
    )
    signature = classify_failure(_trial([], [LOOKUP, failed, retried]))
    assert signature is not None and signature.label == "tool_usage.error_not_retried"
    assert signature.evidence.startswith("refund_order(order_id='O-1', amount=98) failed with insufficient_funds")


def test_no_write() -> None:
    record = _trial([], [LOOKUP, ToolCallRecord("get_customer", {"customer_id": "C-1"}, "ok")])
    signature = classify_failure(record)
    assert signature == _sig(
        "no_write",
        "looked up with find_order, get_customer but never called a write tool; nothing changed; "
        "the trial ended by customer_stop",
    )


def test_unresolved() -> None:
    record = _trial([], [], termination="step_limit", final="Let me check on that.")
    signature = classify_failure(record)
    assert signature is not None and signature.label == "unresolved"
    assert signature.evidence.startswith("ended by step_limit without resolution: ")
    assert signature.evidence.endswith("the agent's last message: 'Let me check on that.'")


def test_every_label_is_listed_in_precedence_order() -> None:
    assert SIGNATURES == (
        "infra_error",
        "simulator_error",
        "wrong_entity",
        "wrong_value",
        "policy_violation",
        "tool_usage.precondition",
        "tool_usage.empty_lookup",
        "tool_usage.error_not_retried",
        "no_write",
        "unresolved",
    )
    assert {"infra_error", "simulator_error"} == NOT_AGENT_FAULT


@pytest.mark.parametrize("label", ["wrong_entity", "wrong_value", "policy_violation", "no_write", "unresolved"])
def test_agent_labels_count_against_the_agent(label: str) -> None:
    assert FailureSignature(label, "").is_agent_failure


def _sig(label: str, evidence: str) -> FailureSignature:
    return FailureSignature(label, evidence)


def _label(record: TrialRecord) -> str | None:
    signature = classify_failure(record)
    return None if signature is None else signature.label


def test_a_write_on_a_missing_row_is_not_an_empty_lookup() -> None:
    missing = ToolCallRecord("refund_order", {"order_id": "O-9"}, "error", "not_found", "no such order", True)
    assert _label(_trial([], [LOOKUP, missing])) == "tool_usage.error_not_retried"


def _inquiry(calls: list[ToolCallRecord], final: str, termination: str = "customer_stop") -> TrialRecord:
    # A read-only inquiry: nothing may change and the reply must carry the tracking number.
    from passhat.checks import response_contains

    check = all_of(no_other_writes(), response_contains("1Z999"))
    diff = StateDiff([])
    verdict = check(CheckContext(diff=diff, final_response=final, agent_messages=[final]))
    return TrialRecord(
        passed=verdict.passed,
        verdict=verdict,
        diff=diff,
        tool_calls=calls,
        termination_reason=termination,
        transcript=[("customer", "Where is my order?"), ("agent", final)],
        final_response=final,
    )


def test_an_inquiry_the_agent_left_without_the_answer_is_unresolved() -> None:
    record = _inquiry([LOOKUP], "A colleague will follow up.", termination="agent_stop")
    assert _label(record) == "unresolved"


def test_an_inquiry_answered_without_the_fact_after_good_lookups_is_a_wrong_reply() -> None:
    record = _inquiry([LOOKUP], "Your parcel is on its way, tracking 1Z111.")
    assert _label(record) == "policy_violation"


def test_an_inquiry_that_lost_its_lookup_is_an_empty_lookup() -> None:
    record = _inquiry([ToolCallRecord("find_order", {"order_id": "0-1"}, "empty")], "I could not find it.")
    assert _label(record) == "tool_usage.empty_lookup"


def test_a_missing_disclosure_after_the_right_write_is_a_policy_violation() -> None:
    from passhat.checks import response_contains

    check = all_of(
        updated("orders", where={"id": "O-1"}, to={"status": "refunded", "refunded": Decimal("45.50")}),
        no_other_writes(),
        response_contains("5 to 7 business days"),
    )
    diff = StateDiff([RIGHT])
    verdict = check(CheckContext(diff=diff, final_response="Done.", agent_messages=["Done."]))
    record = TrialRecord(
        passed=verdict.passed,
        verdict=verdict,
        diff=diff,
        tool_calls=[LOOKUP, REFUND_OK],
        termination_reason="customer_stop",
        transcript=[("agent", "Done.")],
        final_response="Done.",
    )
    assert _label(record) == "policy_violation"


def test_a_domains_own_error_types_are_read_through_its_vocabulary() -> None:
    # IT & HR calls a skipped step "approval_missing" and an empty lookup "no_such_employee".
    vocabulary = {"approval_missing": "precondition_failed", "no_such_employee": "not_found"}
    skipped = ToolCallRecord("grant_access", {"employee_id": "E1"}, "error", "approval_missing", is_write=True)
    assert _label(_trial([], [LOOKUP, skipped], error_categories=vocabulary)) == "tool_usage.precondition"
    missing = ToolCallRecord("find_employee", {"employee_id": "E9"}, "error", "no_such_employee")
    assert _label(_trial([], [missing], error_categories=vocabulary)) == "tool_usage.empty_lookup"


def test_without_the_vocabulary_an_unknown_error_type_is_only_an_error() -> None:
    skipped = ToolCallRecord("grant_access", {"employee_id": "E1"}, "error", "approval_missing", is_write=True)
    assert _label(_trial([], [LOOKUP, skipped])) == "tool_usage.error_not_retried"
