"""passhat.collector: ingest, storage, replay, reliability statistics, alerts, reports and the CLI."""

from passhat.collector._app import create_app
from passhat.collector._settings import CollectorSettings

__all__ = ["CollectorSettings", "create_app"]
