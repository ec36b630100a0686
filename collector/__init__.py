"""passhat.collector: ingest, storage, replay, reliability statistics, alerts, reports and the CLI."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from passhat.collector.ingest import CollectorSettings, create_app

__all__ = ["CollectorSettings", "create_app"]


def __getattr__(name: str) -> Any:
    # Imported on first use, so `passhat.collector.reliability` and friends do not pull in FastAPI.
    if name == "create_app":
        from passhat.collector.ingest import create_app

        return create_app
    if name == "CollectorSettings":
        from passhat.collector.ingest import CollectorSettings

        return CollectorSettings
    raise AttributeError(f"module 'passhat.collector' has no attribute {name!r}")
