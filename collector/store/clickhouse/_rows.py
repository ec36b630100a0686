"""Rows of the ClickHouse tables <-> the Store's rows: column lists, encoders and decoders (the helpers' names
are explained in `passhat.collector.store._codec`)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from operator import attrgetter
from typing import Any, cast

from passhat import semconv, ticket_hash
from passhat.checks import NOT_AGENT_FAULT
from passhat.collector.store._codec import columns, dumps, dumps_opt, fields_of, from_us_opt, utc_day
from passhat.collector.store._rows import (
    AlertEvent,
    ApiKey,
    NormalizedSpan,
    ReplayRun,
    SpanEvent,
    StateWriteRow,
    TicketRow,
    ToolCallRow,
    TrialRow,
    VerdictText,
    verdict_text,
)

#: Where a ClickHouse column is spelled differently from its row field: `table` (a keyword) is `table_name`.
RENAMED = {"table": "table_name"}


def to_utc(value: dt.datetime) -> dt.datetime:
    """An aware datetime in UTC (what a DateTime64(6, 'UTC') column takes); a naive one is taken as UTC already."""
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


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


_INT64_MAX = 2**63 - 1


def _opt_int(value: Any) -> int | None:
    """An Int64 column's value: None for anything that is not an integer within 64 bits (a 30-digit string or
    an infinite double would fail the whole insert, every other request's spans with it)."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if -_INT64_MAX <= number <= _INT64_MAX else None


#: The last day a `Date` column holds (2149-06-06); OTLP times run to 2262 (int64 nanoseconds).
_LAST_DATE = dt.date(2149, 6, 6)
_LAST_DATE_NS = (_LAST_DATE - dt.date(1970, 1, 1)).days * 86_400 * 10**9


def day_of(time_ns: int) -> dt.date:
    """The `day` partition column of a row: its UTC day, the last one a `Date` holds for later times."""
    return utc_day(time_ns) if time_ns < _LAST_DATE_NS else _LAST_DATE


# --- spans -------------------------------------------------------------------------------------------------
#: The columns a read needs to rebuild a NormalizedSpan (the wide columns are for queries only).
SPAN_READ_COLUMNS = fields_of(NormalizedSpan, without=("ticket", "tool_call", "state_writes", "duplicate_of"))
_JSON_FIELDS = ("attributes", "resource_attributes", "events")
_SCALARS = tuple(name for name in SPAN_READ_COLUMNS if name not in _JSON_FIELDS)
#: What a span row adds to the span's own fields: partition and sampling keys before them, typed copies of the
#: attributes passhat queries after them (then the JSON fields).
_WIDE_COLUMNS = (
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
)
SPAN_COLUMNS = ("project", "day", "trace_hash", *_SCALARS, *_WIDE_COLUMNS, *_JSON_FIELDS)
_span_scalars = attrgetter(*_SCALARS)
_KIND = _SCALARS.index("kind")
_MAX_KIND = 255  # kind is UInt8: OTLP's SpanKind is 0..5, an unknown one is stored as 0 (unspecified)


def span_values(project: str, span: NormalizedSpan) -> list[Any]:
    """A spans row: the span's own fields and, typed for queries, what its attributes or derived rows say."""
    a = span.attributes
    ticket = span.ticket
    scalars = _span_scalars(span)
    if not 0 <= span.kind <= _MAX_KIND:
        scalars = (*scalars[:_KIND], 0, *scalars[_KIND + 1 :])
    return [
        project,
        day_of(span.start_time_ns),
        ticket_hash(span.trace_id),
        *scalars,
        ticket.ticket_id if ticket else _opt_str(a.get(semconv.TICKET_ID)),
        ticket.task_type if ticket else _opt_str(a.get(semconv.TASK_TYPE)),
        ticket.source if ticket else _opt_str(a.get(semconv.SOURCE)),
        _opt_str(a.get(semconv.AGENT_NAME)),
        span.tool_call.tool_name if span.tool_call else _opt_str(_attr(a, semconv.TOOL_NAME, "tool.name")),
        span.tool_call.outcome if span.tool_call else _opt_str(a.get(semconv.TOOL_OUTCOME)),
        _opt_str(a.get(semconv.ERROR_TYPE)),
        _opt_str(a.get(semconv.REQUEST_MODEL)),
        _opt_int(a.get(semconv.USAGE_INPUT_TOKENS)),
        _opt_int(a.get(semconv.USAGE_OUTPUT_TOKENS)),
        _opt_str(a.get(semconv.REPLAY_RUN_ID)),
        dumps(span.attributes),
        dumps(span.resource_attributes),
        dumps([[e.name, e.time_ns, e.attributes] for e in span.events]),
    ]


def span_from_row(
    row: Sequence[Any],
    *,
    ticket: TicketRow | None,
    tool_call: ToolCallRow | None,
    state_writes: list[StateWriteRow],
) -> NormalizedSpan:
    attributes, resource_attributes, events = row[len(_SCALARS) : len(SPAN_READ_COLUMNS)]
    return NormalizedSpan(
        **dict(zip(_SCALARS, row, strict=False)),
        attributes=json.loads(attributes),
        resource_attributes=json.loads(resource_attributes),
        events=[SpanEvent(e[0], e[1], e[2]) for e in json.loads(events)],
        ticket=ticket,
        tool_call=tool_call,
        state_writes=state_writes,
    )


# --- tickets -----------------------------------------------------------------------------------------------
TICKET_COLUMNS = columns(TicketRow, RENAMED)
TICKET_INSERT_COLUMNS = ("project", "day", *TICKET_COLUMNS, "sign", "version")


_ticket_fields = attrgetter(*fields_of(TicketRow))
_INTENT = TICKET_COLUMNS.index("intent")


def ticket_values(ticket: TicketRow) -> list[Any]:
    """The TICKET_COLUMNS values of a ticket (the insert adds project, day, sign and version around them)."""
    values = list(_ticket_fields(ticket))
    values[_INTENT] = dumps_opt(ticket.intent)
    return values


def ticket_from_row(row: Sequence[Any]) -> TicketRow:
    values = dict(zip(TICKET_COLUMNS, row, strict=False))
    values["intent"] = load_opt(values["intent"])
    return TicketRow(**values)


# --- tool calls and state writes ---------------------------------------------------------------------------
TOOL_CALL_COLUMNS = columns(ToolCallRow, RENAMED)
TOOL_CALL_INSERT_COLUMNS = ("project", "day", *TOOL_CALL_COLUMNS)
_tool_call_fields = attrgetter(*fields_of(ToolCallRow))


def tool_call_values(project: str, call: ToolCallRow) -> list[Any]:
    return [project, day_of(call.start_time_ns), *_tool_call_fields(call)]


def tool_call_from_row(row: Sequence[Any]) -> ToolCallRow:
    return ToolCallRow(*row)


STATE_WRITE_COLUMNS = columns(StateWriteRow, RENAMED)
STATE_WRITE_INSERT_COLUMNS = ("project", "day", *STATE_WRITE_COLUMNS)


def state_write_values(project: str, write: StateWriteRow) -> list[Any]:
    return [
        project,
        day_of(write.time_ns),
        write.trace_id,
        write.span_id,
        write.seq,
        write.time_ns,
        write.table,
        dumps(write.key),
        write.op,
        dumps_opt(write.before),
        dumps_opt(write.after),
        list(write.changed),
        write.rowcount,
    ]


def state_write_from_row(row: Sequence[Any]) -> StateWriteRow:
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
API_KEY_COLUMNS = (*fields_of(ApiKey), "version")
API_KEY_SELECT = ", ".join(micros_col(c) if c in ("created_at", "revoked_at") else c for c in API_KEY_COLUMNS[:-1])


def api_key_values(key: ApiKey, version: int) -> list[Any]:
    revoked = to_utc(key.revoked_at) if key.revoked_at else None
    return [key.prefix, key.project, key.key_hash, to_utc(key.created_at), key.label, revoked, version]


def api_key_from_row(row: Sequence[Any]) -> ApiKey:
    prefix, project, key_hash, created, label, revoked = row
    return ApiKey(prefix, project, key_hash, cast(dt.datetime, from_us_opt(created)), label, from_us_opt(revoked))


RUN_COLUMNS = ("project", *fields_of(ReplayRun))
RUN_SELECT = ", ".join(micros_col(c) if c in ("created_at", "finished_at") else c for c in RUN_COLUMNS[1:])


def run_values(project: str, run: ReplayRun, version: int) -> list[Any]:
    finished = to_utc(run.finished_at) if run.finished_at else None
    return [
        project,
        run.run_id,
        to_utc(run.created_at),
        run.k,
        run.status,
        dumps(run.params),
        finished,
        dumps_opt(run.summary),
        run.error,
        version,
    ]


def run_from_row(row: Sequence[Any]) -> ReplayRun:
    run_id, created, k, status, params, finished, summary, error = row
    return ReplayRun(
        run_id=run_id,
        created_at=cast(dt.datetime, from_us_opt(created)),
        k=k,
        status=status,
        params=json.loads(params),
        finished_at=from_us_opt(finished),
        summary=load_opt(summary),
        error=error,
    )


#: A trial that speaks about the agent: the harness did not break it (`reliability.is_harness_failure`).
COUNTED_BY_AGENT = (
    "ifNull(simulator_error, '') = '' AND ifNull(infra_error, '') = ''"
    f" AND ifNull(failure_label, '') NOT IN ({', '.join(repr(s) for s in sorted(NOT_AGENT_FAULT))})"
)

TRIAL_COLUMNS = fields_of(TrialRow)
TRIAL_SELECT = ", ".join(micros_col(c) if c == "started_at" else c for c in TRIAL_COLUMNS)


def trial_values(project: str, trial: TrialRow) -> list[Any]:
    values = {name: getattr(trial, name) for name in TRIAL_COLUMNS}
    values["started_at"] = to_utc(trial.started_at)
    values["verdict"] = verdict_text(trial)
    values["details"] = trial.details.json_text()
    return [project, *values.values()]


def trial_from_row(row: Sequence[Any]) -> TrialRow:
    from passhat.sandbox import TrialDetails  # on use: only trial rows need the sandbox (see TrialRow.details)

    values = dict(zip(TRIAL_COLUMNS, row, strict=True))
    values["started_at"] = from_us_opt(values["started_at"])
    values["verdict"] = None if values["verdict"] is None else VerdictText(values["verdict"])
    values["details"] = TrialDetails.from_text(values["details"], exact=True)
    values["passed"] = bool(values["passed"])
    return TrialRow(**values)


ALERT_COLUMNS = fields_of(AlertEvent)
ALERT_SELECT = ", ".join(micros_col(c) if c == "fired_at" else c for c in ALERT_COLUMNS)


def alert_values(project: str, event: AlertEvent) -> list[Any]:
    return [
        project,
        event.alert_id,
        event.rule,
        to_utc(event.fired_at),
        event.message,
        event.severity,
        event.task_type,
        dumps(event.payload),
        dumps(event.deliveries),
    ]


def alert_from_row(row: Sequence[Any]) -> AlertEvent:
    alert_id, rule, fired, message, severity, task_type, payload, deliveries = row
    return AlertEvent(
        alert_id=alert_id,
        rule=rule,
        fired_at=cast(dt.datetime, from_us_opt(fired)),
        message=message,
        severity=severity,
        task_type=task_type,
        payload=json.loads(payload),
        deliveries=json.loads(deliveries),
    )
