"""The rows a customer's words lead to: the row holding a value they named, and the rows that row refers to.

References go from a row to the one row it names (a loan's ``member_id`` to that member, an order's
``customer_id`` to that customer), never from a row to the many that name it: a member's other loans are
siblings the customer did not mention, and the wrong entity a flawed agent may have written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import MetaData

from passhat.checks import Snapshot
from passhat.sandbox.inference._said import said_form


def references(metadata: MetaData) -> dict[tuple[str, str], tuple[str, str]]:
    """(table, column) -> (table, column) it refers to: declared foreign keys, and a column named as another
    table's single-column primary key (``loans.member_id`` -> ``members.member_id``)."""
    keys: dict[str, str] = {}
    for table in metadata.tables.values():
        primary = list(table.primary_key.columns)
        if len(primary) == 1 and primary[0].name != "id":
            keys.setdefault(primary[0].name, table.name)
    found: dict[tuple[str, str], tuple[str, str]] = {}
    for table in metadata.tables.values():
        for column in table.columns:
            for foreign in column.foreign_keys:
                found[(table.name, column.name)] = (foreign.column.table.name, foreign.column.name)
            owner = keys.get(column.name)
            if (table.name, column.name) not in found and owner is not None and owner != table.name:
                found[(table.name, column.name)] = (owner, column.name)
    return found


@dataclass(frozen=True)
class LinkedRow:
    """A row of the starting state reached from the customer's words, and how."""

    table: str
    row: Mapping[str, Any]
    how: str


@dataclass
class RowLinks:
    """Finds rows by a column's value in a starting state, and follows their references."""

    snapshot: Snapshot
    metadata: MetaData
    _references: dict[tuple[str, str], tuple[str, str]] = field(init=False)
    _index: dict[tuple[str, str], dict[str, list[Mapping[str, Any]]]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self._references = references(self.metadata)

    def rows_with(self, table: str, column: str, value: Any) -> list[Mapping[str, Any]]:
        """Rows of ``table`` whose ``column`` holds ``value`` (compared as words)."""
        if table not in self.snapshot:
            return []
        index = self._index.get((table, column))
        if index is None:
            index = {}
            for row in self.snapshot.table(table).rows.values():
                if row.get(column) is not None:
                    index.setdefault(said_form(row[column]), []).append(row)
            self._index[(table, column)] = index
        return index.get(said_form(value), [])

    def linked(self, seeds: Iterable[LinkedRow]) -> dict[str, LinkedRow]:
        """Every value of the seed rows and of the rows they refer to (transitively), with the row holding it."""
        values: dict[str, LinkedRow] = {}
        queue = list(seeds)
        seen: set[tuple[str, int]] = set()
        while queue:
            item = queue.pop()
            if (item.table, id(item.row)) in seen:
                continue
            seen.add((item.table, id(item.row)))
            for column, value in item.row.items():
                if value is None:
                    continue
                values.setdefault(said_form(value), item)
                target = self._references.get((item.table, column))
                if target is None:
                    continue
                for row in self.rows_with(target[0], target[1], value)[:1]:
                    how = f"{item.how} -> {target[0]} {target[1]}={value}"
                    queue.append(LinkedRow(target[0], row, how))
        return values
