"""Conversions between the Store's dataclasses and SQL rows (JSON text, integer times)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import orjson

from passhat.collector.store._base import (
    AlertEvent,
    NormalizedSpan,
    ReplayRun,
    SpanEvent,
    StateWriteRow,
    TicketRow,
    ToolCallRow,
    TrialRow,
)

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_HASH_SHIFT = 2**63
_orjson_dumps = orjson.dumps


def dumps(value: Any) -> str:
    """Compact JSON text (orjson: the ingest path serialises several values per span)."""
    try:
        return _orjson_dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        # Integers beyond 64 bits and the like: the slow path turns anything unknown into its text.
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def loads(text: str | bytes) -> Any:
    return orjson.loads(text)


def _loads(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)


def to_us(moment: dt.datetime) -> int:
    """Microseconds since the epoch, exactly (a naive datetime is taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_us(micros: int) -> dt.datetime:
    return _EPOCH + dt.timedelta(microseconds=int(micros))


SPAN_COLUMNS = (
    "id",
    "project",
    "trace_id",
    "span_id",
    "parent_span_id",
    "name",
    "operation",
    "kind",
    "status",
    "status_message",
    "service_name",
    "scope_name",
    "start_ns",
    "end_ns",
    "attributes",
    "resource_attributes",
    "events",
)


def span_values(project: str, span: NormalizedSpan, resources: dict[int, str] | None = None) -> tuple[Any, ...]:
    """A spans row, values in `SPAN_COLUMNS` order (tuples: the ingest path builds several rows per span); the
    row id is a placeholder (0), given by the writer."""
    resource = span.resource_attributes
    if resources is None:
        resource_text = dumps(resource)
    else:
        resource_text = resources.get(id(resource)) or resources.setdefault(id(resource), dumps(resource))
    return (
        0,
        project,
        span.trace_id,
        span.span_id,
        span.parent_span_id,
        span.name,
        span.operation,
        span.kind,
        span.status,
        span.status_message,
        span.service_name,
        span.scope_name,
        span.start_time_ns,
        span.end_time_ns,
        dumps(span.attributes),
        resource_text,
        dumps([[e.name, e.time_ns, e.attributes] for e in span.events]),
    )


def span_from_row(
    row: Any,
    *,
    ticket: TicketRow | None,
    tool_call: ToolCallRow | None,
    state_writes: list[StateWriteRow],
) -> NormalizedSpan:
    return NormalizedSpan(
        trace_id=row.trace_id,
        span_id=row.span_id,
        parent_span_id=row.parent_span_id,
        name=row.name,
        start_time_ns=int(row.start_ns),
        end_time_ns=int(row.end_ns),
        operation=row.operation,
        kind=int(row.kind),
        status=row.status,
        status_message=row.status_message,
        service_name=row.service_name,
        scope_name=row.scope_name,
        attributes=loads(row.attributes),
        resource_attributes=loads(row.resource_attributes),
        events=[SpanEvent(name, int(time_ns), attrs) for name, time_ns, attrs in loads(row.events)],
        ticket=ticket,
        tool_call=tool_call,
        state_writes=state_writes,
    )


def ticket_to_row(project: str, ticket: TicketRow) -> dict[str, Any]:
    """A tickets row; `span_ref` (its span's id) is a placeholder, 0, given by the writer."""
    return {
        "span_ref": 0,
        "project": project,
        "trace_id": ticket.trace_id,
        "ticket_id": ticket.ticket_id,
        "span_id": ticket.span_id,
        "task_type": ticket.task_type,
        "source": ticket.source,
        "start_ns": ticket.start_time_ns,
        "end_ns": ticket.end_time_ns,
        "day": ticket.day.isoformat(),
        "ticket_hash": ticket.ticket_hash - _HASH_SHIFT,
        "status": ticket.status,
        "agent_name": ticket.agent_name,
        "conversation_id": ticket.conversation_id,
        "intent": None if ticket.intent is None else dumps(ticket.intent),
        "domain": ticket.domain,
        "outcome": ticket.outcome,
        "replay_run_id": ticket.replay_run_id,
        "trial_attempt": ticket.trial_attempt,
        "service_name": ticket.service_name,
    }


def ticket_from_row(row: Any) -> TicketRow:
    return TicketRow(
        ticket_id=row.ticket_id,
        trace_id=row.trace_id,
        span_id=row.span_id,
        task_type=row.task_type,
        source=row.source,
        start_time_ns=int(row.start_ns),
        end_time_ns=int(row.end_ns),
        ticket_hash=int(row.ticket_hash) + _HASH_SHIFT,
        status=row.status,
        agent_name=row.agent_name,
        conversation_id=row.conversation_id,
        intent=_loads(row.intent),
        domain=row.domain,
        outcome=row.outcome,
        replay_run_id=row.replay_run_id,
        trial_attempt=row.trial_attempt,
        service_name=row.service_name,
    )


TOOL_CALL_COLUMNS = (
    "span_ref",
    "project",
    "trace_id",
    "span_id",
    "parent_span_id",
    "tool_name",
    "outcome",
    "start_ns",
    "end_ns",
    "call_id",
    "tool_type",
    "error_type",
    "error_message",
    "arguments",
    "result",
)


def tool_call_values(project: str, call: ToolCallRow) -> tuple[Any, ...]:
    """A tool_calls row, values in `TOOL_CALL_COLUMNS` order (its span's id a placeholder, 0)."""
    return (
        0,
        project,
        call.trace_id,
        call.span_id,
        call.parent_span_id,
        call.tool_name,
        call.outcome,
        call.start_time_ns,
        call.end_time_ns,
        call.call_id,
        call.tool_type,
        call.error_type,
        call.error_message,
        call.arguments,
        call.result,
    )


def tool_call_from_row(row: Any) -> ToolCallRow:
    return ToolCallRow(
        trace_id=row.trace_id,
        span_id=row.span_id,
        parent_span_id=row.parent_span_id,
        tool_name=row.tool_name,
        outcome=row.outcome,
        start_time_ns=int(row.start_ns),
        end_time_ns=int(row.end_ns),
        call_id=row.call_id,
        tool_type=row.tool_type,
        error_type=row.error_type,
        error_message=row.error_message,
        arguments=row.arguments,
        result=row.result,
    )


STATE_WRITE_COLUMNS = (
    "span_ref",
    "project",
    "trace_id",
    "span_id",
    "seq",
    "time_ns",
    "table_name",
    "key",
    "op",
    "before",
    "after",
    "changed",
    "rowcount",
)


def state_write_values(project: str, write: StateWriteRow) -> tuple[Any, ...]:
    """A state_writes row, values in `STATE_WRITE_COLUMNS` order (its span's id a placeholder, 0)."""
    before = write.before
    after = write.after
    return (
        0,
        project,
        write.trace_id,
        write.span_id,
        write.seq,
        write.time_ns,
        write.table,
        dumps(write.key),
        write.op,
        None if before is None else dumps(before),
        None if after is None else dumps(after),
        dumps(write.changed),
        write.rowcount,
    )


def state_write_from_row(row: Any) -> StateWriteRow:
    return StateWriteRow(
        trace_id=row.trace_id,
        span_id=row.span_id,
        seq=int(row.seq),
        time_ns=int(row.time_ns),
        table=row.table_name,
        key=loads(row.key),
        op=row.op,
        before=_loads(row.before),
        after=_loads(row.after),
        changed=loads(row.changed),
        rowcount=row.rowcount,
    )


def run_from_row(row: Any) -> ReplayRun:
    return ReplayRun(
        run_id=row.run_id,
        created_at=from_us(row.created_at_us),
        k=int(row.k),
        status=row.status,
        params=loads(row.params),
        finished_at=None if row.finished_at_us is None else from_us(row.finished_at_us),
        summary=_loads(row.summary),
        error=row.error,
    )


def trial_to_row(project: str, trial: TrialRow) -> dict[str, Any]:
    return {
        "project": project,
        "run_id": trial.run_id,
        "ticket_id": trial.ticket_id,
        "attempt": trial.attempt,
        "task_type": trial.task_type,
        "passed": trial.passed,
        "termination_reason": trial.termination_reason,
        "started_at_us": to_us(trial.started_at),
        "duration_s": trial.duration_s,
        "domain": trial.domain,
        "trace_id": trial.trace_id,
        "failure_label": trial.failure_label,
        "failure_evidence": trial.failure_evidence,
        "verdict": None if trial.verdict is None else dumps(trial.verdict),
        "simulator_error": trial.simulator_error,
        "infra_error": trial.infra_error,
        "details": dumps(trial.details.to_json()),
    }


def trial_from_row(row: Any) -> TrialRow:
    from passhat.sandbox import TrialDetails  # on use: only trial rows need the sandbox (see TrialRow.details)

    return TrialRow(
        run_id=row.run_id,
        ticket_id=row.ticket_id,
        task_type=row.task_type,
        attempt=int(row.attempt),
        passed=bool(row.passed),
        termination_reason=row.termination_reason,
        started_at=from_us(row.started_at_us),
        duration_s=float(row.duration_s),
        domain=row.domain,
        trace_id=row.trace_id,
        failure_label=row.failure_label,
        failure_evidence=row.failure_evidence,
        verdict=_loads(row.verdict),
        simulator_error=row.simulator_error,
        infra_error=row.infra_error,
        details=TrialDetails.from_json(_loads(row.details) or {}),
    )


def alert_to_row(project: str, event: AlertEvent) -> dict[str, Any]:
    return {
        "project": project,
        "alert_id": event.alert_id,
        "rule": event.rule,
        "fired_at_us": to_us(event.fired_at),
        "message": event.message,
        "severity": event.severity,
        "task_type": event.task_type,
        "payload": dumps(event.payload),
        "deliveries": dumps(event.deliveries),
    }


def alert_from_row(row: Any) -> AlertEvent:
    return AlertEvent(
        alert_id=row.alert_id,
        rule=row.rule,
        fired_at=from_us(row.fired_at_us),
        message=row.message,
        severity=row.severity,
        task_type=row.task_type,
        payload=loads(row.payload),
        deliveries=loads(row.deliveries),
    )
