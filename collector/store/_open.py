"""Open a store by URL: SQLAlchemy URLs give a `SqlStore`; `chdb://`, `http(s)://` a `ClickHouseStore`."""

from __future__ import annotations

import pathlib

from passhat.collector.store._interface import Store, StoreError

CLICKHOUSE_SCHEMES = ("chdb://", "http://", "https://", "clickhouse://", "clickhouses://")


def default_store_url(data_dir: str | pathlib.Path) -> str:
    """The default store: a SQLite file in the data dir."""
    return f"sqlite:///{pathlib.Path(data_dir).expanduser().resolve() / 'passhat.db'}"


def open_store(url: str, *, migrate: bool = True) -> Store:
    """Open (and by default migrate) the store at `url`."""
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
