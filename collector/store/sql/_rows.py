"""Conversions between the Store's rows and SQL rows (JSON text, integer times); the helpers' names are
explained in `passhat.collector.store._codec`."""

from __future__ import annotations

from typing import Any

import orjson

from passhat.collector.store._codec import columns, dumps, from_us, from_us_opt, to_us
from passhat.collector.store._rows import (
    AlertEvent,
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

#: Where a SQL column is spelled differently from its row field (the SQL schema predates the fields' names):
#: span times are `start_ns` / `end_ns`, and `table` (a reserved word) is `table_name`.
RENAMED = {"start_time_ns": "start_ns", "end_time_ns": "end_ns", "table": "table_name"}
#: The shift that puts the unsigned `ticket_hash` into a signed BIGINT (see `TicketRow`).
HASH_SHIFT = 2**63
#: The derived rows a span carries, stored in their own tables.
_DERIVED = ("ticket", "tool_call", "state_writes", "duplicate_of")
#: Every row of a span table starts with the id of its span (`id` in `spans`, `span_ref` elsewhere), given by the
#: writer once it holds the write lock, then the project.
SPAN_COLUMNS = ("id", "project", *columns(NormalizedSpan, RENAMED, without=_DERIVED))
TOOL_CALL_COLUMNS = ("span_ref", "project", *columns(ToolCallRow, RENAMED))
STATE_WRITE_COLUMNS = ("span_ref", "project", *columns(StateWriteRow, RENAMED))
#: A tickets row adds its UTC `day` (what daily traffic counts by) to the ticket's fields.
TICKET_COLUMNS = ("span_ref", "project", *columns(TicketRow, RENAMED), "day")

# The row builders below name each field rather than looping over the columns: on the ingest path that is ~3x
# faster than an attrgetter of the fields (slot reads specialise; unpacking a getter's tuple does not). They
# give the values in their columns' order, which tests/collector/store/test_sql_store.py checks.
_orjson_loads = orjson.loads


def loads(text: str | bytes) -> Any:
    return _orjson_loads(text)


def _loads(text: str | None) -> Any:
    return None if text is None else _orjson_loads(text)


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
        span.start_time_ns,
        span.end_time_ns,
        span.operation,
        span.kind,
        span.status,
        span.status_message,
        span.service_name,
        span.scope_name,
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


def ticket_values(project: str, ticket: TicketRow) -> dict[str, Any]:
    """A tickets row by column (the writer reads its `day` and sets its `span_ref`, a placeholder 0 here)."""
    return {
        "span_ref": 0,
        "project": project,
        "ticket_id": ticket.ticket_id,
        "trace_id": ticket.trace_id,
        "span_id": ticket.span_id,
        "task_type": ticket.task_type,
        "source": ticket.source,
        "start_ns": ticket.start_time_ns,
        "end_ns": ticket.end_time_ns,
        "ticket_hash": ticket.ticket_hash - HASH_SHIFT,
        "status": ticket.status,
        "agent_name": ticket.agent_name,
        "conversation_id": ticket.conversation_id,
        "intent": None if ticket.intent is None else dumps(ticket.intent),
        "domain": ticket.domain,
        "outcome": ticket.outcome,
        "replay_run_id": ticket.replay_run_id,
        "trial_attempt": ticket.trial_attempt,
        "service_name": ticket.service_name,
        "day": ticket.day.isoformat(),
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
        ticket_hash=int(row.ticket_hash) + HASH_SHIFT,
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
        finished_at=from_us_opt(row.finished_at_us),
        summary=_loads(row.summary),
        error=row.error,
    )


TRIAL_COLUMNS = (
    "project", "run_id", "ticket_id", "task_type", "attempt", "passed", "termination_reason", "started_at_us",
    "duration_s", "domain", "trace_id", "failure_label", "failure_evidence", "verdict", "simulator_error",
    "infra_error", "details",
)  # fmt: skip
"""The trials table's columns, in the order `trial_values` gives a row's values."""


def trial_values(project: str, trial: TrialRow) -> tuple[Any, ...]:
    """A trial's row as the driver binds it (`TRIAL_COLUMNS` order): written in multi-row statements, as spans
    are, since building SQLAlchemy's parameters per row cost more than the insert."""
    return (
        project,
        trial.run_id,
        trial.ticket_id,
        trial.task_type,
        trial.attempt,
        trial.passed,
        trial.termination_reason,
        to_us(trial.started_at),
        trial.duration_s,
        trial.domain,
        trial.trace_id,
        trial.failure_label,
        trial.failure_evidence,
        verdict_text(trial),
        trial.simulator_error,
        trial.infra_error,
        trial.details.json_text(),
    )


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
        verdict=None if row.verdict is None else VerdictText(row.verdict),
        simulator_error=row.simulator_error,
        infra_error=row.infra_error,
        details=TrialDetails.from_text(row.details),
    )


def alert_values(project: str, event: AlertEvent) -> dict[str, Any]:
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
