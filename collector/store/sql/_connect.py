"""How `SqlStore` sets up its connections: SQLite's pragmas and write transactions, PostgreSQL's NUL rule, and the
one connection an in-memory SQLite store shares between threads."""

from __future__ import annotations

import threading
from typing import Any

import sqlalchemy as sa
from sqlalchemy.pool import StaticPool

from passhat.collector.store.sql._ingest import without_nul


def sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets readers run during a write; synchronous=FULL makes each commit survive power loss, not only
    # a crash: an acknowledged span must never be lost. busy_timeout covers a second process (the CLI).
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA busy_timeout=30000")
    # The span and ticket identity indexes start with random trace and ticket ids, so each group commit inserts
    # into their pages all over the file: a 64 MiB page cache (default 2 MiB) keeps more of them in memory.
    cursor.execute("PRAGMA cache_size=-65536")
    # Checkpoint the WAL into the database every ~40 MiB instead of every 4 MiB: a page changed by many group
    # commits is copied back once, and commits pay for checkpoints a tenth as often (a third less commit time
    # in benchmarks/bench_ingest.py's load).
    cursor.execute("PRAGMA wal_autocheckpoint=10000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()
    # Transactions are begun by `sqlite_begin` instead of the driver, so writers can take the write lock
    # up front (BEGIN IMMEDIATE): a deferred transaction that reads, then writes after another process
    # committed fails at once with SQLITE_BUSY instead of waiting.
    dbapi_connection.isolation_level = None


def sqlite_begin(conn: sa.Connection) -> None:
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("passhat_write") else "BEGIN")


def postgres_parameters(
    _conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, executemany: bool
) -> tuple[str, Any]:
    """Statements bound by SQLAlchemy (ticket lookups by id, trials, alerts): U+0000 becomes U+FFFD, as in the
    ingest path's rows, so a lookup finds what was stored."""
    if isinstance(parameters, dict):
        return statement, _no_nul(parameters)
    if executemany and isinstance(parameters, list | tuple):
        return statement, [_no_nul(p) if isinstance(p, dict) else p for p in parameters]
    return statement, parameters


def _no_nul(parameters: dict[str, Any]) -> dict[str, Any]:
    values = list(parameters.values())
    cleaned = without_nul(values)  # the ingest path's rule, so both paths store the same text
    return parameters if cleaned is values else dict(zip(parameters, cleaned, strict=True))


class OneMemoryDatabase(StaticPool):
    """The pool of an in-memory SQLite store (``sqlite://``): one connection, so one database, for every thread.

    An in-memory database lives in the connection that made it. SQLAlchemy's default pool for it gives each thread
    a connection of its own, so a thread other than the one that opened the store (a span processor's export
    thread, the web app's request threads) found an empty database ("no such table"), and the spans it exported
    were lost. Threads take turns on the one connection: a thread checks it out and holds it until it hands it
    back (nested checkouts in one thread share it, as they did). The store's writers take the same turn
    (`turn`), so a thread holding the connection that then writes cannot wait on a writer waiting on it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.turn = threading.RLock()

    def _do_get(self) -> Any:
        self.turn.acquire()
        try:
            return super()._do_get()
        except BaseException:
            self.turn.release()
            raise

    def _do_return_conn(self, record: Any) -> None:
        try:
            super()._do_return_conn(record)
        finally:
            self.turn.release()
