"""Normalisation: what a span means for passhat (a ticket, a tool call, state writes), whatever emitted it.

Four shapes are understood (docs/sdk.md lists what is read from each): the passhat SDK's spans; plain
OpenTelemetry GenAI spans (every `gen_ai.operation.name` of the conventions); OpenInference spans
(`openinference.span.kind`); OpenLLMetry spans (`traceloop.span.kind`, LLM spans by `llm.request.type`).

Ticket candidates are agent and workflow spans (`invoke_agent` / `invoke_workflow`, OpenInference `AGENT` /
`CHAIN`, OpenLLMetry `agent` / `workflow`, a root `task`) and spans carrying a `passhat.ticket.id` (set by
`passhat.ticket()`, or copied from its OpenTelemetry baggage onto a framework's spans). Without a ticket id, a
candidate's ticket id is its trace id. The store keeps one ticket per trace: the outermost candidate, preferring
one with a ticket id (see `TicketRow.rank`); nested agent spans are that ticket's sub-agents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
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
    CHAT_TOOL_CALL_IDS,
    CONVERSATION_ID,
    DOMAIN,
    ERROR_TYPE,
    EVENT_EXCEPTION,
    EVENT_STATE_READ,
    EVENT_STATE_WRITE,
    EXCEPTION_MESSAGE,
    EXCEPTION_TYPE,
    INTENT,
    MODEL_CALL_OPERATIONS,
    OP_CHAT,
    OP_EMBEDDINGS,
    OP_EXECUTE_TOOL,
    OP_INVOKE_AGENT,
    OP_INVOKE_WORKFLOW,
    OP_RETRIEVAL,
    OP_TEXT_COMPLETION,
    OPERATION_NAME,
    OPERATIONS,
    OUTPUT_MESSAGES,
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
    WORKFLOW_NAME,
    WRITE_OPS,
)

_OPENINFERENCE = {
    "AGENT": OP_INVOKE_AGENT,
    "CHAIN": OP_INVOKE_WORKFLOW,
    "TOOL": OP_EXECUTE_TOOL,
    "LLM": OP_CHAT,
    "EMBEDDING": OP_EMBEDDINGS,
    "RETRIEVER": OP_RETRIEVAL,
}
_OPENLLMETRY = {"agent": OP_INVOKE_AGENT, "workflow": OP_INVOKE_WORKFLOW, "tool": OP_EXECUTE_TOOL}
_LLM_REQUEST_TYPES = {"chat": OP_CHAT, "completion": OP_TEXT_COMPLETION, "embedding": OP_EMBEDDINGS}
_GENAI: frozenset[str] = frozenset(OPERATIONS)
_TICKET_ROOTS: frozenset[str] = frozenset((OP_INVOKE_AGENT, OP_INVOKE_WORKFLOW))
_MODEL_CALLS: frozenset[str] = frozenset(MODEL_CALL_OPERATIONS)
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
    request_type = attributes.get("llm.request.type")
    if type(request_type) is str and request_type in _LLM_REQUEST_TYPES:
        return _LLM_REQUEST_TYPES[request_type]  # type: ignore[return-value]
    return "other"


@dataclass(frozen=True, slots=True)
class TicketRules:
    """How the collector finds tickets beyond the defaults (CollectorSettings: `task_types`, `root_tickets`).

    `task_types` maps a workflow or agent name (the task type a span would otherwise get) to the task type to
    record, e.g. {"Agent workflow": "refund"}; an explicit `passhat.task_type` is never remapped.
    `root_tickets` makes every root span a ticket candidate: for LLM-only apps, where nothing names an agent.
    """

    task_types: Mapping[str, str] = field(default_factory=dict)
    root_tickets: bool = False


DEFAULT_RULES = TicketRules()


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
    rules: TicketRules,
) -> TicketRow:
    ticket_id = _text(attributes.get(TICKET_ID)) or trace_id
    task_type = _text(attributes.get(TASK_TYPE))
    if not task_type:
        named = _text(
            _first(
                attributes,
                WORKFLOW_NAME,
                AGENT_NAME,
                "traceloop.entity.name",
                "traceloop.workflow.name",
                "agent.name",
            )
        )
        named = named or _unprefixed(name)
        task_type = rules.task_types.get(named, named) if rules.task_types else named
    source_attr = attributes.get(SOURCE)
    source: Source = "sandbox" if source_attr == "sandbox" else "production"
    return TicketRow(
        ticket_id=ticket_id,
        trace_id=trace_id,
        span_id=span_id,
        task_type=task_type or DEFAULT_TASK_TYPE,
        source=source,
        start_time_ns=start_ns,
        end_time_ns=end_ns,
        ticket_hash=ticket_hash(ticket_id),
        status=status,
        agent_name=_text(_first(attributes, AGENT_NAME, "agent.name", "traceloop.entity.name")),
        conversation_id=_text(
            _first(attributes, CONVERSATION_ID, "session.id", "traceloop.association.properties.session_id")
        ),
        intent=_json_object(attributes.get(INTENT)),
        domain=_text(attributes.get(DOMAIN)),
        outcome=_text(attributes.get(TICKET_OUTCOME)),
        replay_run_id=_text(attributes.get(REPLAY_RUN_ID)),
        trial_attempt=_int(attributes.get(TRIAL_ATTEMPT)),
        service_name=service_name,
    )


def _unprefixed(name: str) -> str:
    """A span name without its agent operation: `invoke_agent support` names the agent `support`. Other names
    are kept whole (`chat gpt-4o` names a model, not a kind of ticket)."""
    operation, _, rest = name.partition(" ")
    return rest.strip() if rest.strip() and operation in _TICKET_ROOTS else name


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
        call_id=_text(_first(attributes, TOOL_CALL_ID, "tool_call.id", "tool.id", "tool.call.id")),
        tool_type=_text(attributes.get(TOOL_TYPE)),
        error_type=error_type,
        error_message=error_message,
        arguments=_arguments(attributes),
        result=result,
    )


def _arguments(attributes: Mapping[str, Any]) -> str | None:
    """A tool call's arguments as JSON; Traceloop's `{"args": [], "kwargs": {...}}` wrapper unwrapped."""
    direct = _first(attributes, TOOL_CALL_ARGUMENTS, "input.value")
    if direct is not None:
        return _text(direct)
    wrapped = attributes.get("traceloop.entity.input")
    if type(wrapped) is not str:
        return _text(wrapped)
    try:
        parsed = _loads(wrapped)
    except orjson.JSONDecodeError:
        return wrapped
    if type(parsed) is dict and parsed.keys() <= {"args", "kwargs"} and not parsed.get("args"):
        kwargs = parsed.get("kwargs")
        return orjson.dumps(kwargs if isinstance(kwargs, dict) else {}).decode()
    return wrapped


def requested_call_ids(attributes: Mapping[str, Any]) -> list[str]:
    """The tool-call ids an LLM call asked for, from GenAI output messages, OpenInference or OpenLLMetry."""
    found: list[tuple[tuple[int, ...], str]] = []
    messages = attributes.get(OUTPUT_MESSAGES)
    if type(messages) is str:
        try:
            messages = _loads(messages)
        except orjson.JSONDecodeError:
            messages = None
    if type(messages) is list:
        for message in messages:
            parts = message.get("parts") if type(message) is dict else None
            for part in parts if type(parts) is list else ():
                if type(part) is dict and part.get("type") == "tool_call" and type(part.get("id")) is str:
                    found.append(((len(found),), part["id"]))
    for key, value in attributes.items():
        if type(value) is not str or not key.endswith("id"):
            continue
        # llm.output_messages.0.message.tool_calls.1.tool_call.id (OpenInference),
        # gen_ai.completion.0.tool_calls.1.id (OpenLLMetry)
        openinference = key.startswith("llm.output_messages.") and key.endswith(".tool_call.id")
        if openinference or (key.startswith("gen_ai.completion.") and ".tool_calls." in key and key.endswith(".id")):
            found.append((_indices(key), value))
    found.sort(key=lambda item: item[0])
    return list(dict.fromkeys(call_id for _, call_id in found))


def _indices(key: str) -> tuple[int, ...]:
    return tuple(int(part) for part in key.split(".") if part.isdigit())


_NOT_CAPTURED = object()


def _is_root_task(attributes: Mapping[str, Any]) -> bool:
    """A Traceloop `@task` with no parent: the whole unit of work of an app without workflows."""
    kind = attributes.get("traceloop.span.kind")
    return type(kind) is str and kind.lower() == "task"


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
    rules: TicketRules = DEFAULT_RULES,
) -> NormalizedSpan:
    """A decoded span plus its derived ticket, tool call and state-write rows."""
    operation = operation_of(attributes)
    ticket = None
    tool_call = None
    if operation == OP_EXECUTE_TOOL:
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
    elif (
        operation in _TICKET_ROOTS
        or (operation == "other" and TICKET_ID in attributes)
        or (parent_span_id is None and (rules.root_tickets or _is_root_task(attributes)))
    ):
        ticket = _ticket(trace_id, span_id, start_time_ns, end_time_ns, status, attributes, name, service_name, rules)
    if operation in _MODEL_CALLS and CHAT_TOOL_CALL_IDS not in attributes:
        # Recorded under passhat's name so a tool call's `call_id` finds the LLM call that asked for it,
        # whichever instrumentation recorded the call.
        call_ids = requested_call_ids(attributes)
        if call_ids:
            attributes[CHAT_TOOL_CALL_IDS] = call_ids
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
