"""State check primitives: the right rows changed to the right values, and nothing else was touched.

The claim rule: a check accounts for the columns it names, not the whole row it names. ``updated`` claims the
columns of ``to`` (and those it ``allow``s); a new row (``inserted``) and a removed one (``deleted``) are
claimed whole, since every column of them was written. ``no_other_writes`` reports anything else that changed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from passhat.checks._diff import RowChange, row_matches
from passhat.checks._registry import check
from passhat.checks._values import describe_key, display, values_equal
from passhat.checks._verdict import Check, CheckContext, Claim, Diagnostic, Verdict

ANY_COLUMN = "*"
"""In ``updated(..., allow=[...])``: the check claims every column of its rows (a looser claim, spelled out)."""

NO_WRITE = "no write"
"""The ``expected`` of a ``no_other_writes`` diagnostic about a row nothing claims (not one column of a claimed row)."""


@dataclass(frozen=True)
class _StateCheck:
    """A primitive: a function listing what is wrong, and what it accounts for.

    ``claim`` gives the rows it targets; ``columns`` the columns of them it claims (None: the whole row, as for
    a new or deleted row); ``near`` rows it reports as near misses (claimed whole).
    """

    name: str
    find_problems: Callable[[CheckContext], list[Diagnostic]]
    claim: Callable[[CheckContext], list[RowChange]] | None = None
    near: Callable[[CheckContext], list[RowChange]] | None = None
    columns: frozenset[str] | None = None
    role: str = "required_write"

    def __call__(self, ctx: CheckContext, /) -> Verdict:
        problems = self.find_problems(ctx)
        return Verdict(not problems, self.name, problems, role=self.role)

    def matches(self, ctx: CheckContext) -> set[tuple[str, str]]:
        return {change.sort_key() for change in self.claim(ctx)} if self.claim else set()

    def claims(self, ctx: CheckContext) -> set[Claim]:
        claimed: set[Claim] = set()
        for row in self.matches(ctx):
            if self.columns is None:
                claimed.add(row)
            else:
                claimed.update((*row, column) for column in self.columns)
        if self.near:
            claimed.update(change.sort_key() for change in self.near(ctx))
        return claimed


def _describe_where(where: Mapping[str, Any]) -> str:
    return describe_key(where) if where else "any row"


def _require_mapping(check_name: str, argument: str, value: object) -> dict[str, Any]:
    if not isinstance(value, Mapping) or not all(isinstance(name, str) for name in value):
        raise TypeError(f"{check_name}(): {argument} must be a dict of column -> value, got {value!r}")
    return dict(value)


def _require_table(check_name: str, table: object) -> str:
    if not isinstance(table, str) or not table:
        raise TypeError(f"{check_name}(): table must be a table name, got {table!r}")
    return table


def _targets(
    ctx: CheckContext, table: str, where: Mapping[str, Any], changes: list[RowChange]
) -> list[tuple[dict[str, Any], RowChange | None]]:
    """The rows ``where`` names, with their change: from the starting state when known, else from the diff."""
    by_key = {change.sort_key(): change for change in changes}
    if ctx.initial is not None and table in ctx.initial:
        starting = ctx.initial.table(table)
        targets: list[tuple[dict[str, Any], RowChange | None]] = []
        for row in ctx.initial.rows(table, where):
            key = starting.key_of(row)
            probe = RowChange(table, key, "update", row, row)
            targets.append((key, by_key.get(probe.sort_key())))
        return targets
    return [(change.key, change) for change in changes]


@check
def updated(
    table: str, where: dict[str, Any], to: dict[str, Any], *, allow: Iterable[str] = (), strict: bool = False
) -> Check:
    """Exactly the row(s) matching ``where`` (on the starting image) changed, and now hold the values ``to``.

    The check claims the columns of ``to`` and ``allow`` on those rows, nothing else: ``no_other_writes``
    reports any other column that changed there as collateral damage. ``allow`` names columns that may also
    change to any value (``updated_at``); ``allow=["*"]`` claims the whole row. With ``strict=True`` this check
    itself fails when a column outside ``to`` and ``allow`` changed (for use without ``no_other_writes``).
    """
    table = _require_table("updated", table)
    where = _require_mapping("updated", "where", where)
    to = _require_mapping("updated", "to", to)
    if not to:
        raise ValueError("updated(): `to` names no column; use unchanged() or deleted() for other expectations")
    if isinstance(allow, str) or not all(isinstance(name, str) for name in allow):
        raise TypeError(f"updated(): allow must be a list of column names (or ['*'] for the whole row), got {allow!r}")
    allowed = frozenset(allow)
    columns = None if ANY_COLUMN in allowed else frozenset(to) | allowed

    def claim(ctx: CheckContext) -> list[RowChange]:
        return [change for change in ctx.diff.for_table(table) if row_matches(change.before, where)]

    def find_problems(ctx: CheckContext) -> list[Diagnostic]:
        targets = _targets(ctx, table, where, claim(ctx))
        if not targets:
            expected = ", ".join(f"{name}={display(value)}" for name, value in to.items())
            if ctx.initial is not None and table in ctx.initial:
                message = f"no {table} row matches {_describe_where(where)} in the starting state"
            else:
                message = f"no {table} row matching {_describe_where(where)} was updated (expected {expected})"
            return [Diagnostic("updated", message, table=table, expected=to)]
        problems: list[Diagnostic] = []
        for key, change in targets:
            row = f"{table} {describe_key(key)}"
            if change is None:
                problems.append(
                    Diagnostic("updated", f"{row} was not changed; expected it updated", table, key, None, to)
                )
                continue
            if change.op == "delete" or change.after is None:
                problems.append(Diagnostic("updated", f"{row} was deleted; expected it updated", table, key))
                continue
            for name, expected in to.items():
                if name not in change.after:
                    problems.append(
                        Diagnostic("updated", f"{table} has no column {name!r}", table, key, name, expected)
                    )
                elif not values_equal(change.after[name], expected):
                    actual = change.after[name]
                    message = f"{row}: {name} is {display(actual)}, expected {display(expected)}"
                    problems.append(Diagnostic("updated", message, table, key, name, expected, actual))
            if strict and columns is not None:
                for name, (old, new) in change.changed_fields.items():
                    if name not in columns:
                        message = f"{row}: {name} also changed, {display(old)} -> {display(new)}"
                        problems.append(Diagnostic("updated", message, table, key, name, old, new))
        return problems

    return _StateCheck("updated", find_problems, claim, columns=columns)


@check
def inserted(table: str, match: dict[str, Any], count: int = 1) -> Check:
    """Exactly ``count`` new rows in ``table`` have the field values ``match``."""
    table = _require_table("inserted", table)
    match = _require_mapping("inserted", "match", match)
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise TypeError(f"inserted(): count must be a non-negative integer, got {count!r}")

    def split(ctx: CheckContext) -> tuple[list[RowChange], list[RowChange]]:
        new_rows = ctx.diff.for_table(table).inserted
        matching = [change for change in new_rows if row_matches(change.after, match)]
        # Rows a sibling check matched exactly are its own, not near misses of this one.
        others = [
            change
            for change in new_rows
            if not row_matches(change.after, match) and change.sort_key() not in ctx.matched
        ]
        return matching, others

    def claim(ctx: CheckContext) -> list[RowChange]:
        return split(ctx)[0]

    def near(ctx: CheckContext) -> list[RowChange]:
        matching, others = split(ctx)
        # Too few matches: the other new rows are attempts at this insert, reported here as near misses.
        return others if len(matching) < count else []

    def find_problems(ctx: CheckContext) -> list[Diagnostic]:
        matching, others = split(ctx)
        if len(matching) == count:
            return []
        wanted = ", ".join(f"{name}={display(value)}" for name, value in match.items())
        message = f"expected {count} row(s) inserted into {table} with {wanted}; found {len(matching)}"
        problems = [Diagnostic("inserted", message, table, None, None, count, len(matching))]
        if len(matching) < count:
            for change in others:
                after = change.after or {}
                for name, expected in match.items():
                    if not values_equal(after.get(name), expected):
                        actual = after.get(name)
                        note = (
                            f"{table} {describe_key(change.key)} was inserted with {name}={display(actual)}, "
                            f"expected {display(expected)}"
                        )
                        problems.append(Diagnostic("inserted", note, table, change.key, name, expected, actual))
        return problems

    return _StateCheck("inserted", find_problems, claim, near)


@check
def deleted(table: str, where: dict[str, Any]) -> Check:
    """The row(s) matching ``where`` (on the starting image) no longer exist."""
    table = _require_table("deleted", table)
    where = _require_mapping("deleted", "where", where)

    def claim(ctx: CheckContext) -> list[RowChange]:
        return [change for change in ctx.diff.for_table(table) if row_matches(change.before, where)]

    def find_problems(ctx: CheckContext) -> list[Diagnostic]:
        targets = _targets(ctx, table, where, claim(ctx))
        if not targets:
            message = f"no {table} row matching {_describe_where(where)} was deleted"
            return [Diagnostic("deleted", message, table, expected=where)]
        problems: list[Diagnostic] = []
        for key, change in targets:
            if change is None or change.op != "delete":
                state = "was not changed" if change is None else "was updated"
                message = f"{table} {describe_key(key)} {state}; expected it deleted"
                problems.append(Diagnostic("deleted", message, table, key, None, "deleted", state))
        return problems

    return _StateCheck("deleted", find_problems, claim)


@check
def unchanged(table: str, where: dict[str, Any] | None = None) -> Check:
    """No row of ``table`` (or no row matching ``where``, before or after) was inserted, updated, deleted."""
    table = _require_table("unchanged", table)
    condition = _require_mapping("unchanged", "where", where) if where is not None else None

    def find_problems(ctx: CheckContext) -> list[Diagnostic]:
        problems: list[Diagnostic] = []
        for change in ctx.diff.for_table(table):
            if condition is None or row_matches(change.before, condition) or row_matches(change.after, condition):
                message = f"{change.describe()}; expected it unchanged"
                problems.append(Diagnostic("unchanged", message, table, change.key, None, "unchanged", change.op))
        return problems

    return _StateCheck("unchanged", find_problems, role="forbidden_change")


AllowRule = tuple[str, dict[str, Any], frozenset[str] | None]
"""A ``no_other_writes`` allowance: a table, a ``where`` on its rows, and the columns (None: any column)."""


def _parse_allow(allow: Iterable[Any]) -> tuple[set[str], list[AllowRule]]:
    if isinstance(allow, str | Mapping):
        raise TypeError(
            f"no_other_writes(): allow must be a list of table names, (table, where) or (table, where, columns), "
            f"got {allow!r}"
        )
    tables: set[str] = set()
    rules: list[AllowRule] = []
    for item in allow:
        if isinstance(item, str):
            tables.add(item)
        elif isinstance(item, list | tuple) and len(item) in (2, 3) and isinstance(item[0], str):
            where = _require_mapping("no_other_writes", "an allow `where`", item[1])
            columns = None
            if len(item) == 3:
                if isinstance(item[2], str) or not all(isinstance(name, str) for name in item[2]):
                    raise TypeError(f"no_other_writes(): the columns of an allow item are a list, got {item[2]!r}")
                columns = frozenset(item[2])
            rules.append((item[0], where, columns))
        else:
            raise TypeError(
                f"no_other_writes(): an allow item is a table name, (table, where) or (table, where, columns), "
                f"got {item!r}"
            )
    return tables, rules


@check
def no_other_writes(allow: Iterable[Any] = ()) -> Check:
    """Nothing was written beyond what the task needed (collateral damage, the wrong customer's row).

    A check claims the columns it names, not the whole row: inside ``all_of``, the rows and columns its sibling
    checks account for are allowed, and any other column that changed on a claimed row is reported as a
    collateral write, column by column. ``allow`` spells out looser claims: table names (any write there is
    fine), ``(table, where)`` pairs (any write to rows matching ``where``, before or after) and
    ``(table, where, columns)`` triples (changes to those columns of matching rows: a declared side effect).
    """
    tables, rules = _parse_allow(allow)

    def allowance(change: RowChange, ctx: CheckContext) -> frozenset[str] | None:
        """The columns of this row that may change; None when the whole row may."""
        row = change.sort_key()
        if change.table in tables or row in ctx.claimed:
            return None
        columns: set[str] = {claim[2] for claim in ctx.claimed if len(claim) == 3 and claim[:2] == row}
        for table, where, allowed in rules:
            if table == change.table and (row_matches(change.before, where) or row_matches(change.after, where)):
                if allowed is None:
                    return None
                columns |= allowed
        return frozenset(columns)

    def find_problems(ctx: CheckContext) -> list[Diagnostic]:
        problems: list[Diagnostic] = []
        for change in ctx.diff:
            columns = allowance(change, ctx)
            if columns is None:
                continue
            if columns and change.op == "update":
                where = f"{change.table} {describe_key(change.key)}"
                claimed = ", ".join(sorted(columns))
                for name, (old, new) in change.changed_fields.items():
                    if name not in columns:
                        message = (
                            f"collateral write: {where}: {name} {display(old)} -> {display(new)} "
                            f"(the task changes only {claimed} of this row)"
                        )
                        diagnostic = Diagnostic("no_other_writes", message, change.table, change.key, name, old, new)
                        problems.append(diagnostic)
                continue
            problems.append(
                Diagnostic(
                    "no_other_writes",
                    f"unexpected write: {change.describe()}",
                    change.table,
                    change.key,
                    next(iter(change.changed_fields), None) if change.op == "update" else None,
                    NO_WRITE,
                    change.op,
                )
            )
        return problems

    return _StateCheck("no_other_writes", find_problems, role="other_writes")
