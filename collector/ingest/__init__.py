"""Ingest: the collector's HTTP app (OTLP/HTTP traces, the query API), decoding, normalising and the writer."""

from passhat.collector.ingest._app import create_app
from passhat.collector.ingest._http import TimedHttpProtocol
from passhat.collector.ingest._keys import create_api_key
from passhat.collector.ingest._settings import CollectorSettings, SettingsError
from passhat.collector.ingest._store_export import StoreSpanExporter

__all__ = [
    "CollectorSettings",
    "SettingsError",
    "StoreSpanExporter",
    "TimedHttpProtocol",
    "create_api_key",
    "create_app",
]
