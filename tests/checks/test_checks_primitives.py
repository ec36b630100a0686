"""State check primitives: each returns a verdict whose diagnostics say which row and field, and how."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy import Engine

from passhat.checks import (
    CheckContext,
    StateDiff,
    all_of,
    deleted,
    inserted,
    no_other_writes,
    record_changes,
    take_snapshot,
    unchanged,
    updated,
)


def _run(engine: Engine, *statements: str) -> CheckContext:
    initial = take_snapshot(engine)
    with record_changes(engine) as log, engine.begin() as connection:
        for statement in statements:
            connection.exec_driver_sql(statement)
    return CheckContext(diff=log.diff(), initial=initial)


REFUND_O1 = (
    "UPDATE orders SET status = 'refunded', refunded = 45.5 WHERE id = 'O-1'",
    "INSERT INTO refunds (order_id, amount, reason) VALUES ('O-1', 45.50, 'damaged')",
)


def test_updated_passes_when_the_target_row_holds_the_expected_values(engine: Engine) -> None:
    ctx = _run(engine, *REFUND_O1)
    verdict = updated("orders", where={"id": "O-1"}, to={"status": "refunded", "refunded": "45.50"})(ctx)
    assert verdict.passed, verdict.explanation
    assert verdict.diagnostics == []
    assert verdict.spec == {
        "check": "updated",
        "args": {
            "table": "orders",
            "where": {"id": "O-1"},
            "to": {"status": "refunded", "refunded": "45.50"},
        },
    }


def test_updated_names_the_field_expected_and_actual_when_a_value_is_wrong(engine: Engine) -> None:
    ctx = _run(engine, "UPDATE orders SET status = 'refunded', refunded = 40 WHERE id = 'O-1'")
    verdict = updated("orders", where={"id": "O-1"}, to={"status": "refunded", "refunded": Decimal("45.50")})(ctx)
    assert not verdict.passed
    [problem] = verdict.diagnostics
    assert (problem.check, problem.table, problem.key, problem.field) == (
        "updated",
        "orders",
        {"id": "O-1"},
        "refunded",
    )
    assert (problem.expected, problem.actual) == (Decimal("45.50"), Decimal("40.00"))
    assert problem.message == "orders id='O-1': refunded is 40.00, expected 45.50"


def test_updated_says_the_target_row_was_not_changed(engine: Engine) -> None:
    ctx = _run(engine, "UPDATE orders SET status = 'refunded' WHERE id = 'O-3'")
    verdict = updated("orders", where={"id": "O-1"}, to={"status": "refunded"})(ctx)
    assert [d.message for d in verdict.diagnostics] == ["orders id='O-1' was not changed; expected it updated"]


def test_updated_without_a_starting_snapshot_needs_a_matching_change(engine: Engine) -> None:
    ctx = _run(engine, "UPDATE orders SET status = 'refunded' WHERE id = 'O-3'")
    blind = CheckContext(diff=ctx.diff)
    assert updated("orders", where={"id": "O-3"}, to={"status": "refunded"})(blind).passed
    verdict = updated("orders", where={"id": "O-1"}, to={"status": "refunded"})(blind)
    assert "no orders row matching id='O-1' was updated" in verdict.explanation


def test_updated_where_matching_several_rows_requires_all_of_them(engine: Engine) -> None:
    ctx = _run(engine, "UPDATE orders SET status = 'archived' WHERE id = 'O-1'")
    verdict = updated("orders", where={"customer_id": "C-1"}, to={"status": "archived"})(ctx)
    assert [d.key for d in verdict.diagnostics] == [{"id": "O-2"}]


def test_updated_strict_rejects_other_columns_changing(engine: Engine) -> None:
    ctx = _run(engine, "UPDATE orders SET status = 'refunded', customer_id = 'C-2' WHERE id = 'O-1'")
    assert updated("orders", where={"id": "O-1"}, to={"status": "refunded"})(ctx).passed
    verdict = updated("orders", where={"id": "O-1"}, to={"status": "refunded"}, strict=True)(ctx)
    assert [d.field for d in verdict.diagnostics] == ["customer_id"]


def test_updated_reports_a_deleted_row(engine: Engine) -> None:
    ctx = _run(engine, "DELETE FROM order_lines WHERE order_id = 'O-1' AND line = 2")
    verdict = updated("order_lines", where={"order_id": "O-1", "line": 2}, to={"quantity": 0})(ctx)
    assert "was deleted; expected it updated" in verdict.explanation


def test_inserted_counts_matching_rows(engine: Engine) -> None:
    ctx = _run(engine, *REFUND_O1)
    assert inserted("refunds", match={"order_id": "O-1", "amount": 45.5})(ctx).passed
    verdict = inserted("refunds", match={"order_id": "O-1"}, count=2)(ctx)
    assert verdict.diagnostics[0].message == "expected 2 row(s) inserted into refunds with order_id='O-1'; found 1"


def test_inserted_explains_a_near_miss_field_by_field(engine: Engine) -> None:
    ctx = _run(engine, "INSERT INTO refunds (order_id, amount, reason) VALUES ('O-1', 40, 'damaged')")
    verdict = inserted("refunds", match={"order_id": "O-1", "amount": Decimal("45.50")})(ctx)
    assert not verdict.passed
    near_miss = verdict.diagnostics[1]
    assert (near_miss.key, near_miss.field, near_miss.expected, near_miss.actual) == (
        {"id": 1},
        "amount",
        Decimal("45.50"),
        Decimal("40.00"),
    )
    assert near_miss.message == "refunds id=1 was inserted with amount=40.00, expected 45.50"


def test_deleted_and_unchanged(engine: Engine) -> None:
    ctx = _run(engine, "DELETE FROM order_lines WHERE order_id = 'O-1' AND line = 2")
    assert deleted("order_lines", where={"order_id": "O-1", "line": 2})(ctx).passed
    assert not deleted("order_lines", where={"order_id": "O-1"})(ctx).passed
    assert unchanged("orders")(ctx).passed
    assert unchanged("order_lines", where={"line": 1})(ctx).passed
    verdict = unchanged("order_lines")(ctx)
    assert verdict.diagnostics[0].message == "order_lines order_id='O-1', line=2 deleted; expected it unchanged"


def test_no_other_writes_names_collateral_damage(engine: Engine) -> None:
    ctx = _run(engine, *REFUND_O1, "UPDATE customers SET email = 'x@y' WHERE id = 'C-2'")
    verdict = no_other_writes(allow=["refunds", ("orders", {"id": "O-1"})])(ctx)
    [problem] = verdict.diagnostics
    assert problem.message == "unexpected write: customers id='C-2' updated: email 'alan@example.com' -> 'x@y'"
    assert (problem.table, problem.key, problem.field) == ("customers", {"id": "C-2"}, "email")


def test_no_other_writes_inside_all_of_allows_rows_claimed_by_siblings(engine: Engine) -> None:
    ctx = _run(engine, *REFUND_O1)
    refund = all_of(
        updated("orders", where={"id": "O-1"}, to={"status": "refunded", "refunded": "45.50"}),
        inserted("refunds", match={"order_id": "O-1", "amount": "45.50"}),
        no_other_writes(),
    )
    verdict = refund(ctx)
    assert verdict.passed, verdict.explanation
    assert not no_other_writes()(ctx).passed  # alone, the same writes are not accounted for


def test_no_other_writes_inside_all_of_still_catches_the_wrong_customer(engine: Engine) -> None:
    ctx = _run(engine, "UPDATE orders SET status = 'refunded' WHERE id = 'O-3'")
    verdict = all_of(updated("orders", where={"id": "O-1"}, to={"status": "refunded"}), no_other_writes())(ctx)
    assert [d.message for d in verdict.failures()] == [
        "all_of: 2 of 2 checks failed: updated, no_other_writes",
        "orders id='O-1' was not changed; expected it updated",
        "unexpected write: orders id='O-3' updated: status 'delivered' -> 'refunded'",
    ]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: updated("orders", where="O-1", to={"status": "x"}), "where must be a dict"),
        (lambda: updated("orders", where={"id": "O-1"}, to={}), "names no column"),
        (lambda: updated("", where={}, to={"a": 1}), "table must be a table name"),
        (lambda: inserted("refunds", match={}, count=-1), "count must be a non-negative integer"),
        (lambda: no_other_writes(allow="refunds"), "allow must be a list"),
        (lambda: no_other_writes(allow=[("refunds",)]), "an allow item is a table name"),
        (lambda: updated("orders", {"id": 1}), "missing a required argument: 'to'"),
    ],
)
def test_bad_check_arguments_are_one_clear_error(build: object, message: str) -> None:
    with pytest.raises(TypeError if "names no column" not in message else ValueError, match=message):
        build()  # type: ignore[operator]


def test_empty_diff_passes_state_guards() -> None:
    ctx = CheckContext(diff=StateDiff())
    assert no_other_writes()(ctx).passed
    assert unchanged("orders")(ctx).passed
    assert not inserted("refunds", match={})(ctx).passed


def test_inserted_does_not_call_a_siblings_exact_match_a_near_miss(engine: Engine) -> None:
    ctx = _run(
        engine,
        "INSERT INTO refunds (order_id, amount, reason) VALUES ('O-1', 45.50, 'refund')",
        "INSERT INTO refunds (order_id, amount, reason) VALUES ('O-1', 9.99, 'charge')",
    )
    both = all_of(
        inserted("refunds", match={"order_id": "O-1", "reason": "refund", "amount": "45.50"}),
        inserted("refunds", match={"order_id": "O-1", "reason": "charge", "amount": "12.00"}),
        no_other_writes(),
    )
    verdict = both(ctx)
    near_misses = [d for d in verdict.failures() if d.check == "inserted" and d.key is not None]
    assert [(d.key, d.field) for d in near_misses] == [({"id": 2}, "amount")]
    assert [d.check for d in verdict.failures()] == ["all_of", "inserted", "inserted"]
