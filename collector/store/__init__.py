"""Stores for the collector: the `Store` interface, `SqlStore`, and `open_store(url)`."""

from passhat.collector.store._base import (
    AlertEvent,
    ApiKey,
    NormalizedSpan,
    Project,
    ReplayRun,
    SpanBatch,
    SpanEvent,
    StateWriteRow,
    Store,
    StoreError,
    TicketDetail,
    TicketRow,
    ToolCallRow,
    TrafficDay,
    TrialRow,
    WriteResult,
)
from passhat.collector.store._open import default_store_url, open_store

__all__ = [
    "AlertEvent",
    "ApiKey",
    "NormalizedSpan",
    "Project",
    "ReplayRun",
    "SpanBatch",
    "SpanEvent",
    "StateWriteRow",
    "Store",
    "StoreError",
    "TicketDetail",
    "TicketRow",
    "ToolCallRow",
    "TrafficDay",
    "TrialRow",
    "WriteResult",
    "default_store_url",
    "open_store",
]
