"""Normalisation of the four span shapes into tickets, tool calls and state writes."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from passhat.collector.ingest._normalize import normalize_span, operation_of, ticket_hash
from passhat.collector.store import SpanEvent

TRACE = "0af7651916cd43dd8448eb211c80319c"
SPAN = "b7ad6b7169203331"


def norm(attributes: dict[str, Any], *, name: str = "span", events: list[SpanEvent] | None = None, **kw: Any) -> Any:
    return normalize_span(
        trace_id=TRACE,
        span_id=SPAN,
        parent_span_id=kw.pop("parent", None),
        name=name,
        start_time_ns=1_700_000_000_000_000_000,
        end_time_ns=1_700_000_001_000_000_000,
        attributes=attributes,
        resource_attributes={"service.name": "svc"},
        events=events or [],
        service_name="svc",
        **kw,
    )


def test_ticket_hash_is_the_contract_hash() -> None:
    expected = int.from_bytes(hashlib.sha256(b"T-42").digest()[:8], "big")
    assert ticket_hash("T-42") == expected


def test_passhat_ticket_span() -> None:
    span = norm(
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "support",
            "gen_ai.conversation.id": "c-1",
            "passhat.ticket.id": "T-1",
            "passhat.task_type": "refund",
            "passhat.source": "sandbox",
            "passhat.intent": json.dumps({"order_id": "O-7"}),
            "passhat.domain": "retail",
            "passhat.ticket.outcome": "resolved",
            "passhat.replay.run_id": "run-3",
            "passhat.trial.attempt": 2,
        },
        name="invoke_agent support",
        status="ok",
    )
    ticket = span.ticket
    assert span.operation == "invoke_agent" and span.tool_call is None
    assert (ticket.ticket_id, ticket.task_type, ticket.source, ticket.domain) == (
        "T-1",
        "refund",
        "sandbox",
        "retail",
    )
    assert ticket.intent == {"order_id": "O-7"}
    assert (ticket.replay_run_id, ticket.trial_attempt, ticket.outcome) == ("run-3", 2, "resolved")
    assert (ticket.agent_name, ticket.conversation_id, ticket.status) == ("support", "c-1", "ok")
    assert ticket.ticket_hash == ticket_hash("T-1")


def test_plain_genai_agent_span_is_a_ticket_named_by_its_trace() -> None:
    span = norm({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "travel-bot"})
    assert span.ticket.ticket_id == TRACE
    assert span.ticket.task_type == "travel-bot"
    assert span.ticket.source == "production"


def test_openinference_agent_and_tool_spans() -> None:
    agent = norm({"openinference.span.kind": "AGENT", "session.id": "s-9"}, name="Agent run")
    assert agent.operation == "invoke_agent"
    assert agent.ticket.ticket_id == TRACE and agent.ticket.conversation_id == "s-9"
    assert agent.ticket.task_type == "Agent run"
    tool = norm(
        {
            "openinference.span.kind": "TOOL",
            "tool.name": "lookup_order",
            "input.value": '{"id": 1}',
            "output.value": "[]",
        },
        parent="1111111111111111",
    )
    assert tool.operation == "execute_tool"
    call = tool.tool_call
    assert (call.tool_name, call.arguments, call.result, call.outcome) == (
        "lookup_order",
        '{"id": 1}',
        "[]",
        "empty",  # the one tool-outcome rule: a call of unknown kind that returned nothing
    )
    assert operation_of({"openinference.span.kind": "LLM"}) == "chat"


def test_openllmetry_agent_and_tool_spans() -> None:
    agent = norm({"traceloop.span.kind": "agent", "traceloop.entity.name": "support_agent"})
    assert agent.ticket.task_type == "support_agent"
    tool = norm(
        {"traceloop.span.kind": "tool", "traceloop.entity.name": "refund", "traceloop.entity.input": "{}"},
        status="error",
        status_message="order not found",
    )
    assert (tool.tool_call.tool_name, tool.tool_call.outcome) == ("refund", "error")
    assert tool.tool_call.error_message == "order not found"
    assert operation_of({"llm.request.type": "chat"}) == "chat"
    assert operation_of({"traceloop.span.kind": "workflow"}) == "invoke_workflow"


def test_tool_outcome_error_type_and_exception_event() -> None:
    declared = norm(
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "find", "passhat.tool.outcome": "empty"}
    )
    assert declared.tool_call.outcome == "empty"
    raised = norm(
        {"gen_ai.operation.name": "execute_tool"},
        name="execute_tool refund_order",
        status="error",
        events=[SpanEvent("exception", 5, {"exception.type": "NotFound", "exception.message": "no order O-9"})],
    )
    call = raised.tool_call
    assert (call.tool_name, call.outcome, call.error_type, call.error_message) == (
        "refund_order",
        "error",
        "NotFound",
        "no order O-9",
    )
    typed = norm({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "x", "error.type": "not_allowed"})
    assert (typed.tool_call.outcome, typed.tool_call.error_type) == ("error", "not_allowed")


def test_a_span_without_an_outcome_gets_one_by_the_one_rule_with_its_kind_unknown() -> None:
    def outcome(attributes: dict[str, Any], **kw: Any) -> str:
        return str(
            norm(
                {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "x", **attributes}, **kw
            ).tool_call.outcome
        )

    assert outcome({"error.type": "not_found"}) == "empty"
    assert outcome({}, status="error") == "error"
    assert outcome({"gen_ai.tool.call.result": "{}"}) == "empty"
    assert outcome({"gen_ai.tool.call.result": "not json"}) == "ok"
    assert outcome({}) == "ok"  # no result captured: nothing says it came back empty


def test_state_write_and_read_events() -> None:
    events = [
        SpanEvent(
            "passhat.state_read",
            10,
            {
                "passhat.state_read.table": "orders",
                "passhat.state_read.key": '{"id": 7}',
                "passhat.state_read.row": '{"id": 7, "status": "delivered"}',
            },
        ),
        SpanEvent("passhat.customer_message", 11, {}),
        SpanEvent(
            "passhat.state_write",
            12,
            {
                "passhat.state_write.table": "orders",
                "passhat.state_write.key": '{"id": 7}',
                "passhat.state_write.op": "update",
                "passhat.state_write.before": '{"status": "delivered"}',
                "passhat.state_write.after": '{"status": "refunded"}',
                "passhat.state_write.changed": ["status"],
                "passhat.state_write.rowcount": 1,
            },
        ),
        SpanEvent(
            "passhat.state_write",
            13,
            {
                "passhat.state_write.table": "t",
                "passhat.state_write.key": "not json",
                "passhat.state_write.op": "bulk_delete",
            },
        ),
    ]
    span = norm({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "refund"}, events=events)
    read, write, odd = span.state_writes
    assert (read.op, read.seq, read.key, read.before) == (
        "read",
        0,
        {"id": 7},
        {"id": 7, "status": "delivered"},
    )
    assert (write.op, write.seq, write.before, write.after) == (
        "update",
        2,
        {"status": "delivered"},
        {"status": "refunded"},
    )
    assert (write.changed, write.rowcount, write.time_ns) == (["status"], 1, 12)
    assert (odd.op, odd.key) == ("bulk_delete", {"_raw": "not json"})


def test_invalid_intent_is_kept_raw_and_other_spans_are_plain() -> None:
    span = norm({"passhat.ticket.id": "T-3", "passhat.intent": "{broken"})
    assert span.ticket.intent == {"_raw": "{broken"}
    other = norm({"http.method": "GET"})
    assert (other.operation, other.ticket, other.tool_call, other.state_writes) == ("other", None, None, [])


def test_attribute_values_of_any_json_type_never_break_normalisation() -> None:
    """Lists and maps where strings are expected (any OTLP client can send them) are read as unknown values."""
    odd: list[Any] = [["invoke_agent"], {"k": "v"}, 7, True, None]
    for value in odd:
        span = norm({"gen_ai.operation.name": value, "passhat.tool.outcome": value})
        assert span.operation == "other"
        tool = norm(
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t", "passhat.tool.outcome": value},
            events=[SpanEvent("passhat.state_write", 1, {"passhat.state_write.op": value})],
        )
        assert tool.tool_call is not None and tool.tool_call.outcome == "ok"
        assert tool.state_writes[0].op == "update"
