"""Normalisation: what a span means for passhat (a ticket, a tool call, state writes), whatever emitted it.

Four shapes are understood: the passhat SDK's spans; plain OpenTelemetry GenAI spans
(`gen_ai.operation.name` = `invoke_agent` / `execute_tool` / `chat`); OpenInference spans
(`openinference.span.kind` = `AGENT` / `TOOL` / `LLM`); OpenLLMetry spans (`traceloop.span.kind` = `agent` /
`tool`, LLM spans by `llm.request.type`). Without a `passhat.ticket.id`, an agent span is a ticket whose id is
its trace id; the store keeps the earliest-starting one per trace, i.e. the trace's root agent span.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from passhat import (
    outcome_of,  # the one tool-outcome rule, for spans that carry no outcome
    ticket_hash,  # the SDK's sampling hash: one definition for SDK, collector and stores
)
from passhat.collector.store import (
    NormalizedSpan,
    Source,
    SpanEvent,
    SpanOperation,
    StateWriteRow,
    StatusCode,
    TicketRow,
    ToolCallRow,
    ToolOutcome,
)

# The contract's names, bound here one by one: the per-span code reads them as globals, not module attributes.
from passhat.semconv import (
    AGENT_NAME,
    CONVERSATION_ID,
    DOMAIN,
    ERROR_TYPE,
    EVENT_EXCEPTION,
    EVENT_STATE_READ,
    EVENT_STATE_WRITE,
    EXCEPTION_MESSAGE,
    EXCEPTION_TYPE,
    INTENT,
    OP_CHAT,
    OP_EXECUTE_TOOL,
    OP_INVOKE_AGENT,
    OPERATION_NAME,
    REPLAY_RUN_ID,
    SOURCE,
    STATE_READ_KEY,
    STATE_READ_ROW,
    STATE_READ_TABLE,
    STATE_WRITE_AFTER,
    STATE_WRITE_BEFORE,
    STATE_WRITE_CHANGED,
    STATE_WRITE_KEY,
    STATE_WRITE_OP,
    STATE_WRITE_ROWCOUNT,
    STATE_WRITE_TABLE,
    TASK_TYPE,
    TICKET_ID,
    TICKET_OUTCOME,
    TOOL_CALL_ARGUMENTS,
    TOOL_CALL_ID,
    TOOL_CALL_RESULT,
    TOOL_NAME,
    TOOL_OUTCOME,
    TOOL_OUTCOMES,
    TOOL_TYPE,
    TRIAL_ATTEMPT,
    WRITE_OPS,
)

_OPENINFERENCE = {"AGENT": OP_INVOKE_AGENT, "TOOL": OP_EXECUTE_TOOL, "LLM": OP_CHAT}
_OPENLLMETRY = {"agent": OP_INVOKE_AGENT, "tool": OP_EXECUTE_TOOL}
_GENAI = {OP_INVOKE_AGENT, OP_EXECUTE_TOOL, OP_CHAT}
_WRITE_OPS: frozenset[str] = frozenset(WRITE_OPS)
_OUTCOMES: frozenset[str] = frozenset(TOOL_OUTCOMES)
DEFAULT_TASK_TYPE = "unknown"


def operation_of(attributes: Mapping[str, Any]) -> SpanOperation:
    """Which GenAI operation a span is, from whichever convention its emitter followed."""
    genai = attributes.get(OPERATION_NAME)
    if type(genai) is str and genai in _GENAI:  # any JSON value can arrive; a list is not hashable
        return genai  # type: ignore[return-value]  # one of _GENAI
    openinference = attributes.get("openinference.span.kind")
    if isinstance(openinference, str) and openinference.upper() in _OPENINFERENCE:
        return _OPENINFERENCE[openinference.upper()]  # type: ignore[return-value]
    traceloop = attributes.get("traceloop.span.kind")
    if isinstance(traceloop, str) and traceloop.lower() in _OPENLLMETRY:
        return _OPENLLMETRY[traceloop.lower()]  # type: ignore[return-value]
    if attributes.get("llm.request.type") in ("chat", "completion"):
        return "chat"
    return "other"


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode()


def _json_object(value: Any) -> dict[str, Any] | None:
    """A JSON object attribute: parsed when it is one; anything else is kept, under `_raw`."""
    if value is None:
        return None
    if type(value) is str:
        try:
            parsed = _loads(value)
        except orjson.JSONDecodeError:
            return {"_raw": value}
        return parsed if type(parsed) is dict else {"_raw": parsed}
    if isinstance(value, dict):
        return value
    return {"_raw": value}


_loads = orjson.loads


_INT64_MAX = 2**63 - 1
_INT64_DIGITS = 19


def _int(value: Any) -> int | None:
    """A counter attribute (an attempt number, a row count) as a 64-bit integer, or None when it is not one.

    Any value can arrive: a digit string of 5,000 digits, "²" (a digit to `isdigit`, not to `int`) or an
    integer beyond 64 bits would fail the span's commit, so they read as absent, like any other non-integer."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if -_INT64_MAX <= value <= _INT64_MAX else None
    if isinstance(value, str):
        digits = value.strip()
        unsigned = digits.removeprefix("-")
        if unsigned.isascii() and unsigned.isdigit() and len(unsigned) <= _INT64_DIGITS:
            number = int(digits)
            return number if -_INT64_MAX <= number <= _INT64_MAX else None
    return None


def _first(attributes: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        value = attributes.get(name)
        if value is not None and value != "":
            return value
    return None


def _ticket(
    trace_id: str,
    span_id: str,
    start_ns: int,
    end_ns: int,
    status: StatusCode,
    attributes: Mapping[str, Any],
    name: str,
    service_name: str | None,
) -> TicketRow:
    ticket_id = _text(attributes.get(TICKET_ID)) or trace_id
    task_type = _text(_first(attributes, TASK_TYPE, AGENT_NAME, "traceloop.entity.name", "agent.name"))
    source_attr = attributes.get(SOURCE)
    source: Source = "sandbox" if source_attr == "sandbox" else "production"
    return TicketRow(
        ticket_id=ticket_id,
        trace_id=trace_id,
        span_id=span_id,
        task_type=task_type or name or DEFAULT_TASK_TYPE,
        source=source,
        start_time_ns=start_ns,
        end_time_ns=end_ns,
        ticket_hash=ticket_hash(ticket_id),
        status=status,
        agent_name=_text(_first(attributes, AGENT_NAME, "agent.name", "traceloop.entity.name")),
        conversation_id=_text(_first(attributes, CONVERSATION_ID, "session.id")),
        intent=_json_object(attributes.get(INTENT)),
        domain=_text(attributes.get(DOMAIN)),
        outcome=_text(attributes.get(TICKET_OUTCOME)),
        replay_run_id=_text(attributes.get(REPLAY_RUN_ID)),
        trial_attempt=_int(attributes.get(TRIAL_ATTEMPT)),
        service_name=service_name,
    )


def _tool_call(
    trace_id: str,
    span_id: str,
    parent_span_id: str | None,
    start_ns: int,
    end_ns: int,
    status: StatusCode,
    status_message: str | None,
    attributes: Mapping[str, Any],
    events: list[SpanEvent],
    name: str,
) -> ToolCallRow:
    tool_name = _text(_first(attributes, TOOL_NAME, "tool.name", "traceloop.entity.name"))
    if tool_name is None:
        tool_name = name.removeprefix("execute_tool ").strip() or name
    exception = next((e for e in events if e.name == EVENT_EXCEPTION), None)
    error_type = _text(attributes.get(ERROR_TYPE))
    error_message = status_message
    if exception is not None:
        error_type = error_type or _text(exception.attributes.get(EXCEPTION_TYPE))
        error_message = error_message or _text(exception.attributes.get(EXCEPTION_MESSAGE))
    declared = attributes.get(TOOL_OUTCOME)
    result = _text(_first(attributes, TOOL_CALL_RESULT, "output.value", "traceloop.entity.output"))
    outcome: ToolOutcome
    if type(declared) is str and declared in _OUTCOMES:
        outcome = declared  # type: ignore[assignment]  # one of _OUTCOMES: decided by the one rule at the source
    else:
        # A span from another instrumentation: the same rule, from what the span says (kind unknown). A result
        # that was not captured says nothing about emptiness, so it counts as something returned.
        failed = error_type or ("error" if status == "error" else None)
        outcome = outcome_of(_result_value(result) if result is not None else _NOT_CAPTURED, error_type=failed)
    return ToolCallRow(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent_span_id,
        tool_name=tool_name,
        outcome=outcome,
        start_time_ns=start_ns,
        end_time_ns=end_ns,
        call_id=_text(_first(attributes, TOOL_CALL_ID, "tool_call.id", "tool.call.id")),
        tool_type=_text(attributes.get(TOOL_TYPE)),
        error_type=error_type,
        error_message=error_message,
        arguments=_text(_first(attributes, TOOL_CALL_ARGUMENTS, "input.value", "traceloop.entity.input")),
        result=result,
    )


_NOT_CAPTURED = object()


def _result_value(text: str) -> Any:
    """A captured tool result as a value: its JSON when it is JSON, else the text."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text


def _state_rows(trace_id: str, span_id: str, events: list[SpanEvent]) -> list[StateWriteRow]:
    rows: list[StateWriteRow] = []
    json_object = _json_object
    for seq, event in enumerate(events):
        name = event.name
        if name == EVENT_STATE_WRITE:
            attrs = event.attributes
            get = attrs.get
            op_attr = get(STATE_WRITE_OP)
            changed = get(STATE_WRITE_CHANGED)
            table = get(STATE_WRITE_TABLE)
            rows.append(
                StateWriteRow(
                    trace_id,
                    span_id,
                    seq,
                    event.time_ns,
                    (table if type(table) is str else _text(table)) or "",
                    json_object(get(STATE_WRITE_KEY)) or {},
                    op_attr if type(op_attr) is str and op_attr in _WRITE_OPS else "update",  # type: ignore[arg-type]
                    json_object(get(STATE_WRITE_BEFORE)),
                    json_object(get(STATE_WRITE_AFTER)),
                    [c if type(c) is str else str(c) for c in changed] if type(changed) is list else [],
                    _int(get(STATE_WRITE_ROWCOUNT)),
                )
            )
        elif name == EVENT_STATE_READ:
            attrs = event.attributes
            rows.append(
                StateWriteRow(
                    trace_id=trace_id,
                    span_id=span_id,
                    seq=seq,
                    time_ns=event.time_ns,
                    table=_text(attrs.get(STATE_READ_TABLE)) or "",
                    key=_json_object(attrs.get(STATE_READ_KEY)) or {},
                    op="read",
                    before=_json_object(attrs.get(STATE_READ_ROW)),
                )
            )
    return rows


def normalize_span(
    *,
    trace_id: str,
    span_id: str,
    parent_span_id: str | None,
    name: str,
    start_time_ns: int,
    end_time_ns: int,
    kind: int = 0,
    status: StatusCode = "unset",
    status_message: str | None = None,
    service_name: str | None = None,
    scope_name: str | None = None,
    attributes: dict[str, Any],
    resource_attributes: dict[str, Any],
    events: list[SpanEvent],
) -> NormalizedSpan:
    """A decoded span plus its derived ticket, tool call and state-write rows."""
    operation = operation_of(attributes)
    ticket = None
    tool_call = None
    if operation == OP_INVOKE_AGENT or TICKET_ID in attributes:
        ticket = _ticket(trace_id, span_id, start_time_ns, end_time_ns, status, attributes, name, service_name)
    elif operation == OP_EXECUTE_TOOL:
        tool_call = _tool_call(
            trace_id,
            span_id,
            parent_span_id,
            start_time_ns,
            end_time_ns,
            status,
            status_message,
            attributes,
            events,
            name,
        )
    # Positional: the ingest path builds one per span, and keyword arguments cost a dict each.
    return NormalizedSpan(
        trace_id,
        span_id,
        parent_span_id,
        name,
        start_time_ns,
        end_time_ns,
        operation,
        kind,
        status,
        status_message,
        service_name,
        scope_name,
        attributes,
        resource_attributes,
        events,
        ticket,
        tool_call,
        _state_rows(trace_id, span_id, events) if events else [],
    )
