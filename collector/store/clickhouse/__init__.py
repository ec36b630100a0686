"""The ClickHouse store (clickhouse-connect): a server or cluster over HTTP(S), or embedded chdb."""

from passhat.collector.store.clickhouse._store import ClickHouseStore

__all__ = [
    "ClickHouseStore",
]
