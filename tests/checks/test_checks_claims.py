"""The claim rule: a check claims the columns it names, not the whole row; anything else that changed is damage."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import Engine

from passhat.checks import (
    BuiltCheck,
    CheckContext,
    TrialRecord,
    all_of,
    build_check,
    classify_failure,
    inserted,
    no_other_writes,
    record_changes,
    take_snapshot,
    unordered,
    updated,
    values_equal,
)


def _run(engine: Engine, *statements: str) -> CheckContext:
    initial = take_snapshot(engine)
    with record_changes(engine) as log, engine.begin() as connection:
        for statement in statements:
            connection.exec_driver_sql(statement)
    return CheckContext(diff=log.diff(), initial=initial)


REFUND = "UPDATE orders SET status = 'refunded' WHERE id = 'O-1'"
REFUND_ROW = "INSERT INTO refunds (order_id, amount, reason) VALUES ('O-1', 45.50, 'damaged')"


def _refund_check() -> BuiltCheck:
    return all_of(
        updated("orders", where={"id": "O-1"}, to={"status": "refunded"}),
        inserted("refunds", match={"order_id": "O-1", "amount": "45.50"}),
        no_other_writes(),
    )


def test_another_column_of_a_claimed_row_is_reported_as_a_collateral_write(engine: Engine) -> None:
    ctx = _run(engine, REFUND, REFUND_ROW, "UPDATE orders SET customer_id = 'C-2' WHERE id = 'O-1'")
    verdict = _refund_check()(ctx)
    assert not verdict.passed
    [problem] = [d for d in verdict.failures() if d.check == "no_other_writes"]
    assert (problem.table, problem.key, problem.field, problem.expected, problem.actual) == (
        "orders",
        {"id": "O-1"},
        "customer_id",
        "C-1",
        "C-2",
    )
    assert problem.message == (
        "collateral write: orders id='O-1': customer_id 'C-1' -> 'C-2' (the task changes only status of this row)"
    )


def test_each_collateral_column_gets_its_own_diagnostic(engine: Engine) -> None:
    ctx = _run(engine, "UPDATE orders SET status = 'refunded', customer_id = 'C-2', total = 1 WHERE id = 'O-1'")
    verdict = all_of(updated("orders", where={"id": "O-1"}, to={"status": "refunded"}), no_other_writes())(ctx)
    assert [d.field for d in verdict.failures() if d.check == "no_other_writes"] == ["customer_id", "total"]


def test_the_right_writes_alone_pass(engine: Engine) -> None:
    verdict = _refund_check()(_run(engine, REFUND, REFUND_ROW))
    assert verdict.passed, verdict.explanation


def test_a_column_the_check_allows_may_change_to_any_value(engine: Engine) -> None:
    ctx = _run(engine, "UPDATE orders SET status = 'refunded', total = 1 WHERE id = 'O-1'")
    allowing = all_of(updated("orders", {"id": "O-1"}, {"status": "refunded"}, allow=["total"]), no_other_writes())
    assert allowing(ctx).passed
    assert updated("orders", {"id": "O-1"}, {"status": "refunded"}, allow=["total"], strict=True)(ctx).passed


def test_the_whole_row_is_claimed_only_when_spelled_out(engine: Engine) -> None:
    ctx = _run(engine, "UPDATE orders SET status = 'refunded', customer_id = 'C-2', total = 1 WHERE id = 'O-1'")
    whole_row = all_of(updated("orders", {"id": "O-1"}, {"status": "refunded"}, allow=["*"]), no_other_writes())
    assert whole_row(ctx).passed


def test_a_side_effect_is_declared_as_columns_of_matching_rows(engine: Engine) -> None:
    # The bookkeeping of an action (a running total on the customer's order) is allowed, nothing beyond it.
    ctx = _run(engine, REFUND, "UPDATE orders SET refunded = 45.5, customer_id = 'C-2' WHERE id = 'O-1'")
    verdict = all_of(
        updated("orders", {"id": "O-1"}, {"status": "refunded"}),
        no_other_writes(allow=[("orders", {"id": "O-1"}, ["refunded"])]),
    )(ctx)
    assert [d.field for d in verdict.failures() if d.check == "no_other_writes"] == ["customer_id"]
    alone = no_other_writes(allow=[("orders", {"id": "O-1"}, ["status", "refunded", "customer_id"])])(ctx)
    assert alone.passed, alone.explanation


def test_a_new_row_is_claimed_whole(engine: Engine) -> None:
    # Every column of an inserted row was written by the insert; its id and reason are not collateral.
    ctx = _run(engine, REFUND_ROW)
    assert all_of(inserted("refunds", match={"order_id": "O-1"}), no_other_writes())(ctx).passed


def test_a_collateral_write_is_a_policy_violation_not_a_wrong_entity(engine: Engine) -> None:
    ctx = _run(engine, REFUND, REFUND_ROW, "UPDATE orders SET customer_id = 'C-2' WHERE id = 'O-1'")
    verdict = _refund_check()(ctx)
    record = TrialRecord(False, verdict, ctx.diff, [], "customer_stop", [])
    signature = classify_failure(record)
    assert signature is not None
    assert signature.label == "policy_violation"
    assert "collateral write: orders id='O-1': customer_id" in signature.evidence
    wrong_row = _run(engine, "UPDATE orders SET status = 'refunded' WHERE id = 'O-2'")
    wrong_verdict = _refund_check()(wrong_row)
    other = classify_failure(TrialRecord(False, wrong_verdict, wrong_row.diff, [], "customer_stop", []))
    assert other is not None and other.label == "wrong_entity"


def test_claims_name_columns_of_updated_rows_and_whole_new_rows(engine: Engine) -> None:
    ctx = _run(engine, REFUND, REFUND_ROW)
    claims = _refund_check().claims(ctx)
    assert claims == {("orders", '{"id": "O-1"}', "status"), ("refunds", '{"id": 1}')}


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        ('["I2", "I1"]', unordered(["I1", "I2"])),
        (["I1", "I2"], unordered(["I2", "I1"])),
        ('["a", "a", "b"]', unordered(["a", "b", "a"])),
        ("[1.5, 2]", unordered(["2", 1.50])),
    ],
)
def test_an_unordered_list_equals_the_same_items_in_any_order(stored: object, expected: object) -> None:
    assert values_equal(stored, expected)
    assert values_equal(expected, stored)


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        ('["I1", "I2"]', unordered(["I1"])),
        ('["a", "a", "b"]', unordered(["a", "b", "b"])),
        ("I1", unordered(["I1"])),
        ('{"a": 1}', unordered(["a"])),
    ],
)
def test_an_unordered_list_still_needs_the_same_items(stored: object, expected: object) -> None:
    assert not values_equal(stored, expected)


def test_a_list_compares_in_order_unless_it_says_otherwise() -> None:
    assert not values_equal('["I2", "I1"]', ["I1", "I2"])
    assert not values_equal('["I2", "I1"]', json.dumps(["I1", "I2"]))


def test_unordered_survives_a_spec_round_trip() -> None:
    built = inserted("returns", match={"item_ids": unordered(["I2", "I1"])})
    assert built.spec["args"]["match"] == {"item_ids": {"$unordered": ["I2", "I1"]}}
    rebuilt = build_check(json.loads(json.dumps(built.spec)))
    assert rebuilt.spec == built.spec


def test_updated_rejects_a_bare_string_as_allow() -> None:
    with pytest.raises(TypeError, match="allow must be a list of column names"):
        updated("orders", {"id": "O-1"}, {"status": "x"}, allow="total")
    with pytest.raises(TypeError, match="the columns of an allow item are a list"):
        no_other_writes(allow=[("orders", {"id": "O-1"}, "total")])
