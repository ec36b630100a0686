"""Rows of the ClickHouse tables <-> the Store dataclasses: column lists, encoders and decoders."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Sequence
from typing import Any, cast

import orjson

from passhat.collector.store._base import (
    AlertEvent,
    ApiKey,
    NormalizedSpan,
    ReplayRun,
    SpanEvent,
    StateWriteRow,
    TicketRow,
    ToolCallRow,
    TrialRow,
)

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_EPOCH_DAY = dt.date(1970, 1, 1)
_DAY_NS = 86_400 * 1_000_000_000


def ticket_hash(text: str) -> int:
    """`passhat.ticket_hash`: the first 8 bytes of sha256 as a big-endian unsigned 64-bit integer.

    Repeated here (not imported from the SDK: a lower layer never depends on the SDK's tracing setup);
    the tests check ClickHouse's own SHA256 agrees with it.
    """
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def utc_day(time_ns: int) -> dt.date:
    """The UTC calendar day of a nanosecond timestamp (integer arithmetic: exact at midnight)."""
    return _EPOCH_DAY + dt.timedelta(days=time_ns // _DAY_NS)


def from_micros(value: int | None) -> dt.datetime | None:
    """A `toUnixTimestamp64Micro(...)` value as an aware UTC datetime (exact, whatever the server's zone)."""
    return None if value is None else _EPOCH + dt.timedelta(microseconds=value)


def to_utc(value: dt.datetime) -> dt.datetime:
    """An aware datetime in UTC; a naive one is taken as UTC already."""
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def dump(value: Any) -> str:
    """Compact JSON text: orjson (several times faster; JSON was a third of a write's Python time), or the
    standard library for what orjson refuses (integers past 64 bits, non-string keys). NaN becomes null."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return _JSON.encode(value)


def dump_opt(value: Any) -> str | None:
    return None if value is None else dump(value)


def load_opt(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def micros_col(column: str) -> str:
    """The select expression reading a DateTime64 column as exact microseconds since the epoch."""
    return f"toUnixTimestamp64Micro({column}) AS {column}_us"


def _attr(attributes: dict[str, Any], *names: str) -> Any:
    for name in names:
        value = attributes.get(name)
        if value is not None:
            return value
    return None


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _opt_int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


# --- spans -------------------------------------------------------------------------------------------------
SPAN_COLUMNS = (
    "project",
    "day",
    "trace_hash",
    "trace_id",
    "span_id",
    "parent_span_id",
    "name",
    "start_time_ns",
    "end_time_ns",
    "operation",
    "kind",
    "status",
    "status_message",
    "service_name",
    "scope_name",
    "ticket_id",
    "task_type",
    "source",
    "agent_name",
    "tool_name",
    "tool_outcome",
    "error_type",
    "request_model",
    "input_tokens",
    "output_tokens",
    "replay_run_id",
    "attributes",
    "resource_attributes",
    "events",
)
#: The columns a read needs to rebuild a NormalizedSpan (the wide columns are for queries only).
SPAN_READ_COLUMNS = (
    "trace_id",
    "span_id",
    "parent_span_id",
    "name",
    "start_time_ns",
    "end_time_ns",
    "operation",
    "kind",
    "status",
    "status_message",
    "service_name",
    "scope_name",
    "attributes",
    "resource_attributes",
    "events",
)


def span_row(project: str, span: NormalizedSpan) -> list[Any]:
    a = span.attributes
    ticket = span.ticket
    return [
        project,
        utc_day(span.start_time_ns),
        ticket_hash(span.trace_id),
        span.trace_id,
        span.span_id,
        span.parent_span_id,
        span.name,
        span.start_time_ns,
        span.end_time_ns,
        span.operation,
        span.kind,
        span.status,
        span.status_message,
        span.service_name,
        span.scope_name,
        ticket.ticket_id if ticket else _opt_str(a.get("passhat.ticket.id")),
        ticket.task_type if ticket else _opt_str(a.get("passhat.task_type")),
        ticket.source if ticket else _opt_str(a.get("passhat.source")),
        _opt_str(_attr(a, "gen_ai.agent.name")),
        span.tool_call.tool_name if span.tool_call else _opt_str(_attr(a, "gen_ai.tool.name", "tool.name")),
        span.tool_call.outcome if span.tool_call else _opt_str(a.get("passhat.tool.outcome")),
        _opt_str(a.get("error.type")),
        _opt_str(_attr(a, "gen_ai.request.model")),
        _opt_int(a.get("gen_ai.usage.input_tokens")),
        _opt_int(a.get("gen_ai.usage.output_tokens")),
        _opt_str(a.get("passhat.replay.run_id")),
        dump(span.attributes),
        dump(span.resource_attributes),
        dump([[e.name, e.time_ns, e.attributes] for e in span.events]),
    ]


def span_from_row(
    row: Sequence[Any],
    *,
    ticket: TicketRow | None,
    tool_call: ToolCallRow | None,
    state_writes: list[StateWriteRow],
) -> NormalizedSpan:
    (trace_id, span_id, parent, name, start, end, operation, kind, status, message, service, scope) = row[:12]
    attributes, resource_attributes, events = row[12:15]
    return NormalizedSpan(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        start_time_ns=start,
        end_time_ns=end,
        operation=operation,
        kind=kind,
        status=status,
        status_message=message,
        service_name=service,
        scope_name=scope,
        attributes=json.loads(attributes),
        resource_attributes=json.loads(resource_attributes),
        events=[SpanEvent(e[0], e[1], e[2]) for e in json.loads(events)],
        ticket=ticket,
        tool_call=tool_call,
        state_writes=state_writes,
    )


# --- tickets -----------------------------------------------------------------------------------------------
TICKET_COLUMNS = (
    "ticket_id",
    "trace_id",
    "span_id",
    "task_type",
    "source",
    "start_time_ns",
    "end_time_ns",
    "ticket_hash",
    "status",
    "agent_name",
    "conversation_id",
    "intent",
    "domain",
    "outcome",
    "replay_run_id",
    "trial_attempt",
    "service_name",
)
TICKET_INSERT_COLUMNS = ("project", "day", *TICKET_COLUMNS, "sign", "version")


def ticket_values(ticket: TicketRow) -> list[Any]:
    """The TICKET_COLUMNS values of a ticket."""
    return [
        ticket.ticket_id,
        ticket.trace_id,
        ticket.span_id,
        ticket.task_type,
        ticket.source,
        ticket.start_time_ns,
        ticket.end_time_ns,
        ticket.ticket_hash,
        ticket.status,
        ticket.agent_name,
        ticket.conversation_id,
        dump_opt(ticket.intent),
        ticket.domain,
        ticket.outcome,
        ticket.replay_run_id,
        ticket.trial_attempt,
        ticket.service_name,
    ]


def ticket_from_row(row: Sequence[Any]) -> TicketRow:
    values = dict(zip(TICKET_COLUMNS, row, strict=False))
    values["intent"] = load_opt(values["intent"])
    return TicketRow(**values)


# --- tool calls and state writes ---------------------------------------------------------------------------
TOOL_COLUMNS = (
    "trace_id",
    "span_id",
    "parent_span_id",
    "tool_name",
    "outcome",
    "start_time_ns",
    "end_time_ns",
    "call_id",
    "tool_type",
    "error_type",
    "error_message",
    "arguments",
    "result",
)
TOOL_INSERT_COLUMNS = ("project", "day", *TOOL_COLUMNS)


def tool_row(project: str, call: ToolCallRow) -> list[Any]:
    return [project, utc_day(call.start_time_ns), *(getattr(call, name) for name in TOOL_COLUMNS)]


def tool_from_row(row: Sequence[Any]) -> ToolCallRow:
    return ToolCallRow(**dict(zip(TOOL_COLUMNS, row, strict=True)))


STATE_COLUMNS = (
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
STATE_INSERT_COLUMNS = ("project", "day", *STATE_COLUMNS)


def state_row(project: str, write: StateWriteRow) -> list[Any]:
    return [
        project,
        utc_day(write.time_ns),
        write.trace_id,
        write.span_id,
        write.seq,
        write.time_ns,
        write.table,
        dump(write.key),
        write.op,
        dump_opt(write.before),
        dump_opt(write.after),
        list(write.changed),
        write.rowcount,
    ]


def state_from_row(row: Sequence[Any]) -> StateWriteRow:
    trace_id, span_id, seq, time_ns, table, key, op, before, after, changed, rowcount = row
    return StateWriteRow(
        trace_id=trace_id,
        span_id=span_id,
        seq=seq,
        time_ns=time_ns,
        table=table,
        key=json.loads(key),
        op=op,
        before=load_opt(before),
        after=load_opt(after),
        changed=list(changed),
        rowcount=rowcount,
    )


# --- administrative rows -----------------------------------------------------------------------------------
API_KEY_COLUMNS = ("prefix", "project", "key_hash", "created_at", "label", "revoked_at", "version")
API_KEY_SELECT = ", ".join(micros_col(c) if c in ("created_at", "revoked_at") else c for c in API_KEY_COLUMNS[:-1])


def api_key_row(key: ApiKey, version: int) -> list[Any]:
    revoked = to_utc(key.revoked_at) if key.revoked_at else None
    return [key.prefix, key.project, key.key_hash, to_utc(key.created_at), key.label, revoked, version]


def api_key_from_row(row: Sequence[Any]) -> ApiKey:
    prefix, project, key_hash, created, label, revoked = row
    return ApiKey(prefix, project, key_hash, cast(dt.datetime, from_micros(created)), label, from_micros(revoked))


RUN_COLUMNS = ("project", "run_id", "created_at", "k", "status", "params", "finished_at", "summary", "error")
RUN_SELECT = ", ".join(micros_col(c) if c in ("created_at", "finished_at") else c for c in RUN_COLUMNS[1:])


def run_row(project: str, run: ReplayRun, version: int) -> list[Any]:
    finished = to_utc(run.finished_at) if run.finished_at else None
    return [
        project,
        run.run_id,
        to_utc(run.created_at),
        run.k,
        run.status,
        dump(run.params),
        finished,
        dump_opt(run.summary),
        run.error,
        version,
    ]


def run_from_row(row: Sequence[Any]) -> ReplayRun:
    run_id, created, k, status, params, finished, summary, error = row
    return ReplayRun(
        run_id=run_id,
        created_at=cast(dt.datetime, from_micros(created)),
        k=k,
        status=status,
        params=json.loads(params),
        finished_at=from_micros(finished),
        summary=load_opt(summary),
        error=error,
    )


TRIAL_FIELDS = (
    "run_id",
    "ticket_id",
    "task_type",
    "attempt",
    "passed",
    "termination_reason",
    "started_at",
    "duration_s",
    "domain",
    "trace_id",
    "failure_label",
    "failure_evidence",
    "verdict",
    "simulator_error",
    "infra_error",
    "details",
)
TRIAL_SELECT = ", ".join(micros_col(c) if c == "started_at" else c for c in TRIAL_FIELDS)


def trial_row(project: str, trial: TrialRow) -> list[Any]:
    values = {name: getattr(trial, name) for name in TRIAL_FIELDS}
    values["started_at"] = to_utc(trial.started_at)
    values["verdict"] = dump_opt(trial.verdict)
    values["details"] = dump(trial.details.to_json())
    return [project, *values.values()]


def trial_from_row(row: Sequence[Any]) -> TrialRow:
    from passhat.sandbox import TrialDetails  # on use: only trial rows need the sandbox (see TrialRow.details)

    values = dict(zip(TRIAL_FIELDS, row, strict=True))
    values["started_at"] = from_micros(values["started_at"])
    values["verdict"] = load_opt(values["verdict"])
    values["details"] = TrialDetails.from_json(load_opt(values["details"]) or {})
    values["passed"] = bool(values["passed"])
    return TrialRow(**values)


ALERT_FIELDS = ("alert_id", "rule", "fired_at", "message", "severity", "task_type", "payload", "deliveries")
ALERT_SELECT = ", ".join(micros_col(c) if c == "fired_at" else c for c in ALERT_FIELDS)


def alert_row(project: str, event: AlertEvent) -> list[Any]:
    return [
        project,
        event.alert_id,
        event.rule,
        to_utc(event.fired_at),
        event.message,
        event.severity,
        event.task_type,
        dump(event.payload),
        dump(event.deliveries),
    ]


def alert_from_row(row: Sequence[Any]) -> AlertEvent:
    alert_id, rule, fired, message, severity, task_type, payload, deliveries = row
    return AlertEvent(
        alert_id=alert_id,
        rule=rule,
        fired_at=cast(dt.datetime, from_micros(fired)),
        message=message,
        severity=severity,
        task_type=task_type,
        payload=json.loads(payload),
        deliveries=json.loads(deliveries),
    )
