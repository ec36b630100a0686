"""A failed verdict read by role: each diagnostic with the role its check declares, sorted into the shapes the
failure classifier names (the wrong row, a wrong value on the right row, a step not taken, a forbidden change).

Nothing here knows a check by its name: the role comes from the verdict (``Verdict.role``, declared with
``@check(role=...)``), so a team's own check is read like a built-in one. Verdicts stored before roles existed
get the role of their built-in check's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from passhat.checks._diff import RowChange, StateDiff
from passhat.checks._values import to_jsonable, values_equal
from passhat.checks._verdict import Diagnostic, Verdict

_STORED_ROLES: Mapping[str, str] = {
    "updated": "required_write",
    "inserted": "required_write",
    "deleted": "required_write",
    "unchanged": "forbidden_change",
    "no_other_writes": "other_writes",
    "response_contains": "disclosure",
    "response_omits": "confidentiality",
    "confirmed_before": "consent",
}
"""Roles of verdicts stored without one (written before checks declared roles)."""


@dataclass(frozen=True)
class Finding:
    """One diagnostic of a failing check, with the role of its check and which check (``source``) it came from."""

    role: str | None
    diagnostic: Diagnostic
    source: int

    @property
    def table(self) -> str | None:
        return self.diagnostic.table


def findings(verdict: Verdict) -> list[Finding]:
    """Every diagnostic of every failing check in the tree, with the role its check (or an ancestor) declares."""
    found: list[Finding] = []

    def visit(node: Verdict, inherited: str | None, counter: list[int]) -> None:
        role = node.role or inherited or _STORED_ROLES.get(node.check)
        counter[0] += 1
        source = counter[0]
        if not node.passed:
            found.extend(Finding(role, diagnostic, source) for diagnostic in node.diagnostics)
        for child in node.children:
            visit(child, role, counter)

    visit(verdict, None, [0])
    return found


def passed_roles(verdict: Verdict) -> set[str]:
    """The roles of the checks that passed (e.g. whether some required write is right)."""
    return {node.role or _STORED_ROLES.get(node.check, "") for node in verdict.walk() if node.passed} - {""}


def is_identifier(column: str) -> bool:
    return column == "id" or column.endswith("_id")


def _row(diff: StateDiff, table: str | None, key: Mapping[str, Any] | None) -> RowChange | None:
    if table is None or key is None:
        return None
    for change in diff.for_table(table):
        if values_equal(change.key, dict(key)) or to_jsonable(change.key) == to_jsonable(dict(key)):
            return change
    return None


def closest_near_misses(required: list[Finding], diff: StateDiff) -> list[Finding]:
    """A required new row's near misses, each check's closest row only (fewest fields off), plus everything else.

    A check that expected one row and found others reports each other new row field by field; the row meant
    for it is the one that missed on the fewest fields. Pairing by the closest row keeps a transfer's wrong
    amount (the debit row off on its amount only) from reading as a write to the wrong account.
    """
    kept: list[Finding] = []
    rows: dict[int, dict[str, list[Finding]]] = {}
    for finding in required:
        d = finding.diagnostic
        change = _row(diff, d.table, d.key)
        if d.field is None or change is None or change.op != "insert":
            kept.append(finding)
            continue
        rows.setdefault(finding.source, {}).setdefault(repr(sorted(to_jsonable(d.key).items())), []).append(finding)
    for by_row in rows.values():
        closest = sorted(by_row.values(), key=len)[0]
        kept.extend(closest)
    return kept


def written_wrong(finding: Finding, diff: StateDiff) -> bool:
    """A required write's field holds a value the task does not want, and the agent wrote it (not a step left
    out: a field still at its starting value was never written, on a row an earlier step may have touched)."""
    d = finding.diagnostic
    if d.field is None:
        # A count of new rows: more than asked is a wrong value (two bags for one); fewer is a step left out.
        return isinstance(d.expected, int) and isinstance(d.actual, int) and d.actual > d.expected
    change = _row(diff, d.table, d.key)
    if change is None:
        return False
    if change.op == "insert":
        return True
    before = (change.before or {}).get(d.field)
    return change.op == "update" and not values_equal(before, d.actual)


def missing_steps(required: list[Finding], diff: StateDiff) -> list[Finding]:
    """Required writes not made at all: a targeted row left unchanged, or too few new rows and no near miss.

    When one step is missing, the task's chain stopped short: a value an earlier step left on a row the missing
    step would have written (a balance before the waiver, a copied flight before the change) is not a wrong value
    the agent chose."""
    near = {f.source for f in required if f.diagnostic.key is not None and f.diagnostic.field is not None}
    found: list[Finding] = []
    for finding in required:
        d = finding.diagnostic
        if d.field is not None:
            continue
        if d.key is not None and _row(diff, d.table, d.key) is None:
            found.append(finding)  # the row it targets was not written
        elif (
            d.key is None
            and isinstance(d.expected, int)
            and isinstance(d.actual, int)
            and d.actual < d.expected
            and finding.source not in near
        ):
            found.append(finding)  # new rows wanted, none of the new rows even close
    return found


def target_identifiers(verdict: Verdict) -> dict[str, list[Any]]:
    """The identifiers the task's required writes name (``where`` / ``match`` of their specs): its entity."""
    found: dict[str, list[Any]] = {}
    for node in verdict.walk():
        role = node.role or _STORED_ROLES.get(node.check)
        if role != "required_write" or not node.spec:
            continue
        for argument in ("where", "match"):
            values = node.spec.get("args", {}).get(argument)
            if isinstance(values, Mapping):
                for column, value in values.items():
                    if is_identifier(column):
                        found.setdefault(column, []).append(value)
    return found


def same_entity(finding: Finding, diff: StateDiff, targets: Mapping[str, list[Any]]) -> bool:
    """An unexpected write that concerns the task's own entity (its identifiers agree with the targets'): an
    action nobody asked for on the right customer, not a write to the wrong one. A new row's own key is new,
    so it is left out of the comparison."""
    change = _row(diff, finding.table, finding.diagnostic.key)
    if change is None:
        return False
    own_key = set(change.key) if change.op == "insert" else set()
    image = change.after if change.after is not None else change.before or {}
    shared = [column for column in image if column in targets and column not in own_key and is_identifier(column)]
    return bool(shared) and all(
        any(values_equal(image[column], wanted) for wanted in targets[column]) for column in shared
    )
