"""Stores for the collector: the `Store` interface, `SqlStore`, and `open_store(url)`."""

from passhat.collector.store._interface import Store, StoreError
from passhat.collector.store._key_hash import hash_api_key
from passhat.collector.store._not_replayable import NotReplayable
from passhat.collector.store._open import default_store_url, open_store
from passhat.collector.store._period import Period, parse_period, week_of
from passhat.collector.store._rows import (
    AlertEvent,
    ApiKey,
    NormalizedSpan,
    Project,
    ReplayRun,
    Source,
    SpanBatch,
    SpanEvent,
    SpanOperation,
    StateWriteRow,
    StatusCode,
    TicketDetail,
    TicketRow,
    ToolCallRow,
    ToolOutcome,
    TrafficDay,
    TrialRow,
    WriteResult,
)

__all__ = [
    "AlertEvent",
    "ApiKey",
    "NormalizedSpan",
    "NotReplayable",
    "Period",
    "Project",
    "ReplayRun",
    "Source",
    "SpanBatch",
    "SpanEvent",
    "SpanOperation",
    "StateWriteRow",
    "StatusCode",
    "Store",
    "StoreError",
    "TicketDetail",
    "TicketRow",
    "ToolCallRow",
    "ToolOutcome",
    "TrafficDay",
    "TrialRow",
    "WriteResult",
    "default_store_url",
    "hash_api_key",
    "open_store",
    "parse_period",
    "week_of",
]
