"""Open a store by URL: SQLite and PostgreSQL URLs give a `SqlStore`; `chdb://`, `http(s)://` a `ClickHouseStore`."""

from __future__ import annotations

import difflib
import pathlib
import re

from passhat.collector.store._interface import Store, StoreError

CLICKHOUSE_SCHEMES = ("chdb://", "http://", "https://", "clickhouse://", "clickhouses://")
#: The databases the SQL store runs on (its migrations use their SQL), by SQLAlchemy dialect name.
SQL_DIALECTS = ("sqlite", "postgresql")
#: What a store URL may start with, as suggestions name them: the closest is offered for a mistyped scheme.
_SCHEMES = ("sqlite", "postgresql+psycopg", "postgresql", "chdb", "clickhouse", "clickhouses", "http", "https")
#: Spellings of a scheme that SQLAlchemy does not take, and the one meant.
_ALIASES = {
    "postgres": "postgresql+psycopg",
    "pg": "postgresql+psycopg",
    "pgsql": "postgresql+psycopg",
    "psql": "postgresql+psycopg",
    "postgre": "postgresql+psycopg",
    "sqlite3": "sqlite",
    "ch": "clickhouse",
}
STORE_URLS = (
    "sqlite:///path/to/passhat.db, postgresql+psycopg://user@host/db, chdb:///path/to/data (embedded ClickHouse) "
    "or a ClickHouse server's http(s)://host:8123 or clickhouse(s)://host"
)
_SCHEME = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://")
_PASSWORD = re.compile(r"//([^:/@]*):[^@/]*@")


def shown_url(url: str) -> str:
    """A store URL fit to print: a password in it is replaced by ***."""
    return _PASSWORD.sub(r"//\1:***@", url)


def default_store_url(data_dir: str | pathlib.Path) -> str:
    """The default store: a SQLite file in the data dir."""
    return f"sqlite:///{pathlib.Path(data_dir).expanduser().resolve() / 'passhat.db'}"


def store_url_problem(url: str) -> str | None:
    """Why ``url`` names no store passhat can open, judged by its scheme alone (nothing is connected to or
    created), with the closest URL it can open; None for a URL of a store passhat opens."""
    if url.startswith(CLICKHOUSE_SCHEMES):
        return None
    shown = shown_url(url)
    match = _SCHEME.match(url)
    if match is None:
        if "://" in url or ":/" in url or not url.strip():
            example = "sqlite:///path/to/passhat.db (three slashes; four before an absolute path)"
        else:
            example = repr(f"sqlite:///{shown}")
        return (
            f"{shown!r} is not a store URL (scheme://...): for a SQLite file write {example}; passhat opens "
            f"{STORE_URLS}"
        )
    scheme = match["scheme"]
    dialect, asynchronous = _known_sql_dialect(url)
    if dialect in SQL_DIALECTS and asynchronous:
        synchronous = "sqlite" if dialect == "sqlite" else "postgresql+psycopg"
        return (
            f"{scheme!r} in {shown!r} is an asyncio driver; passhat's store needs a synchronous one: did you mean "
            f"{synchronous + shown[len(scheme) :]!r}?"
        )
    if dialect in SQL_DIALECTS:
        return None
    if dialect is not None:  # a database SQLAlchemy knows, which passhat's migrations do not run on
        return f"{shown!r}: passhat's store runs on SQLite, PostgreSQL or ClickHouse, not {dialect}: use {STORE_URLS}"
    meant = _closest_scheme(scheme)
    known = f"passhat opens {STORE_URLS}"
    if meant is None:
        return f"unknown store URL scheme {scheme!r} in {shown!r}: {known}"
    return f"unknown store URL scheme {scheme!r} in {shown!r}: did you mean {meant + shown[len(scheme) :]!r}? {known}"


def _known_sql_dialect(url: str) -> tuple[str | None, bool]:
    """The SQLAlchemy dialect ``url`` names ('sqlite', 'postgresql', 'mysql', ...), None when SQLAlchemy has none of
    that name or driver, and whether its driver is an asyncio one. Only the dialect's module is loaded: no driver
    is imported, nothing connected to."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        dialect = make_url(url).get_dialect()
    except (ArgumentError, ImportError, ValueError):
        return None, False
    return str(dialect.name), bool(getattr(dialect, "is_async", False))


def _closest_scheme(scheme: str) -> str | None:
    lowered = scheme.lower()
    name, plus, _ = lowered.partition("+")
    if lowered in _SCHEMES:
        return lowered  # only its case was wrong
    if name in _ALIASES:
        return _ALIASES[name]
    if name in ("sqlite", "postgresql") and plus:  # a driver SQLAlchemy does not have
        return "sqlite" if name == "sqlite" else "postgresql+psycopg"
    close = difflib.get_close_matches(lowered, _SCHEMES, n=1, cutoff=0.6) or difflib.get_close_matches(
        name, _SCHEMES, n=1, cutoff=0.6
    )
    return close[0] if close else None


def open_store(url: str, *, migrate: bool = True) -> Store:
    """Open (and by default migrate) the store at `url`."""
    problem = store_url_problem(url)
    if problem is not None:
        raise StoreError(problem)
    if url.startswith(CLICKHOUSE_SCHEMES):
        try:
            from passhat.collector.store.clickhouse import ClickHouseStore
        except ImportError as exc:
            raise StoreError(f"{url!r} needs the ClickHouse store: pip install 'passhat[clickhouse]' ({exc})") from exc
        store: Store = ClickHouseStore(url)
    else:
        from passhat.collector.store.sql import SqlStore

        store = SqlStore(url)
    if migrate:
        try:
            store.migrate()
        except BaseException:
            store.close()
            raise
    return store
