"""Failure shapes and the name each gets, read from what each check declares about itself (its role)."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from typing import Any

import pytest

from passhat.checks import (
    ROLES,
    CheckContext,
    Diagnostic,
    RowChange,
    StateDiff,
    ToolCallRecord,
    TrialRecord,
    Verdict,
    all_of,
    check,
    classify_failure,
    inserted,
    no_other_writes,
    response_contains,
    updated,
)


def _label(check_: Any, changes: list[RowChange], calls: list[ToolCallRecord], **record: Any) -> str | None:
    diff = StateDiff(changes)
    final = record.pop("final", "Done.")
    verdict = check_(CheckContext(diff=diff, final_response=final, agent_messages=[final]))
    signature = classify_failure(
        TrialRecord(
            passed=verdict.passed,
            verdict=verdict,
            diff=diff,
            tool_calls=calls,
            termination_reason=record.pop("termination", "customer_stop"),
            transcript=[("agent", final)],
            final_response=final,
            **record,
        )
    )
    return None if signature is None else signature.label


def _update(table: str, key: dict[str, Any], before: dict[str, Any], **after: Any) -> RowChange:
    return RowChange(table, key, "update", {**key, **before}, {**key, **before, **after})


def _insert(table: str, key: dict[str, Any], **row: Any) -> RowChange:
    return RowChange(table, key, "insert", None, {**key, **row})


LOOKUP = ToolCallRecord("get_account", {"account_id": "A1"}, "ok")
WRITE = ToolCallRecord("transfer", {"from_account_id": "A1", "to_account_id": "A2"}, "ok", is_write=True)


@check(name="acme.balance_is", role="required_write")
def balance_is(account_id: str, balance: Decimal) -> Any:
    """A team's own check: it declares itself a required write, and reports like one."""

    def run(ctx: CheckContext) -> Verdict:
        for change in ctx.diff.for_table("accounts"):
            if change.key == {"account_id": account_id} and change.after is not None:
                if Decimal(str(change.after["balance"])) == balance:
                    return Verdict(True, "acme.balance_is")
                message = f"accounts {account_id}: balance is {change.after['balance']}, expected {balance}"
                diagnostic = Diagnostic(
                    "acme.balance_is",
                    message,
                    "accounts",
                    {"account_id": account_id},
                    "balance",
                    balance,
                    change.after["balance"],
                )
                return Verdict(False, "acme.balance_is", [diagnostic])
        return Verdict(False, "acme.balance_is", [Diagnostic("acme.balance_is", "not changed", "accounts")])

    return run


def test_a_teams_own_check_is_classified_by_its_role_like_a_built_in_one() -> None:
    change = _update("accounts", {"account_id": "A1"}, {"balance": 100}, balance=70)
    built_in = all_of(updated("accounts", {"account_id": "A1"}, {"balance": Decimal(60)}))
    own = all_of(balance_is("A1", Decimal(60)))
    assert _label(built_in, [change], [LOOKUP, WRITE]) == _label(own, [change], [LOOKUP, WRITE]) == "wrong_value"
    assert own(CheckContext(diff=StateDiff([change]))).children[0].role == "required_write"
    # Undeclared, the same diagnostic says nothing the classifier can read: the trial is only unresolved.
    anonymous = all_of(lambda ctx: dataclasses.replace(balance_is("A1", Decimal(60))(ctx), role=None))
    assert _label(anonymous, [change], [LOOKUP, WRITE]) == "unresolved"


def test_a_role_is_one_of_the_declared_roles() -> None:
    assert "required_write" in ROLES
    with pytest.raises(ValueError, match="a role is one of"):
        check(name="acme.bad", role="important")(lambda: None)


def test_a_transfer_with_a_wrong_amount_is_a_wrong_value_not_a_wrong_entity() -> None:
    # Both legs were written with 30 instead of 40: each expected row's closest new row is its own leg.
    transfer = all_of(
        inserted("ledger", {"account_id": "A1", "amount": Decimal(-40)}),
        inserted("ledger", {"account_id": "A2", "amount": Decimal(40)}),
        no_other_writes(),
    )
    legs = [
        _insert("ledger", {"entry_id": 1}, account_id="A1", amount=-30),
        _insert("ledger", {"entry_id": 2}, account_id="A2", amount=30),
    ]
    assert _label(transfer, legs, [LOOKUP, WRITE]) == "wrong_value"


def test_two_new_rows_for_one_on_the_right_reservation_is_a_wrong_value() -> None:
    bags = all_of(inserted("bags", {"reservation_id": "R1"}, count=1), no_other_writes())
    two = [_insert("bags", {"bag_id": n}, reservation_id="R1") for n in (1, 2)]
    assert _label(bags, two, [WRITE]) == "wrong_value"


def test_a_chain_stopped_before_its_last_step_on_a_row_an_earlier_step_touched_is_unresolved() -> None:
    # The dispute step moved the balance from -35 to 0; the waiver (a new row and 35 more) never came.
    chain = all_of(
        updated("accounts", {"account_id": "A1"}, {"balance": 35}),
        inserted("waivers", {"account_id": "A1", "amount": 35}),
        no_other_writes(),
    )
    half = [_update("accounts", {"account_id": "A1"}, {"balance": -35}, balance=0)]
    assert _label(chain, half, [LOOKUP, WRITE]) == "unresolved"


def test_a_refused_step_never_retried_is_named_by_the_refusal_not_as_a_policy_violation() -> None:
    chain = all_of(
        updated("claims", {"claim_id": "C1"}, {"status": "valued", "payout": 900}),
        no_other_writes(),
    )
    valued = [_update("claims", {"claim_id": "C1"}, {"status": "open", "payout": 0}, status="valued")]
    refused = ToolCallRecord("issue_payment", {"claim_id": "C1"}, "error", "valuation_missing", is_write=True)
    label = _label(chain, valued, [WRITE, refused], error_categories={"valuation_missing": "precondition_failed"})
    assert label == "tool_usage.precondition"


def test_an_unrequested_action_on_the_right_employee_is_a_policy_violation() -> None:
    task = all_of(
        updated("accounts", {"employee_id": "E1"}, {"status": "disabled"}),
        inserted("audit", {"employee_id": "E1", "action": "disable"}),
        no_other_writes(),
    )
    done = [
        _update("accounts", {"employee_id": "E1"}, {"status": "active"}, status="disabled"),
        _insert("audit", {"audit_id": 1}, employee_id="E1", action="disable"),
        _insert("audit", {"audit_id": 2}, employee_id="E1", action="grant_vpn"),
        _insert("vpn_profiles", {"profile_id": 9}, employee_id="E1"),
    ]
    assert _label(task, done, [WRITE]) == "policy_violation"
    other = [*done[:2], _insert("audit", {"audit_id": 2}, employee_id="E2", action="disable")]
    assert _label(task, other, [WRITE]) == "wrong_entity"


def test_a_wrong_answer_to_an_inquiry_is_a_policy_violation() -> None:
    inquiry = all_of(no_other_writes(), response_contains("2026-03-14"))
    lookup = ToolCallRecord("get_waivers", {"account_id": "A1"}, "ok")
    assert _label(inquiry, [], [lookup], final="Your last waiver was on 2026-01-02.") == "policy_violation"
    # Closing without an answer, the agent ending the conversation itself, stays unresolved.
    assert _label(inquiry, [], [lookup], final="A colleague will call.", termination="agent_stop") == "unresolved"


def test_a_false_done_after_the_backends_expected_refusal_is_a_policy_violation() -> None:
    refusal = all_of(no_other_writes(), response_contains(patterns=[r"already"]))
    refused = ToolCallRecord("issue_compensation", {"reservation_id": "R1"}, "error", "already_compensated", True)
    categories = {"already_compensated": "conflict"}
    label = _label(refusal, [], [refused], final="Done: compensation issued.", error_categories=categories)
    assert label == "policy_violation"
    # A broken argument the agent never fixed is still its tool usage.
    broken = ToolCallRecord("issue_compensation", {"reservation_id": ""}, "error", "bad_request", is_write=True)
    label = _label(
        refusal, [], [broken], final="Sorry, an error.", error_categories={"bad_request": "invalid_argument"}
    )
    assert label == "tool_usage.error_not_retried"
