"""A full copy of a database's rows, keyed by primary key, and the diff between two such copies."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, MetaData, Table, select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from passhat.checks._diff import RowChange, StateDiff, row_matches
from passhat.checks._values import values_equal

# Tables whose name starts with this belong to passhat's change log and are never part of a snapshot.
INTERNAL_PREFIX = "_passhat_"

Bind = Engine | Connection | Session


class SnapshotError(ValueError):
    """The database or the request cannot be snapshotted as asked (the message says what to change)."""


@dataclass(frozen=True)
class TableSnapshot:
    """The rows of one table, keyed by the tuple of their primary-key values."""

    name: str
    primary_key: tuple[str, ...]
    columns: tuple[str, ...]
    rows: dict[tuple[Any, ...], dict[str, Any]]

    def key_of(self, row: Mapping[str, Any]) -> dict[str, Any]:
        return {name: row[name] for name in self.primary_key}


@dataclass(frozen=True)
class Snapshot:
    """Every row of every table at one moment; the starting state a check computes expected values from."""

    tables: dict[str, TableSnapshot]

    def __contains__(self, table: object) -> bool:
        return table in self.tables

    def table(self, name: str) -> TableSnapshot:
        try:
            return self.tables[name]
        except KeyError:
            known = ", ".join(sorted(self.tables)) or "none"
            raise SnapshotError(f"no table {name!r} in the snapshot (tables: {known})") from None

    def rows(self, table: str, where: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """The rows of ``table`` whose fields equal ``where`` (all rows when None), in insertion order."""
        snapshot = self.table(table)
        if where is not None and set(snapshot.primary_key) <= set(where):
            # A where naming the whole primary key is one dict lookup, not a scan of the table.
            row = snapshot.rows.get(tuple(where[name] for name in snapshot.primary_key))
            if row is not None:
                return [dict(row)] if row_matches(row, where) else []
        return [dict(row) for row in snapshot.rows.values() if where is None or row_matches(row, where)]

    def get(self, table: str, key: Mapping[str, Any]) -> dict[str, Any] | None:
        """One row by primary key (or by any fields that pick out exactly one row), or None."""
        matches = self.rows(table, key)
        return matches[0] if len(matches) == 1 else None

    @property
    def row_count(self) -> int:
        return sum(len(table.rows) for table in self.tables.values())


@contextmanager
def connection_for(bind: Bind) -> Iterator[Connection]:
    """A connection from an engine (opened and closed here), a connection, or a session."""
    if isinstance(bind, Engine):
        with bind.connect() as connection:
            yield connection
    elif isinstance(bind, Connection):
        yield bind
    elif isinstance(bind, Session):
        yield bind.connection()
    else:
        raise SnapshotError(f"expected a SQLAlchemy Engine, Connection or Session, got {type(bind).__name__}")


def _sqlite_derived_tables(connection: Connection) -> set[str]:
    """SQLite virtual tables (full-text indexes) and their shadow tables: derived data, and no triggers allowed."""
    if connection.dialect.name != "sqlite":
        return set()
    try:
        listed = connection.exec_driver_sql("PRAGMA main.table_list").mappings().all()
    except DBAPIError:  # SQLite before 3.37 has no table_list; virtual tables are still recognisable
        rows = connection.exec_driver_sql(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'"
        )
        return {row[0] for row in rows}
    return {row["name"] for row in listed if row["type"] in ("virtual", "shadow")}


def reflect_tables(
    connection: Connection,
    *,
    tables: Collection[str] | None = None,
    exclude: Collection[str] = (),
    metadata: MetaData | None = None,
) -> list[Table]:
    """The tables to watch: from ``metadata`` when given (its column types win), else reflected."""
    if metadata is None:
        metadata = MetaData()
        metadata.reflect(bind=connection)
    derived = _sqlite_derived_tables(connection)
    by_name = {
        table.name: table
        for table in metadata.sorted_tables
        if not table.name.startswith(INTERNAL_PREFIX) and table.name not in derived
    }
    if tables is not None:
        missing = sorted(set(tables) - set(by_name))
        if set(missing) & derived:
            raise SnapshotError(
                f"{', '.join(sorted(set(missing) & derived))}: SQLite virtual or shadow tables (derived data such "
                "as full-text indexes) are not snapshotted or watched"
            )
        if missing:
            raise SnapshotError(f"unknown table(s) {', '.join(missing)}; the database has {sorted(by_name)}")
        by_name = {name: table for name, table in by_name.items() if name in tables}
    chosen = [table for name, table in sorted(by_name.items()) if name not in exclude]
    keyless = [table.name for table in chosen if not table.primary_key.columns]
    if keyless:
        raise SnapshotError(
            f"table(s) {', '.join(keyless)} have no primary key, so their rows cannot be told apart; "
            "give them one or leave them out with exclude=[...]"
        )
    return chosen


def _snapshot_table(connection: Connection, table: Table) -> TableSnapshot:
    primary_key = tuple(column.name for column in table.primary_key.columns)
    columns = tuple(column.name for column in table.columns)
    rows: dict[tuple[Any, ...], dict[str, Any]] = {}
    result = connection.execute(select(table))
    keys = tuple(result.keys())  # once: a mapping per row built its keys' view again for each (half the time)
    for values in result:
        image = dict(zip(keys, values, strict=True))
        rows[tuple(image[name] for name in primary_key)] = image
    return TableSnapshot(table.name, primary_key, columns, rows)


def take_snapshot(
    bind: Bind,
    *,
    tables: Collection[str] | None = None,
    exclude: Collection[str] = (),
    metadata: MetaData | None = None,
) -> Snapshot:
    """Copy every row of every table (or of ``tables``) from an Engine, Connection or Session.

    Pass your models' ``metadata`` to read values through your column types (JSON, Numeric, custom types);
    otherwise the tables are reflected from the database.
    """
    with connection_for(bind) as connection:
        chosen = reflect_tables(connection, tables=tables, exclude=exclude, metadata=metadata)
        return Snapshot({table.name: _snapshot_table(connection, table) for table in chosen})


def rows_differ(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """Whether two images of one row hold different values (by value: 45.5 == Decimal('45.50'))."""
    if before == after:
        return False
    if set(before) != set(after):
        return True
    return any(not values_equal(before[name], after[name]) for name in before)


def diff_snapshots(before: Snapshot, after: Snapshot) -> StateDiff:
    """Every row inserted, deleted or updated between two snapshots of the same database."""
    if not isinstance(before, Snapshot) or not isinstance(after, Snapshot):
        raise SnapshotError("diff_snapshots(before, after) takes two Snapshot objects from take_snapshot()")
    changes: list[RowChange] = []
    for name in sorted(set(before.tables) | set(after.tables)):
        old = before.tables.get(name)
        new = after.tables.get(name)
        if old is not None and new is not None and old.primary_key != new.primary_key:
            raise SnapshotError(
                f"table {name!r} has primary key {old.primary_key} before and {new.primary_key} after; "
                "both snapshots must come from the same schema"
            )
        old_rows = old.rows if old is not None else {}
        new_rows = new.rows if new is not None else {}
        primary_key = (old or new).primary_key  # type: ignore[union-attr]
        for key_values, row in old_rows.items():
            current = new_rows.get(key_values)
            if current is None:
                key = dict(zip(primary_key, key_values, strict=True))
                changes.append(RowChange(name, key, "delete", dict(row), None))
            elif current is not row and rows_differ(row, current):
                key = dict(zip(primary_key, key_values, strict=True))
                changes.append(RowChange(name, key, "update", dict(row), dict(current)))
        for key_values, row in new_rows.items():
            if key_values not in old_rows:
                key = dict(zip(primary_key, key_values, strict=True))
                changes.append(RowChange(name, key, "insert", None, dict(row)))
    return StateDiff(changes)
