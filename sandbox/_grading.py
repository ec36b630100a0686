"""The terminal diff of a trial, at a cost proportional to the tables it wrote, not to the database.

The template database carries tiny triggers that note which tables a statement touched (`_passhat_touched`);
every trial copy inherits them. Grading reads only the touched tables, straight through sqlite3, and diffs
them against the starting snapshot taken once. Tables with column types beyond SQLite's own (and Boolean)
are read through `take_snapshot` instead, so values always compare as the checks expect.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from sqlalchemy import Boolean, Engine, Float, Integer, MetaData, String, Table, Text

from passhat.checks import Snapshot, StateDiff, TableSnapshot, diff_snapshots, take_snapshot

TOUCHED = "_passhat_touched"
_PLAIN = (Integer, Float, String, Text, Boolean)


def install_touch_log(connection: sqlite3.Connection, metadata: MetaData) -> None:
    """Add the touched-tables log and its triggers to a database (done once, on the template)."""
    connection.execute(f"CREATE TABLE IF NOT EXISTS {TOUCHED} (name TEXT PRIMARY KEY)")
    for table in metadata.sorted_tables:
        for op in ("INSERT", "UPDATE", "DELETE"):
            connection.execute(
                f'CREATE TRIGGER IF NOT EXISTS "_passhat_touch_{table.name}_{op.lower()}" '
                f'AFTER {op} ON "{table.name}" '
                f"BEGIN INSERT OR IGNORE INTO {TOUCHED} (name) VALUES ('{table.name}'); END"
            )
    connection.commit()


def _plain(table: Table) -> bool:
    return all(isinstance(column.type, _PLAIN) for column in table.columns)


def _read_table(connection: sqlite3.Connection, table: Table) -> TableSnapshot:
    columns = tuple(column.name for column in table.columns)
    primary_key = tuple(column.name for column in table.primary_key.columns)
    booleans = [i for i, column in enumerate(table.columns) if isinstance(column.type, Boolean)]
    quoted = ", ".join(f'"{name}"' for name in columns)
    rows: dict[tuple[Any, ...], dict[str, Any]] = {}
    for raw in connection.execute(f'SELECT {quoted} FROM "{table.name}"'):
        values = list(raw)
        for index in booleans:
            if values[index] is not None:
                values[index] = bool(values[index])
        image = dict(zip(columns, values, strict=True))
        rows[tuple(image[name] for name in primary_key)] = image
    return TableSnapshot(table.name, primary_key, columns, rows)


def touched_tables(connection: sqlite3.Connection) -> list[str]:
    """Names of the tables written since the copy was made."""
    return sorted(row[0] for row in connection.execute(f"SELECT name FROM {TOUCHED}"))


def trial_diff(connection: sqlite3.Connection, engine: Engine, initial: Snapshot, metadata: MetaData) -> StateDiff:
    """Every row change in the trial's database relative to the starting snapshot."""
    names = [name for name in touched_tables(connection) if name in metadata.tables]
    after: dict[str, TableSnapshot] = {}
    slow = [name for name in names if not _plain(metadata.tables[name])]
    for name in names:
        if name not in slow:
            after[name] = _read_table(connection, metadata.tables[name])
    if slow:
        after.update(take_snapshot(engine, tables=slow, metadata=metadata).tables)
    before = Snapshot({name: initial.table(name) for name in names})
    return diff_snapshots(before, Snapshot(after))
