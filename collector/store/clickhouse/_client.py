"""One clickhouse-connect client for a store URL: URL parsing, error translation, and a lock.

`chdb:///abs/path` is the embedded engine (clickhouse-connect's chdb backend); `http(s)://host:port[/db]` a
server or cluster; `clickhouse://` and `clickhouses://` are spelled-out aliases of http and https. Store
options ride as query parameters and are removed before the URL reaches clickhouse-connect: `database`,
`fsync` (0 turns off fsync-on-insert), and `<kind>_ttl_days` for each `Retention` field (0 = forever).
"""

from __future__ import annotations

import os
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: chDB runs on Linux and macOS only
    fcntl = None  # type: ignore[assignment]

import clickhouse_connect
from clickhouse_connect.driver.client import Client
from clickhouse_connect.driver.exceptions import ClickHouseError
from clickhouse_connect.driver.exceptions import DataError as DriverDataError

from passhat.collector.store._interface import StoreDataError, StoreError
from passhat.collector.store.clickhouse._schema import Retention, check_database_name

DEFAULT_DATABASE = "passhat"
_SCHEMES = {"chdb": "chdb", "http": "http", "https": "https", "clickhouse": "http", "clickhouses": "https"}


@dataclass(frozen=True, slots=True)
class ClickHouseTarget:
    """A parsed store URL: what clickhouse-connect gets, and the store's own options."""

    dsn: str
    database: str
    retention: Retention
    durable: bool
    embedded: bool
    data_path: str | None = None

    @property
    def display(self) -> str:
        """The URL without credentials, for messages."""
        if self.embedded:
            return f"chdb://{self.data_path} (database {self.database})"
        parts = urlsplit(self.dsn)
        netloc = parts.netloc.rpartition("@")[2]
        return urlunsplit((parts.scheme, netloc, parts.path, "", "")) + f" (database {self.database})"


def parse_url(url: str, *, database: str | None = None, retention: Retention | None = None) -> ClickHouseTarget:
    """Split a store URL into the clickhouse-connect DSN and the store options; ValueError when malformed."""
    parts = urlsplit(url)
    scheme = _SCHEMES.get(parts.scheme.lower())
    if scheme is None:
        raise ValueError(f"not a ClickHouse URL: {url!r} (use chdb:///path or http(s)://host:port)")
    options = dict(parse_qsl(parts.query, keep_blank_values=True))
    db = database or options.pop("database", None)
    options.pop("database", None)
    durable = options.pop("fsync", "1") not in ("0", "false", "False", "no")
    ttl: dict[str, int | None] = {}
    for field in fields(Retention):
        raw = options.pop(field.name.replace("_days", "_ttl_days"), None)
        if raw is not None:
            try:
                days = int(raw)
            except ValueError:
                raise ValueError(f"{field.name.replace('_days', '_ttl_days')} must be a number of days") from None
            ttl[field.name] = days or None
    resolved = retention or Retention()
    if ttl:
        resolved = Retention(**{f.name: ttl.get(f.name, getattr(resolved, f.name)) for f in fields(Retention)})
    query = urlencode(options)
    if scheme == "chdb":
        if parts.netloc not in ("", "memory"):
            raise ValueError(f"the embedded engine needs an absolute data path: chdb:///abs/path, not {url!r}")
        path = parts.path if parts.netloc == "" else ""
        if path in ("", "/"):
            raise ValueError(f"no data path in {url!r}: use chdb:///abs/path/to/data")
        dsn = urlunsplit(("chdb", "", path, query, ""))
        return ClickHouseTarget(dsn, check_database_name(db or DEFAULT_DATABASE), resolved, durable, True, path)
    if not parts.hostname:
        raise ValueError(f"no host in {url!r}")
    path_db = parts.path.strip("/")
    db = db or path_db or DEFAULT_DATABASE
    dsn = urlunsplit((scheme, parts.netloc, "", query, ""))
    return ClickHouseTarget(dsn, check_database_name(db), resolved, durable, False)


def refuse_if_in_use(data_path: str) -> None:
    """StoreError when another process has the embedded engine's data directory open (it holds an exclusive
    lock on `status` there, which names its pid). chDB would print a raw `Cannot lock file` line to stderr, then
    fail with an unrelated message; this says what is wrong and what to do instead."""
    status = os.path.join(data_path, "status")
    if fcntl is None or not os.path.exists(status):
        return
    try:
        with open(status, "rb") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                owner = handle.read(200).decode(errors="replace").split("\n", 1)[0].removeprefix("PID:").strip()
            else:
                fcntl.flock(handle, fcntl.LOCK_UN)
                return
    except OSError:
        return  # unreadable: let chDB say what it finds
    if owner == str(os.getpid()):
        return  # this process holds it: chDB reuses its engine
    raise StoreError(
        f"the embedded ClickHouse data directory {data_path} is in use by another process (pid {owner or '?'}): "
        "only one process can open it at a time: stop the collector, or use the collector's HTTP API or a "
        "ClickHouse server (http://host:8123) that several processes can share"
    )


class ClickHouseConnection:
    """A clickhouse-connect `Client` behind a lock, with every driver error turned into a `StoreError`.

    The lock makes the store's read-check-insert sequences atomic within a process and keeps chdb's one
    handle from seeing interleaved calls; ClickHouse does the heavy lifting, so the lock is held briefly.
    """

    def __init__(self, target: ClickHouseTarget) -> None:
        self.target = target
        self.lock = threading.RLock()
        try:
            if target.embedded:
                assert target.data_path is not None
                os.makedirs(target.data_path, exist_ok=True)
                refuse_if_in_use(target.data_path)
                self.client: Client = clickhouse_connect.get_client(dsn=target.dsn)
            else:
                self.client = clickhouse_connect.get_client(
                    dsn=target.dsn,
                    autogenerate_session_id=False,
                    connect_timeout=10,
                    send_receive_timeout=120,
                )
        except ClickHouseError as exc:
            hint = (
                " (the embedded engine hosts one data path per process, and one process per data path: is another"
                " chdb path open in this process?)"
                if target.embedded
                else ""
            )
            raise StoreError(f"cannot open ClickHouse at {target.display}: {exc}{hint}") from exc
        except OSError as exc:
            raise StoreError(f"cannot open ClickHouse at {target.display}: {exc}") from exc

    def _fail(self, what: str, exc: Exception) -> StoreError:
        return StoreError(f"ClickHouse {what} failed at {self.target.display}: {exc}")

    def query(self, sql: str, parameters: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        """Rows of a SELECT. Parameters are bound client-side (`%(name)s`), so large key lists fit."""
        with self.lock:
            try:
                result = self.client.query(sql, parameters=parameters or None)
                return [tuple(row) for row in result.result_rows]
            except ClickHouseError as exc:
                raise self._fail("query", exc) from exc

    def command(self, sql: str, settings: dict[str, Any] | None = None) -> None:
        with self.lock:
            try:
                self.client.command(sql, settings=settings)
            except ClickHouseError as exc:
                raise self._fail("command", exc) from exc

    def insert(self, table: str, rows: Sequence[Sequence[Any]], columns: Sequence[str]) -> None:
        """A synchronous INSERT: when it returns, ClickHouse has written (and with fsync, synced) the part."""
        if not rows:
            return
        with self.lock:
            try:
                self.client.insert(
                    f"{self.target.database}.{table}",
                    rows,
                    column_names=list(columns),
                    settings={"async_insert": 0},
                )
            # A value the column cannot hold (an integer out of its range, text that is not UTF-8), refused by
            # the driver while it encodes the rows: those rows are at fault, not the database (as SQLite's
            # OverflowError), and nothing of this insert is stored.
            except (DriverDataError, struct.error, OverflowError, TypeError, ValueError) as exc:
                raise StoreDataError(f"a value could not be stored in {table}, nothing was stored: {exc}") from exc
            except ClickHouseError as exc:
                raise self._fail(f"insert into {table}", exc) from exc

    def close(self) -> None:
        with self.lock:
            self.client.close()
