"""The JSON shapes of the query API (pydantic models at the boundary)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from pydantic import BaseModel

from passhat.collector.store import (
    NormalizedSpan,
    ProductionVerdict,
    StateWriteRow,
    TicketDetail,
    TicketRow,
    ToolCallRow,
    TrafficDay,
)


def _time(ns: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ns // 1_000_000_000, tz=dt.UTC) + dt.timedelta(
        microseconds=(ns % 1_000_000_000) // 1000
    )


def _same_fields(row: Any, model: type[BaseModel], *, without: tuple[str, ...] = ()) -> dict[str, Any]:
    """The values of the fields a response model shows as the store row has them (same name, same value)."""
    shown = model.model_fields
    return {f.name: getattr(row, f.name) for f in dataclasses.fields(row) if f.name in shown and f.name not in without}


class ProductionVerdictOut(BaseModel):
    """A production ticket's own verdict: its task type's check run on what it really wrote."""

    verdict: str  # passed | failed
    signature: str | None
    evidence: str | None
    check: str | None
    diagnostics: list[dict[str, Any]]  # what failed: table, row, field, expected, actual
    trace_id: str
    graded_at: dt.datetime
    graded_by: str

    @classmethod
    def of(cls, row: ProductionVerdict) -> ProductionVerdictOut:
        verdict = row.verdict or {}

        def failing(node: dict[str, Any]) -> list[dict[str, Any]]:
            found = [] if node.get("passed", True) else list(node.get("diagnostics", []))
            return found + [d for child in node.get("children", []) for d in failing(child)]

        return cls(
            verdict="passed" if row.passed else "failed",
            signature=row.signature,
            evidence=row.evidence,
            check=verdict.get("check"),
            diagnostics=failing(verdict),
            trace_id=row.trace_id,
            graded_at=row.graded_at,
            graded_by=row.graded_by,
        )


class ReplayTallyOut(BaseModel):
    """A replayed ticket's sandbox attempts that speak about the agent (no simulator or infrastructure error)."""

    passed: int
    attempts: int


class TicketOut(BaseModel):
    ticket_id: str
    trace_id: str
    span_id: str
    task_type: str
    source: str
    start_time: dt.datetime
    end_time: dt.datetime
    start_time_unix_nano: int
    duration_ms: float
    status: str
    ticket_hash: int
    agent_name: str | None
    conversation_id: str | None
    intent: dict[str, Any] | None
    domain: str | None
    outcome: str | None
    replay_run_id: str | None
    trial_attempt: int | None
    service_name: str | None
    production_verdict: ProductionVerdictOut | None = None  # a graded production ticket's own verdict
    replays: ReplayTallyOut | None = None  # a replayed production ticket's attempts, over every run

    @classmethod
    def of(
        cls, row: TicketRow, verdict: ProductionVerdict | None = None, tally: tuple[int, int] | None = None
    ) -> TicketOut:
        return cls(
            **_same_fields(row, cls),
            production_verdict=None if verdict is None else ProductionVerdictOut.of(verdict),
            replays=None if tally is None else ReplayTallyOut(passed=tally[0], attempts=tally[1]),
            start_time=_time(row.start_time_ns),
            end_time=_time(row.end_time_ns),
            start_time_unix_nano=row.start_time_ns,
            duration_ms=(row.end_time_ns - row.start_time_ns) / 1e6,
        )


class ToolCallOut(BaseModel):
    trace_id: str
    span_id: str
    parent_span_id: str | None
    tool_name: str
    outcome: str
    start_time: dt.datetime
    duration_ms: float
    call_id: str | None
    tool_type: str | None
    error_type: str | None
    error_message: str | None
    arguments: str | None
    result: str | None

    @classmethod
    def of(cls, row: ToolCallRow) -> ToolCallOut:
        return cls(
            **_same_fields(row, cls),
            start_time=_time(row.start_time_ns),
            duration_ms=(row.end_time_ns - row.start_time_ns) / 1e6,
        )


class StateWriteOut(BaseModel):
    trace_id: str
    span_id: str
    seq: int
    time: dt.datetime
    table: str
    key: dict[str, Any]
    op: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    changed: list[str]
    rowcount: int | None

    @classmethod
    def of(cls, row: StateWriteRow) -> StateWriteOut:
        return cls(**_same_fields(row, cls), time=_time(row.time_ns))


class SpanEventOut(BaseModel):
    name: str
    time: dt.datetime
    attributes: dict[str, Any]


class SpanOut(BaseModel):
    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    operation: str
    start_time: dt.datetime
    duration_ms: float
    status: str
    status_message: str | None
    service_name: str | None
    attributes: dict[str, Any]
    events: list[SpanEventOut]

    @classmethod
    def of(cls, span: NormalizedSpan) -> SpanOut:
        return cls(
            **_same_fields(span, cls, without=("events",)),
            start_time=_time(span.start_time_ns),
            duration_ms=(span.end_time_ns - span.start_time_ns) / 1e6,
            events=[SpanEventOut(name=e.name, time=_time(e.time_ns), attributes=e.attributes) for e in span.events],
        )


class UsageOut(BaseModel):
    """Model calls and their tokens, each call once: a duplicate span (`duplicate_of`) adds nothing. A token
    figure sums the calls that report it (`None` when none does)."""

    model_calls: int
    duplicate_spans: int
    input_tokens: int | None
    output_tokens: int | None
    cache_read_input_tokens: int | None
    cache_creation_input_tokens: int | None


class TicketDetailOut(BaseModel):
    ticket_id: str
    attempts: list[TicketOut]
    spans: list[SpanOut]
    tool_calls: list[ToolCallOut]
    state_writes: list[StateWriteOut]
    state_reads: list[StateWriteOut]
    usage: UsageOut | None = None  # of all its attempts' spans, each LLM call once
    production_verdict: ProductionVerdictOut | None = None  # its production attempt's own verdict, once graded

    @classmethod
    def of(cls, detail: TicketDetail) -> TicketDetailOut:
        return cls(
            ticket_id=detail.ticket_id,
            attempts=[TicketOut.of(t) for t in detail.attempts],
            spans=[SpanOut.of(s) for s in detail.spans],
            tool_calls=[ToolCallOut.of(c) for c in detail.tool_calls],
            state_writes=[StateWriteOut.of(w) for w in detail.state_writes],
            state_reads=[StateWriteOut.of(w) for w in detail.state_reads],
        )


class TicketList(BaseModel):
    tickets: list[TicketOut]


class TrafficOut(BaseModel):
    day: dt.date
    task_type: str
    source: str
    tickets: int

    @classmethod
    def of(cls, row: TrafficDay) -> TrafficOut:
        return cls(day=row.day, task_type=row.task_type, source=row.source, tickets=row.tickets)


class TrafficList(BaseModel):
    days: int
    traffic: list[TrafficOut]


class Health(BaseModel):
    status: str
    store: str
    schema_version: int
    queued_bytes: int  # request bytes waiting to be decoded
    queued_spans: int  # decoded spans waiting for their group commit
