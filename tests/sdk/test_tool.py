"""@passhat.tool: one execute_tool span per call, with an outcome of ok, error or empty."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

import passhat
from passhat.testing import Capture


class NotFoundError(Exception):
    error_type = "not_found"


@passhat.tool
def find_order(order_id: str) -> dict[str, Any] | None:
    if order_id == "missing":
        return None
    if order_id == "boom":
        raise NotFoundError(f"order {order_id} does not exist")
    return {"order_id": order_id, "status": "delivered"}


@passhat.tool(name="search_orders", empty=lambda result: result["total"] == 0)
async def search(customer: str, *, limit: int = 10) -> dict[str, Any]:
    return {"total": 0 if customer == "nobody" else 2, "limit": limit}


class Backend:
    @passhat.tool
    def cancel(self, order_id: str) -> str:
        return f"cancelled {order_id}"


def test_a_tool_call_is_an_execute_tool_span_under_the_ticket(passhat_capture: Capture) -> None:
    with passhat.ticket("T-1", task_type="refund"):
        assert find_order("O-1") == {"order_id": "O-1", "status": "delivered"}
    tool, ticket = passhat_capture.spans
    assert tool.name == "execute_tool find_order"
    assert tool.parent is not None and tool.parent.span_id == ticket.context.span_id
    assert tool.context.trace_id == ticket.context.trace_id
    attributes = dict(tool.attributes or {})
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["gen_ai.tool.name"] == "find_order"
    assert attributes["gen_ai.tool.type"] == "function"
    assert attributes["passhat.tool.outcome"] == "ok"
    assert json.loads(str(attributes["gen_ai.tool.call.arguments"])) == {"order_id": "O-1"}
    assert json.loads(str(attributes["gen_ai.tool.call.result"])) == {
        "order_id": "O-1",
        "status": "delivered",
    }


def test_none_result_is_an_empty_outcome(passhat_capture: Capture) -> None:
    assert find_order("missing") is None
    assert passhat_capture.one("execute_tool find_order").attributes["passhat.tool.outcome"] == "empty"  # type: ignore[index]


@passhat.tool(kind="write")
def cancel_order(order_id: str) -> None:
    raise NotFoundError(f"order {order_id} does not exist")


def test_a_not_found_exception_of_a_lookup_is_an_empty_outcome_with_its_declared_error_type(
    passhat_capture: Capture,
) -> None:
    with pytest.raises(NotFoundError):
        find_order("boom")
    span = passhat_capture.one("execute_tool find_order")
    assert span.attributes["passhat.tool.outcome"] == "empty"  # type: ignore[index]
    assert span.attributes["error.type"] == "not_found"  # type: ignore[index]
    assert span.status.status_code.name == "ERROR"


def test_a_not_found_exception_of_a_write_is_an_error_outcome(passhat_capture: Capture) -> None:
    with pytest.raises(NotFoundError):
        cancel_order("O-404")
    span = passhat_capture.one("execute_tool cancel_order")
    assert span.attributes["passhat.tool.outcome"] == "error"  # type: ignore[index]
    assert span.attributes["error.type"] == "not_found"  # type: ignore[index]


def test_a_write_that_returns_nothing_is_an_ok_outcome(passhat_capture: Capture) -> None:
    @passhat.tool(kind="write")
    def close_ticket(ticket_id: str) -> None:
        return None

    close_ticket("T-1")
    assert passhat_capture.one("execute_tool close_ticket").attributes["passhat.tool.outcome"] == "ok"  # type: ignore[index]


def test_a_kind_outside_lookup_write_other_is_refused() -> None:
    with pytest.raises(TypeError, match="kind must be one of lookup, write, other"):
        passhat.tool(kind="read")  # type: ignore[call-overload]


def test_a_plain_exception_reports_its_class_name(passhat_capture: Capture) -> None:
    @passhat.tool
    def divide(a: int, b: int) -> float:
        return a / b

    with pytest.raises(ZeroDivisionError):
        divide(1, 0)
    assert passhat_capture.one("execute_tool divide").attributes["error.type"] == "ZeroDivisionError"  # type: ignore[index]


async def test_async_tools_with_a_name_and_an_empty_predicate(passhat_capture: Capture) -> None:
    assert (await search("nobody"))["total"] == 0
    assert (await search("alice", limit=3))["total"] == 2
    first, second = passhat_capture.named("execute_tool search_orders")
    assert first.attributes["passhat.tool.outcome"] == "empty"  # type: ignore[index]
    assert second.attributes["passhat.tool.outcome"] == "ok"  # type: ignore[index]
    assert json.loads(str(second.attributes["gen_ai.tool.call.arguments"])) == {  # type: ignore[index]
        "customer": "alice",
        "limit": 3,
    }


def test_methods_are_traced_without_self(passhat_capture: Capture) -> None:
    assert Backend().cancel("O-9") == "cancelled O-9"
    span = passhat_capture.one("execute_tool cancel")
    assert json.loads(str(span.attributes["gen_ai.tool.call.arguments"])) == {"order_id": "O-9"}  # type: ignore[index]


@pytest.mark.parametrize(
    ("result", "outcome"),
    [(None, "empty"), ("", "empty"), ([], "empty"), ({}, "empty"), (0, "ok"), ("x", "ok")],
)
def test_outcome_of_treats_none_and_empty_collections_as_empty(result: object, outcome: str) -> None:
    assert passhat.outcome_of(result) == outcome


def test_arguments_and_results_are_left_out_without_content_capture() -> None:
    from passhat.testing import capture

    with capture(capture_content=False) as spans:
        find_order("O-2")
    attributes = spans.one("execute_tool find_order").attributes or {}
    assert "gen_ai.tool.call.arguments" not in attributes
    assert "gen_ai.tool.call.result" not in attributes


def test_long_arguments_are_capped() -> None:
    from passhat.testing import capture

    @passhat.tool
    def echo(text: str) -> str:
        return text

    with capture(max_content_length=50) as spans:
        echo("x" * 500)
    value = str((spans.one("execute_tool echo").attributes or {})["gen_ai.tool.call.result"])
    assert value.startswith('"xxxx') and value.endswith("[truncated 452 chars]")


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("this exception cannot be printed")


def test_an_exception_whose_str_raises_reaches_the_agent_unchanged(passhat_capture: Capture) -> None:
    @passhat.tool
    def fails() -> None:
        raise UnprintableError

    with passhat.collect_tool_calls() as calls, pytest.raises(UnprintableError), passhat.ticket("T-1", task_type="r"):
        fails()
    tool, ticket = passhat_capture.spans
    assert tool.name == "execute_tool fails" and tool.attributes["error.type"] == "UnprintableError"  # type: ignore[index]
    assert tool.events[0].attributes["exception.message"] == "<exception str() failed>"  # type: ignore[index]
    assert ticket.attributes["error.type"] == "UnprintableError"  # type: ignore[index]
    assert [call.error_message for call in calls] == ["<exception str() failed>"]


def test_personal_data_in_bytes_arguments_is_redacted_not_hidden_in_base64(passhat_capture: Capture) -> None:
    body = b"From: jane.doe@acme-mail.com\r\nCard: 4111 1111 1111 1111"

    @passhat.tool
    def parse_mail(raw: bytes) -> bytes:
        return raw

    with passhat.ticket("T-1", task_type="mail"):
        assert parse_mail(body) == body
        parse_mail(b"\xff\x00binary")
    text, binary = (
        json.loads(str((span.attributes or {})["gen_ai.tool.call.arguments"]))["raw"]
        for span in passhat_capture.tools()
    )
    redactor = passhat_capture.passhat.redactor
    assert text == redactor.text(body.decode()) and "jane.doe" not in text and "4111" not in text
    assert base64.b64decode(binary) == b"\xff\x00binary"  # bytes that are not text stay base64


def test_tool_spans_claim_the_call_ids_the_model_asked_for(passhat_capture: Capture) -> None:
    with passhat.ticket("T-1", task_type="refund") as t:
        t.expect_tool_calls([("find_order", "toolu_1"), ("cancel", "toolu_2"), ("find_order", "toolu_3")])
        find_order("O-1")
        Backend().cancel("O-1")
        find_order("O-2")
        find_order("O-3")
    ids = [(s.attributes or {}).get("gen_ai.tool.call.id") for s in passhat_capture.tools()]
    assert ids == ["toolu_1", "toolu_2", "toolu_3", None]


def test_decorating_something_that_is_not_callable_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="decorates a function"):
        passhat.tool(42)  # type: ignore[call-overload]


def test_a_non_global_instance_traces_its_own_tools_and_tickets(passhat_capture: Capture) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    own = passhat.configure(tracer_provider=provider, make_global=False)

    @own.tool(name="lookup")
    def lookup(key: str) -> str:
        return key

    with own.ticket("T-1", task_type="refund", source="sandbox"):
        lookup("k")
    assert [span.name for span in exporter.get_finished_spans()] == ["execute_tool lookup", "invoke_agent"]
    assert passhat_capture.spans == []
