"""The change log for many trials that start from one template database: installed once, read per trial.

``install_change_log(template)`` adds small triggers to the template that log the rowid of every row an
INSERT, UPDATE or DELETE touches into ``_passhat_touched``, and returns the ``StartingState``: a snapshot of
the template and each row's rowid -> primary key. Every copy of the template file (a file copy or SQLite's
backup API) inherits the triggers with an empty log, so a trial pays nothing to start or stop its log. The
diff reads only the touched rows: their before-images from the shared snapshot (found through the rowid map)
and their after-images from the trial's database, raw through sqlite3 with the same SQLAlchemy result
processing a snapshot applies, so it equals ``diff_snapshots(start.snapshot, take_snapshot(copy))``.

Rows are matched by primary key, not rowid: a REPLACE (which deletes the old row without firing a trigger) or
a row moved to a new key still gives the diff two snapshots would. Tables without rowids (``WITHOUT ROWID``)
are compared in full instead.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from sqlalchemy import Engine, MetaData, Table
from sqlalchemy.dialects import sqlite
from sqlalchemy.exc import DBAPIError

from passhat.checks._diff import RowChange, StateDiff
from passhat.checks._snapshot import (
    INTERNAL_PREFIX,
    Snapshot,
    TableSnapshot,
    reflect_tables,
    rows_differ,
    take_snapshot,
)

TOUCHED = f"{INTERNAL_PREFIX}touched"
_CHUNK = 500  # rowids per IN (...) lookup: under SQLite's bound-parameter limit
_DIALECT = sqlite.dialect()  # result processing needs no connection; every pysqlite engine processes alike

RowidMap = Mapping[str, Mapping[int, tuple[Any, ...]]]
"""Per table: rowid -> primary-key values of the starting state."""


class ChangeLogError(ValueError):
    """The change log cannot be used as asked (the message says what to do instead)."""


@dataclass(frozen=True)
class StartingState:
    """What every copy of a template starts from: its snapshot, each row's rowid, and the watched tables.

    ``install_change_log`` makes one; ``diff(copy)`` (or ``record_changes(copy, start=...)``) gives a copy's
    row changes since then.
    """

    snapshot: Snapshot
    rowids: RowidMap
    tables: Mapping[str, Table]
    """The watched tables by name, with the column types their values are read through."""

    def diff(self, database: Engine | sqlite3.Connection) -> StateDiff:
        """Every row change in a copy of the template (an Engine, or its sqlite3 connection) since the start."""
        if isinstance(database, sqlite3.Connection):
            return _diff(database, self)
        connection = database.raw_connection()
        try:
            driver = connection.driver_connection
            if not isinstance(driver, sqlite3.Connection):
                raise ChangeLogError(f"the starting state reads SQLite copies, got {type(driver).__name__}")
            return _diff(driver, self)
        finally:
            connection.close()

    def rebased(self, engine: Engine) -> StartingState:
        """The starting state of a copy of the template written since (its writes logged), as a template itself.

        Equals what ``install_change_log`` on the copy returns, and like it empties the copy's log; but only
        the rows the log names are read again (and the tables without rowids, which it never names): every
        other row is this state's own object, shared. A derived template (a replayed ticket's rows laid over
        the seed) costs the rows it changed, not a second copy of every row of their tables (which was most of
        a ticket's own template: 5 of its 9 ms for two retail rows).
        """
        raw = engine.raw_connection()
        try:
            connection = raw.driver_connection
            if not isinstance(connection, sqlite3.Connection):
                raise ChangeLogError(f"the starting state reads SQLite copies, got {type(connection).__name__}")
            touched: dict[str, set[int]] = defaultdict(set)
            for name, row in connection.execute(f"SELECT name, row FROM {TOUCHED}"):
                touched[name].add(row)
            tables = dict(self.snapshot.tables)
            for name, rows in touched.items():
                if name in self.rowids:
                    tables[name] = _rebased_table(connection, self, self.tables[name], sorted(rows))
            rowids = dict(self.rowids)
            if connection.in_transaction:
                connection.commit()
            connection.execute("BEGIN")
            try:
                connection.execute(f"DELETE FROM {TOUCHED}")
                for name in touched:
                    if name in self.rowids:
                        rowids[name] = _rowids(connection, self.tables[name])
            except BaseException:
                connection.rollback()
                raise
            connection.commit()
        finally:
            raw.close()
        unlogged = [table for name, table in self.tables.items() if name not in self.rowids]
        if unlogged:
            names = [table.name for table in unlogged]
            tables.update(take_snapshot(engine, tables=names, metadata=unlogged[0].metadata).tables)
        return StartingState(Snapshot(tables), rowids, self.tables)


def _rowids(connection: sqlite3.Connection, table: Table) -> dict[int, tuple[Any, ...]]:
    """Each row's rowid -> its primary-key values."""
    name = table.name.replace('"', '""')
    keys = ", ".join('"{}"'.format(column.name.replace('"', '""')) for column in table.primary_key.columns)
    return {row[0]: tuple(row[1:]) for row in connection.execute(f'SELECT rowid, {keys} FROM "{name}"')}


def _has_rowid(connection: sqlite3.Connection, table: Table) -> bool:
    """Whether the table's rows are addressable by rowid (not WITHOUT ROWID, no column named rowid)."""
    if any(column.name.lower() == "rowid" for column in table.columns):
        return False
    row = connection.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table.name,)
    ).fetchone()
    return row is not None and "WITHOUT ROWID" not in " ".join(str(row[0]).upper().split())


def install_change_log(
    engine: Engine,
    *,
    tables: Collection[str] | None = None,
    exclude: Collection[str] = (),
    metadata: MetaData | None = None,
) -> StartingState:
    """Install the touched-rows log on a template SQLite database, once; copies made afterwards inherit it.

    Returns the starting state to diff each copy against. Write the template no more after this (its copies
    would no longer start from the snapshot); installing again is harmless and starts a fresh log.
    """
    if not isinstance(engine, Engine) or engine.dialect.name != "sqlite":
        raise ChangeLogError(
            "install_change_log needs a SQLAlchemy Engine on a SQLite database; for another database take_snapshot() "
            "before and after each trial and use diff_snapshots()"
        )
    with engine.connect() as bound:
        chosen = reflect_tables(bound, tables=tables, exclude=exclude, metadata=metadata)
    raw = engine.raw_connection()
    try:
        connection = raw.driver_connection
        if not isinstance(connection, sqlite3.Connection):
            raise ChangeLogError(f"install_change_log needs the sqlite3 driver, got {type(connection).__name__}")
        rowids = _install(connection, chosen)
    finally:
        raw.close()
    watched = {table.name: table for table in chosen}
    # The snapshot reads the same tables through the same types (reflect_tables picks them the same way).
    snapshot = take_snapshot(engine, tables=list(watched), metadata=metadata)
    return StartingState(snapshot, rowids, watched)


def _trigger_sql(table: Table) -> list[str]:
    """The triggers that log the rowid of every row a statement writes, or deletes without a trigger."""
    name = '"{}"'.format(table.name.replace('"', '""'))
    literal = "'{}'".format(table.name.replace("'", "''"))
    key = ['"{}"'.format(column.name.replace('"', '""')) for column in table.primary_key.columns]
    holds_new_key = " AND ".join(f"{column} IS NEW.{column}" for column in key)
    key_moves = " OR ".join(f"NEW.{column} IS NOT OLD.{column}" for column in key)
    into = f"INSERT INTO {TOUCHED} (name, row)"

    def trigger(kind: str, timing: str, body: str, when: str = "") -> str:
        trigger_name = '"{}"'.format(f"{INTERNAL_PREFIX}touch_{table.name}_{kind}".replace('"', '""'))
        return f"CREATE TRIGGER IF NOT EXISTS {trigger_name} {timing} ON {name} {when} BEGIN {body}; END"

    return [
        trigger("insert", "AFTER INSERT", f"{into} VALUES ({literal}, NEW.rowid)"),
        trigger("update", "AFTER UPDATE", f"{into} VALUES ({literal}, OLD.rowid), ({literal}, NEW.rowid)"),
        trigger("delete", "AFTER DELETE", f"{into} VALUES ({literal}, OLD.rowid)"),
        # A REPLACE (INSERT OR REPLACE, or an UPDATE OR REPLACE moving a row onto a taken key) deletes the row
        # holding the key without firing a delete trigger: log that row first.
        trigger("replace", "BEFORE INSERT", f"{into} SELECT {literal}, rowid FROM {name} WHERE {holds_new_key}"),
        trigger(
            "rekey",
            "BEFORE UPDATE",
            f"{into} SELECT {literal}, rowid FROM {name} WHERE {holds_new_key}",
            when=f"WHEN {key_moves}",
        ),
    ]


def _install(connection: sqlite3.Connection, tables: list[Table]) -> dict[str, dict[int, tuple[Any, ...]]]:
    # One transaction for the log table and every trigger: sqlite3 runs DDL outside an implicit transaction, so
    # each CREATE TRIGGER would otherwise be its own commit, each waiting on the disk (seconds per template on a
    # busy machine, for no durability a template needs: a failure rolls everything back and raises).
    rowids: dict[str, dict[int, tuple[Any, ...]]] = {}
    if connection.in_transaction:
        connection.commit()
    connection.execute("BEGIN")
    try:
        connection.execute(f"CREATE TABLE IF NOT EXISTS {TOUCHED} (name TEXT NOT NULL, row INTEGER NOT NULL)")
        connection.execute(f"DELETE FROM {TOUCHED}")
        for table in tables:
            if not _has_rowid(connection, table):
                continue  # compared in full at diff time
            try:
                for statement in _trigger_sql(table):
                    connection.execute(statement)
            except (sqlite3.DatabaseError, DBAPIError) as exc:
                raise ChangeLogError(
                    f"cannot watch table {table.name!r}: {exc}; leave it out with exclude=[{table.name!r}]"
                ) from None
            rowids[table.name] = _rowids(connection, table)
    except BaseException:
        connection.rollback()
        raise
    connection.commit()
    return rowids


@lru_cache(maxsize=512)
def _processors(table: Table) -> tuple[tuple[str, Callable[[Any], Any] | None], ...]:
    """Each column's name and the conversion SQLAlchemy applies to its raw SQLite value (None: none)."""
    return tuple(
        (column.name, column.type.dialect_impl(_DIALECT).result_processor(_DIALECT, None)) for column in table.columns
    )


def _current_rows(connection: sqlite3.Connection, table: Table, rowids: list[int] | None) -> list[dict[str, Any]]:
    """The rows at ``rowids`` now (every row when None), as a snapshot would read them."""
    processors = _processors(table)
    quoted = ", ".join('"{}"'.format(name.replace('"', '""')) for name, _ in processors)
    query = 'SELECT {} FROM "{}"'.format(quoted, table.name.replace('"', '""'))
    chunks = [None] if rowids is None else [rowids[i : i + _CHUNK] for i in range(0, len(rowids), _CHUNK)]
    found: list[dict[str, Any]] = []
    for chunk in chunks:
        cursor = (
            connection.execute(query)
            if chunk is None
            else connection.execute(f"{query} WHERE rowid IN ({', '.join('?' * len(chunk))})", chunk)
        )
        for raw in cursor:
            found.append(
                {
                    column: value if process is None or value is None else process(value)
                    for (column, process), value in zip(processors, raw, strict=True)
                }
            )
    return found


def _rebased_table(
    connection: sqlite3.Connection, start: StartingState, table: Table, rowids: list[int]
) -> TableSnapshot:
    """The table's snapshot once the logged ``rowids`` were written: the starting rows, less those that held
    a touched rowid and whose key no row holds now, with the rows at the touched rowids as they are now."""
    initial = start.snapshot.table(table.name)
    now = {tuple(row[name] for name in initial.primary_key): row for row in _current_rows(connection, table, rowids)}
    rows = dict(initial.rows)
    starting = start.rowids[table.name]
    for rowid in rowids:
        key = starting.get(rowid)
        if key is not None and key not in now:
            rows.pop(key, None)
    rows.update(now)
    return replace(initial, rows=rows)


def _table_changes(
    connection: sqlite3.Connection, table: Table, start: StartingState, rowids: list[int] | None
) -> list[RowChange]:
    """The table's changes among the touched ``rowids`` (None: a table without rowids, compared in full)."""
    initial = start.snapshot.table(table.name)
    primary_key = initial.primary_key
    after_by_key = {tuple(row[name] for name in primary_key): row for row in _current_rows(connection, table, rowids)}
    # Keys, not rowids, pair the images: a REPLACE gives the same key a new rowid, and any row holding a key
    # now was either there at the start (its rowid is touched, or it is unchanged) or was written (touched).
    if rowids is None:
        keys = dict.fromkeys(initial.rows)
    else:
        starting = start.rowids[table.name]
        keys = dict.fromkeys(starting[rowid] for rowid in rowids if rowid in starting)
    keys.update(dict.fromkeys(after_by_key))
    changes: list[RowChange] = []
    for key_values in keys:
        before = initial.rows.get(key_values)
        after = after_by_key.get(key_values)
        key = dict(zip(primary_key, key_values, strict=True))
        if before is None and after is not None:
            changes.append(RowChange(table.name, key, "insert", None, after))
        elif before is not None and after is None:
            changes.append(RowChange(table.name, key, "delete", dict(before), None))
        elif before is not None and after is not None and rows_differ(before, after):
            changes.append(RowChange(table.name, key, "update", dict(before), after))
    return changes


def _diff(connection: sqlite3.Connection, start: StartingState) -> StateDiff:
    touched: dict[str, set[int]] = defaultdict(set)
    for name, row in connection.execute(f"SELECT name, row FROM {TOUCHED}"):
        touched[name].add(row)
    changes: list[RowChange] = []
    for name in sorted(start.snapshot.tables):
        table = start.tables[name]
        if name not in start.rowids:
            changes.extend(_table_changes(connection, table, start, None))
        elif name in touched:
            changes.extend(_table_changes(connection, table, start, sorted(touched[name])))
    return StateDiff(changes)
