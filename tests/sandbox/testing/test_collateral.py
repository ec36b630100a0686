"""check_collateral: the collateral-damage property catches checks that let an unrequested write through."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from passhat.checks import Check, CheckContext, Diagnostic, Verdict, all_of, no_other_writes, updated
from passhat.sandbox import Domain, Sandbox, load_domain
from passhat.sandbox.testing import CollateralDamageError, check_collateral

TASK = "change_pending_address"


def _with_check(check: Callable[[Mapping[str, Any]], Check]) -> Domain:
    retail = load_domain("retail")
    task = dataclasses.replace(retail.task_types[TASK], check=check)
    return dataclasses.replace(retail, task_types={**retail.task_types, TASK: task})


def _new_address(intent: Mapping[str, Any]) -> dict[str, Any]:
    return {f"ship_{key}": value for key, value in intent["address"].items()}


def whole_row(intent: Mapping[str, Any]) -> Check:
    return all_of(
        updated("orders", {"order_id": intent["order_id"]}, _new_address(intent), allow=["*"]), no_other_writes()
    )


def no_guard(intent: Mapping[str, Any]) -> Check:
    return updated("orders", {"order_id": intent["order_id"]}, _new_address(intent))


def unexplained(intent: Mapping[str, Any]) -> Check:
    def check(ctx: CheckContext) -> Verdict:
        # Right about the damage, silent about where it is.
        passed = len(ctx.diff) == 1
        return Verdict(passed, "one_write", [] if passed else [Diagnostic("one_write", "more than one row changed")])

    return check


def _broken(check: Callable[[Mapping[str, Any]], Check]) -> dict[str, str]:
    with Sandbox(_with_check(check)) as sandbox, pytest.raises(CollateralDamageError) as raised:
        check_collateral(sandbox, task_types=[TASK])
    return {result.probe: result.detail for result in raised.value.broken}


def test_the_retail_reference_paths_hold_every_probe(retail: Sandbox) -> None:
    results = check_collateral(retail, task_types=[TASK, "order_status_inquiry"])
    assert [(r.task_type, r.probe) for r in results] == [
        (TASK, "extra_reads"),
        (TASK, "claimed_column"),
        (TASK, "same_table"),
        (TASK, "other_table"),
        ("order_status_inquiry", "extra_reads"),
        ("order_status_inquiry", "other_table"),  # a read-only task writes no table: nothing to aim (a), (b) at
    ]
    claimed = results[1]
    assert claimed.write is not None and claimed.write.table == "orders"
    assert claimed.detail.startswith(f"collateral write: orders order_id={claimed.write.key['order_id']!r}:")


def test_a_check_claiming_the_whole_row_misses_another_column_of_it() -> None:
    broken = _broken(whole_row)
    assert list(broken) == ["claimed_column"]
    assert broken["claimed_column"] == "the check passes with this unrequested write"


def test_a_check_without_a_guard_misses_every_unrequested_write() -> None:
    assert list(_broken(no_guard)) == ["claimed_column", "same_table", "other_table"]


def test_a_failure_must_name_the_write() -> None:
    broken = _broken(unexplained)
    assert broken["claimed_column"] == "the check passes with this unrequested write"  # still one row changed
    for probe in ("same_table", "other_table"):
        assert broken[probe].startswith("it fails, but no diagnostic names the write: more than one row changed")


def test_the_error_lists_each_broken_probe_with_its_write() -> None:
    with Sandbox(_with_check(no_guard)) as sandbox, pytest.raises(CollateralDamageError) as raised:
        check_collateral(sandbox, task_types=[TASK])
    message = str(raised.value)
    assert message.startswith("3 collateral-damage probe(s) broken:")
    assert f"retail/{TASK}/0/0000 same_table with the write orders order_id=" in message
