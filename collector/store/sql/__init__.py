"""The SQL store (SQLAlchemy 2): SQLite by default, PostgreSQL or any SQLAlchemy URL."""

from passhat.collector.store.sql._store import SqlStore

__all__ = [
    "SqlStore",
]
