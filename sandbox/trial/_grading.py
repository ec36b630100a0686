"""The terminal diff of a trial, at a cost proportional to the rows it wrote, not to the database.

The template database carries small triggers that log the rowid of every row a statement inserts, updates or
deletes (`_passhat_touched`); every trial copy inherits them. Grading reads only those rows, straight through
sqlite3, and compares them with the starting snapshot taken once (found through a rowid -> primary key map
built once). Tables with column types beyond SQLite's own (and Boolean) are read through `take_snapshot` and
`diff_snapshots` instead, so values always compare as the checks expect.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from typing import Any

from sqlalchemy import Boolean, Engine, Float, Integer, MetaData, String, Table, Text

from passhat.checks import RowChange, Snapshot, StateDiff, diff_snapshots, take_snapshot

TOUCHED = "_passhat_touched"
_PLAIN = (Integer, Float, String, Text, Boolean)

RowidMap = dict[str, dict[int, tuple[Any, ...]]]
"""Per table: rowid -> primary-key values of the starting state."""


def install_touch_log(connection: sqlite3.Connection, metadata: MetaData) -> None:
    """Add the touched-rows log and its triggers to a database (done once, on the template)."""
    connection.execute(f"CREATE TABLE IF NOT EXISTS {TOUCHED} (name TEXT NOT NULL, row INTEGER NOT NULL)")
    images = {"INSERT": ("NEW",), "UPDATE": ("OLD", "NEW"), "DELETE": ("OLD",)}
    for table in metadata.sorted_tables:
        for op, sides in images.items():
            values = ", ".join(f"('{table.name}', {side}.rowid)" for side in sides)
            connection.execute(
                f'CREATE TRIGGER IF NOT EXISTS "_passhat_touch_{table.name}_{op.lower()}" '
                f'AFTER {op} ON "{table.name}" BEGIN INSERT INTO {TOUCHED} (name, row) VALUES {values}; END'
            )
    connection.commit()


def rowid_map(connection: sqlite3.Connection, metadata: MetaData) -> RowidMap:
    """The starting state's rowid -> primary key, per table (read once from the template)."""
    mapping: RowidMap = {}
    for table in metadata.sorted_tables:
        keys = ", ".join(f'"{column.name}"' for column in table.primary_key.columns)
        mapping[table.name] = {
            row[0]: tuple(row[1:]) for row in connection.execute(f'SELECT rowid, {keys} FROM "{table.name}"')
        }
    return mapping


def _plain(table: Table) -> bool:
    return all(isinstance(column.type, _PLAIN) for column in table.columns)


def _current_rows(connection: sqlite3.Connection, table: Table, rowids: list[int]) -> dict[int, dict[str, Any]]:
    columns = [column.name for column in table.columns]
    booleans = [column.name for column in table.columns if isinstance(column.type, Boolean)]
    quoted = ", ".join(f'"{name}"' for name in columns)
    found: dict[int, dict[str, Any]] = {}
    for start in range(0, len(rowids), 500):
        chunk = rowids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for raw in connection.execute(f'SELECT rowid, {quoted} FROM "{table.name}" WHERE rowid IN ({marks})', chunk):
            image = dict(zip(columns, raw[1:], strict=True))
            for name in booleans:
                if image[name] is not None:
                    image[name] = bool(image[name])
            found[raw[0]] = image
    return found


def _table_changes(
    connection: sqlite3.Connection,
    table: Table,
    rowids: list[int],
    initial: Snapshot,
    starting: dict[int, tuple[Any, ...]],
) -> list[RowChange]:
    primary_key = tuple(column.name for column in table.primary_key.columns)
    before_rows = initial.table(table.name).rows
    current = _current_rows(connection, table, rowids)
    changes: list[RowChange] = []
    for rowid in rowids:
        before = before_rows.get(starting[rowid]) if rowid in starting else None
        after = current.get(rowid)
        before_key = {name: before[name] for name in primary_key} if before is not None else None
        after_key = {name: after[name] for name in primary_key} if after is not None else None
        if before is not None and after is not None and after_key is not None and before_key == after_key:
            if before != after:
                changes.append(RowChange(table.name, after_key, "update", dict(before), after))
            continue
        if before is not None and before_key is not None:
            changes.append(RowChange(table.name, before_key, "delete", dict(before), None))
        if after is not None and after_key is not None:
            changes.append(RowChange(table.name, after_key, "insert", None, after))
    return changes


def trial_diff(
    connection: sqlite3.Connection, engine: Engine, initial: Snapshot, metadata: MetaData, starting: RowidMap
) -> StateDiff:
    """Every row change in the trial's database relative to the starting snapshot."""
    touched: dict[str, set[int]] = defaultdict(set)
    for name, row in connection.execute(f"SELECT name, row FROM {TOUCHED}"):
        touched[name].add(row)
    changes: list[RowChange] = []
    slow: list[str] = []
    for name in sorted(touched):
        table = metadata.tables.get(name)
        if table is None:
            continue
        if not _plain(table) or name not in starting:
            slow.append(name)
            continue
        changes.extend(_table_changes(connection, table, sorted(touched[name]), initial, starting[name]))
    if slow:
        before = Snapshot({name: initial.table(name) for name in slow})
        after = take_snapshot(engine, tables=slow, metadata=metadata)
        changes.extend(diff_snapshots(before, after).changes)
    return StateDiff(changes)
