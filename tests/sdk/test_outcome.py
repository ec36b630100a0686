"""passhat.outcome_of: the one tool-outcome rule, as a table of what a call did and how it came out."""

from __future__ import annotations

from typing import Any

import pytest

import passhat
import passhat.checks
from passhat import ToolKind, ToolOutcome

NOTHING: list[Any] = [None, "", b"", [], (), {}, set(), frozenset()]


@pytest.mark.parametrize(
    ("result", "error_type", "kind", "outcome"),
    [
        # failed with not_found: a lookup (or a call of unknown kind) found nothing; a write missed its target
        (None, "not_found", "lookup", "empty"),
        (None, "not_found", None, "empty"),
        (None, "not_found", "write", "error"),
        (None, "not_found", "other", "error"),
        # failed any other way
        (None, "precondition_failed", "lookup", "error"),
        (None, "invalid_argument", None, "error"),
        (None, "not_allowed", "write", "error"),
        (None, "tool_error", "other", "error"),
        # returned nothing: empty for a lookup or unknown kind, done for a write or other tool
        *((nothing, None, "lookup", "empty") for nothing in NOTHING),
        *((nothing, None, None, "empty") for nothing in NOTHING),
        *((nothing, None, "write", "ok") for nothing in NOTHING),
        *((nothing, None, "other", "ok") for nothing in NOTHING),
        # returned something
        ({"order_id": "O-1"}, None, "lookup", "ok"),
        ([0], None, None, "ok"),
        (0, None, None, "ok"),
        (False, None, "lookup", "ok"),
        ("x", None, "write", "ok"),
        ({"cancelled": True}, None, "other", "ok"),
    ],
)
def test_the_rule(result: Any, error_type: str | None, kind: ToolKind | None, outcome: ToolOutcome) -> None:
    assert passhat.outcome_of(result, error_type=error_type, kind=kind) == outcome


@pytest.mark.parametrize("kind", ["lookup", "write", "other", None])
def test_the_empty_predicate_says_empty_whatever_the_kind(kind: ToolKind | None) -> None:
    assert passhat.outcome_of({"total": 0}, lambda r: r["total"] == 0, kind=kind) == "empty"
    assert passhat.outcome_of({"total": 2}, lambda r: r["total"] == 0, kind=kind) == "ok"


def test_a_failure_is_never_empty_by_the_predicate() -> None:
    assert passhat.outcome_of(None, lambda _: True, error_type="timeout") == "error"


def test_a_broken_predicate_leaves_the_call_ok() -> None:
    assert passhat.outcome_of({"a": 1}, lambda r: r["missing"] == 0) == "ok"


def test_the_result_alone_still_decides_as_before() -> None:
    assert (passhat.outcome_of(None), passhat.outcome_of([]), passhat.outcome_of("x")) == ("empty", "empty", "ok")


def test_checks_re_export_the_same_rule() -> None:
    assert passhat.checks.outcome_of is passhat.outcome_of
