"""The difference between a backend's starting state and its terminal state, row by row."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, overload

from passhat.checks._values import describe_key, display, to_jsonable, values_equal

Op = Literal["insert", "update", "delete"]


@dataclass(frozen=True)
class RowChange:
    """One row that differs between two states: inserted, deleted, or updated (with full row images)."""

    table: str
    key: dict[str, Any]
    op: Op
    before: dict[str, Any] | None
    after: dict[str, Any] | None

    @property
    def changed_fields(self) -> dict[str, tuple[Any, Any]]:
        """Each column whose value differs, as ``(before, after)``; every column for an insert or delete."""
        before = self.before or {}
        after = self.after or {}
        changed: dict[str, tuple[Any, Any]] = {}
        for name in dict.fromkeys([*before, *after]):
            old, new = before.get(name), after.get(name)
            if self.op != "update" or not values_equal(old, new):
                changed[name] = (old, new)
        return changed

    @property
    def image(self) -> dict[str, Any]:
        """The row as it exists after the change, or as it was before a delete."""
        return dict(self.after if self.after is not None else self.before or {})

    def describe(self) -> str:
        """A sentence a person can read, e.g. ``orders id=7 updated: status 'paid' -> 'refunded'``."""
        where = f"{self.table} {describe_key(self.key)}"
        if self.op == "insert":
            fields = ", ".join(f"{name}={display(value)}" for name, value in (self.after or {}).items())
            return f"{where} inserted ({fields})"
        if self.op == "delete":
            return f"{where} deleted"
        parts = [f"{name} {display(old)} -> {display(new)}" for name, (old, new) in self.changed_fields.items()]
        return f"{where} updated: " + "; ".join(parts)

    def sort_key(self) -> tuple[str, str]:
        return self._sort_key

    @functools.cached_property
    def _sort_key(self) -> tuple[str, str]:
        # Computed once: a diff is sorted again each time a check narrows it to a table.
        return (self.table, json.dumps(to_jsonable(self.key), sort_keys=True))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable form (Decimal and times as strings)."""
        return {
            "table": self.table,
            "key": to_jsonable(self.key),
            "op": self.op,
            "before": to_jsonable(self.before),
            "after": to_jsonable(self.after),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RowChange:
        """A change read back from ``to_dict`` (values stay in their JSON form; checks compare by value)."""
        try:
            op = data["op"]
            if op not in ("insert", "update", "delete"):
                raise ValueError(f"op must be insert, update or delete, got {op!r}")
            return cls(str(data["table"]), dict(data["key"]), op, data.get("before"), data.get("after"))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a stored row change ({exc}): {dict(data)!r}") from None


@dataclass(frozen=True)
class StateDiff(Sequence[RowChange]):
    """Every row change between two states, ordered by table and primary key."""

    changes: list[RowChange] = field(default_factory=list)

    def __post_init__(self) -> None:
        object.__setattr__(self, "changes", sorted(self.changes, key=RowChange.sort_key))

    @overload
    def __getitem__(self, index: int) -> RowChange: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[RowChange]: ...
    def __getitem__(self, index: int | slice) -> RowChange | Sequence[RowChange]:
        return self.changes[index]

    def __len__(self) -> int:
        return len(self.changes)

    def __iter__(self) -> Iterator[RowChange]:
        return iter(self.changes)

    @property
    def inserted(self) -> list[RowChange]:
        return [change for change in self.changes if change.op == "insert"]

    @property
    def updated(self) -> list[RowChange]:
        return [change for change in self.changes if change.op == "update"]

    @property
    def deleted(self) -> list[RowChange]:
        return [change for change in self.changes if change.op == "delete"]

    @property
    def is_empty(self) -> bool:
        return not self.changes

    @property
    def tables(self) -> list[str]:
        """The tables with at least one changed row, sorted."""
        return sorted({change.table for change in self.changes})

    def for_table(self, name: str) -> StateDiff:
        """The changes to one table."""
        return StateDiff([change for change in self.changes if change.table == name])

    def find(self, table: str, key: Mapping[str, Any]) -> RowChange | None:
        """The change to one row, by primary key, or None when that row did not change."""
        for change in self.changes:
            if change.table == table and _key_matches(change.key, key):
                return change
        return None

    def describe(self) -> str:
        """One line per changed row; ``no changes`` when empty."""
        return "\n".join(change.describe() for change in self.changes) or "no changes"

    def to_dict(self) -> dict[str, Any]:
        return {"changes": [change.to_dict() for change in self.changes]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StateDiff:
        """A diff read back from ``to_dict``: a stored trial's checks can be re-run on it."""
        changes = data.get("changes") if isinstance(data, Mapping) else None
        if not isinstance(changes, list):
            raise ValueError('a stored diff looks like {"changes": [...]}')
        return cls([RowChange.from_dict(change) for change in changes])


def _key_matches(key: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    return set(key) == set(wanted) and all(values_equal(key[name], wanted[name]) for name in key)


def row_matches(row: Mapping[str, Any] | None, where: Mapping[str, Any]) -> bool:
    """Whether a row image has every ``where`` field equal (by value) to the given value."""
    if row is None:
        return False
    return all(name in row and values_equal(row[name], value) for name, value in where.items())
