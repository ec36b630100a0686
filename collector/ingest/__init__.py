"""Ingest: the collector's HTTP app (OTLP/HTTP traces, the query API), decoding, normalising and the writer."""

from passhat.collector.ingest._app import create_app
from passhat.collector.ingest._http import TimedHttpProtocol
from passhat.collector.ingest._keys import KEY_PREFIX, create_api_key, key_prefix
from passhat.collector.ingest._settings import CollectorSettings, SettingsError
from passhat.collector.ingest._store_export import StoreSpanExporter

__all__ = [
    "KEY_PREFIX",
    "CollectorSettings",
    "SettingsError",
    "StoreSpanExporter",
    "TimedHttpProtocol",
    "create_api_key",
    "create_app",
    "key_prefix",
]
