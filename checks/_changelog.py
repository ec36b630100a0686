"""A change log captured while a trial runs, so the terminal diff costs what changed, not the database size.

Two ways to capture, one diff. With ``start=`` (a ``StartingState`` from ``install_change_log`` on the template
the database was copied from), nothing is installed or removed per trial: the template's triggers log touched
rowids and the before-images come from the shared snapshot (see ``_touched``). Without it,
``record_changes(engine)`` installs SQLite triggers that copy the *before* image of every row an INSERT,
UPDATE, DELETE or REPLACE touches into a shadow table ``_passhat_log_<table>`` (untyped columns, so values are
kept exactly as stored). The diff reads, per touched row, the first logged image (its state when the trial
started) and the row as it is now, both through the same SQLAlchemy column types a snapshot uses: the two
ways of diffing give the same ``StateDiff``.

The triggers live in the database file, so writes from any connection or process are captured (a tool server
in a subprocess included). Schema changes during the trial are not captured.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from types import TracebackType
from typing import Any

from sqlalchemy import Column, Connection, Engine, Integer, MetaData, Table, Text, func, select, tuple_
from sqlalchemy.exc import DBAPIError

from passhat.checks._diff import RowChange, StateDiff
from passhat.checks._snapshot import INTERNAL_PREFIX, reflect_tables, rows_differ
from passhat.checks._touched import TOUCHED, ChangeLogError, StartingState

_CHUNK = 400  # keys per IN (...) lookup: well under SQLite's bound-parameter limit for composite keys
_SEQ = "_passhat_seq"
_OP = "_passhat_op"


class _WatchedTable:
    """One table under watch: its shadow log table and the SQL that installs and removes the triggers."""

    def __init__(self, table: Table, engine: Engine) -> None:
        self.table = table
        self.primary_key = [column.name for column in table.primary_key.columns]
        self.columns = [column.name for column in table.columns]
        self.log_name = f"{INTERNAL_PREFIX}log_{table.name}"
        self.log = Table(
            self.log_name,
            MetaData(),
            Column(_SEQ, Integer, primary_key=True),
            Column(_OP, Text, nullable=False),
            *(Column(column.name, column.type) for column in table.columns),
        )
        self._quote = engine.dialect.identifier_preparer.quote

    def _trigger(self, kind: str) -> str:
        return self._quote(f"{INTERNAL_PREFIX}{kind}_{self.table.name}")

    def install_sql(self) -> list[str]:
        q = self._quote
        table, log = q(self.table.name), q(self.log_name)
        all_columns = ", ".join(q(name) for name in self.columns)
        key_columns = ", ".join(q(name) for name in self.primary_key)

        def values(prefix: str, names: Iterable[str]) -> str:
            return ", ".join(f"{prefix}.{q(name)}" for name in names)

        same_key = " AND ".join(f"{table}.{q(name)} IS NEW.{q(name)}" for name in self.primary_key)
        key_moved = " OR ".join(f"NEW.{q(name)} IS NOT OLD.{q(name)}" for name in self.primary_key)
        into_all = f"INSERT INTO {log} ({q(_OP)}, {all_columns})"
        into_key = f"INSERT INTO {log} ({q(_OP)}, {key_columns})"
        return [
            *self.remove_sql(),
            f"CREATE TABLE {log} ({q(_SEQ)} INTEGER PRIMARY KEY, {q(_OP)} TEXT NOT NULL, {all_columns})",
            # A REPLACE overwrites an existing row without firing delete triggers: keep its image first.
            f"CREATE TRIGGER {self._trigger('replace')} BEFORE INSERT ON {table} BEGIN "
            f"{into_all} SELECT 'replace', {all_columns} FROM {table} WHERE {same_key}; END",
            f"CREATE TRIGGER {self._trigger('insert')} AFTER INSERT ON {table} BEGIN "
            f"{into_key} VALUES ('insert', {values('NEW', self.primary_key)}); END",
            f"CREATE TRIGGER {self._trigger('update')} AFTER UPDATE ON {table} BEGIN "
            f"{into_all} VALUES ('update', {values('OLD', self.columns)}); END",
            # An update that moves a row to a new primary key creates a row under that key.
            f"CREATE TRIGGER {self._trigger('rekey')} AFTER UPDATE ON {table} WHEN {key_moved} BEGIN "
            f"{into_key} VALUES ('insert', {values('NEW', self.primary_key)}); END",
            f"CREATE TRIGGER {self._trigger('delete')} AFTER DELETE ON {table} BEGIN "
            f"{into_all} VALUES ('delete', {values('OLD', self.columns)}); END",
        ]

    def remove_sql(self) -> list[str]:
        kinds = ("replace", "insert", "update", "rekey", "delete")
        return [
            *(f"DROP TRIGGER IF EXISTS {self._trigger(kind)}" for kind in kinds),
            f"DROP TABLE IF EXISTS {self._quote(self.log_name)}",
        ]

    def changes(self, connection: Connection) -> list[RowChange]:
        log = self.log
        log_key = [log.c[name] for name in self.primary_key]
        first_entries = select(func.min(log.c[_SEQ])).group_by(*log_key)
        starting: dict[tuple[Any, ...], dict[str, Any] | None] = {}
        for entry in connection.execute(select(log).where(log.c[_SEQ].in_(first_entries))).mappings():
            key_values = tuple(entry[name] for name in self.primary_key)
            starting[key_values] = None if entry[_OP] == "insert" else {name: entry[name] for name in self.columns}
        current = self._current_rows(connection, list(starting))
        changes: list[RowChange] = []
        for key_values, before in starting.items():
            after = current.get(key_values)
            key = dict(zip(self.primary_key, key_values, strict=True))
            if before is None and after is not None:
                changes.append(RowChange(self.table.name, key, "insert", None, after))
            elif before is not None and after is None:
                changes.append(RowChange(self.table.name, key, "delete", before, None))
            elif before is not None and after is not None and rows_differ(before, after):
                changes.append(RowChange(self.table.name, key, "update", before, after))
        return changes

    def _current_rows(
        self, connection: Connection, keys: list[tuple[Any, ...]]
    ) -> dict[tuple[Any, ...], dict[str, Any]]:
        rows: dict[tuple[Any, ...], dict[str, Any]] = {}
        key_columns = [self.table.c[name] for name in self.primary_key]
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            if len(key_columns) == 1:
                condition = key_columns[0].in_([key[0] for key in chunk])
            else:
                condition = tuple_(*key_columns).in_(chunk)
            for row in connection.execute(select(self.table).where(condition)).mappings():
                image = dict(row)
                rows[tuple(image[name] for name in self.primary_key)] = image
        return rows


class ChangeLog:
    """Row changes captured by triggers between entering and leaving the ``with`` block.

    ``diff()`` inside the block gives the changes so far; after the block it gives the changes at exit (the
    triggers and log tables are removed on exit). With ``start``, the changes are those since the starting
    state the database was copied from, and the template's triggers stay.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        tables: Collection[str] | None = None,
        exclude: Collection[str] = (),
        metadata: MetaData | None = None,
        start: StartingState | None = None,
    ) -> None:
        if not isinstance(engine, Engine):
            raise ChangeLogError(f"record_changes needs a SQLAlchemy Engine, got {type(engine).__name__}")
        if engine.dialect.name != "sqlite":
            raise ChangeLogError(
                f"record_changes captures changes with SQLite triggers and does not support "
                f"{engine.dialect.name!r}; take_snapshot() before and after and use diff_snapshots() instead"
            )
        self._engine = engine
        self._tables = tables
        self._exclude = exclude
        self._metadata = metadata
        if start is not None and (tables is not None or exclude or metadata is not None):
            raise ChangeLogError(
                "the starting state fixes the tables and their types; pass tables, exclude and metadata to "
                "install_change_log() on the template instead"
            )
        self._start = start
        self._watched: list[_WatchedTable] = []
        self._active = False
        self._final: StateDiff | None = None

    def __enter__(self) -> ChangeLog:
        if self._active or self._final is not None:
            raise ChangeLogError("a ChangeLog records one trial; create a new one with record_changes()")
        if self._start is not None:
            self._check_installed()
            self._active = True
            return self
        with self._engine.begin() as connection:
            chosen = reflect_tables(connection, tables=self._tables, exclude=self._exclude, metadata=self._metadata)
            self._watched = [_WatchedTable(table, self._engine) for table in chosen]
            for watched in self._watched:
                try:
                    for statement in watched.install_sql():
                        connection.exec_driver_sql(statement)
                except DBAPIError as exc:
                    # e.g. a virtual (full-text) table, which SQLite does not allow triggers on.
                    raise ChangeLogError(
                        f"cannot watch table {watched.table.name!r}: {exc.orig}; "
                        f"leave it out with exclude=[{watched.table.name!r}]"
                    ) from None
        self._active = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            self._final = self._read()
        finally:
            self._active = False
            if self._start is None:
                self._remove()

    def _check_installed(self) -> None:
        with self._engine.connect() as connection:
            found = connection.exec_driver_sql(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TOUCHED,)
            ).first()
        if found is None:
            raise ChangeLogError(
                "this database has no change log installed: call install_change_log() on the template before "
                "copying it, and pass the starting state it returns as start="
            )

    def _remove(self) -> None:
        with self._engine.begin() as connection:
            for watched in self._watched:
                for statement in watched.remove_sql():
                    connection.exec_driver_sql(statement)

    @property
    def tables(self) -> list[str]:
        """The tables under watch."""
        if self._start is not None:
            return sorted(self._start.snapshot.tables)
        return [watched.table.name for watched in self._watched]

    def diff(self) -> StateDiff:
        """The row changes since the log started (live inside the block, fixed at exit after it)."""
        if self._final is not None:
            return self._final
        if not self._active:
            raise ChangeLogError("the change log has not started: use `with record_changes(engine) as log:`")
        return self._read()

    def _read(self) -> StateDiff:
        if self._start is not None:
            return self._start.diff(self._engine)
        with self._engine.connect() as connection:
            changes = [change for watched in self._watched for change in watched.changes(connection)]
        return StateDiff(changes)


def record_changes(
    engine: Engine,
    *,
    tables: Collection[str] | None = None,
    exclude: Collection[str] = (),
    metadata: MetaData | None = None,
    start: StartingState | None = None,
) -> ChangeLog:
    """Start a change log on a SQLite engine; use it as a context manager around the trial.

    ``start``: the ``StartingState`` that ``install_change_log`` returned for the template this database was
    copied from; then nothing is installed per trial and the diff is relative to that state.
    """
    return ChangeLog(engine, tables=tables, exclude=exclude, metadata=metadata, start=start)
