"""A generator `@passhat.tool` (sync or async): its span covers the iteration, not the creation of the generator."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator
from typing import Any

import pytest
from opentelemetry import trace

import passhat
from passhat.testing import Capture, capture


class OutOfStockError(Exception):
    pass


@passhat.tool(kind="lookup")
def list_orders(customer: str, count: int) -> Iterator[dict[str, Any]]:
    """Stream a customer's orders."""
    for number in range(count):
        yield {"order_id": f"O-{number}", "email": customer}


@passhat.tool
def reserve(items: list[str]) -> Iterator[str]:
    for item in items:
        if item == "gone":
            raise OutOfStockError(f"{item} is out of stock")
        yield item


@passhat.tool(kind="lookup")
async def search(query: str, count: int) -> AsyncGenerator[str, None]:
    for number in range(count):
        await asyncio.sleep(0)
        yield f"{query}-{number}"


@passhat.tool
async def reserve_async(items: list[str]) -> AsyncIterator[str]:
    for item in items:
        await asyncio.sleep(0)
        if item == "gone":
            raise OutOfStockError(f"{item} is out of stock")
        yield item


def _tool(spans: Capture, name: str) -> dict[str, Any]:
    return dict(spans.one(f"execute_tool {name}").attributes or {})


def test_the_span_covers_the_iteration_and_records_the_yielded_items(passhat_capture: Capture) -> None:
    with passhat.ticket("T-1", task_type="orders") as ticket:
        orders = list_orders("ada@example.com", 3)
        assert passhat_capture.named("execute_tool list_orders") == []  # nothing ran yet
        seen = []
        for order in orders:
            assert passhat.current_ticket() is ticket  # the caller's code still runs in its ticket...
            assert trace.get_current_span() is ticket.span  # ...and not inside the tool's span
            seen.append(order["order_id"])
        assert seen == ["O-0", "O-1", "O-2"]
        [span] = passhat_capture.named("execute_tool list_orders")  # ended when the generator was exhausted
    assert span.parent is not None and span.parent.span_id == ticket.span.get_span_context().span_id
    attributes = _tool(passhat_capture, "list_orders")
    assert attributes["passhat.tool.outcome"] == "ok" and attributes["passhat.tool.yields"] == 3
    result = json.loads(str(attributes["gen_ai.tool.call.result"]))
    assert [order["order_id"] for order in result] == ["O-0", "O-1", "O-2"]
    assert "ada@example.com" not in str(attributes["gen_ai.tool.call.result"])  # redacted like any result
    assert attributes["gen_ai.tool.description"] == "Stream a customer's orders."


def test_the_tools_own_code_runs_inside_its_span(passhat_capture: Capture) -> None:
    inside: list[int] = []

    @passhat.tool
    def numbers() -> Iterator[int]:
        for number in range(2):
            inside.append(trace.get_current_span().get_span_context().span_id)
            yield number

    with passhat.ticket("T-1", task_type="orders"):
        assert list(numbers()) == [0, 1]
    span = passhat_capture.one("execute_tool numbers")
    assert inside == [span.context.span_id] * 2


def test_nothing_yielded_is_an_empty_lookup(passhat_capture: Capture) -> None:
    assert list(list_orders("nobody", 0)) == []
    attributes = _tool(passhat_capture, "list_orders")
    assert attributes["passhat.tool.outcome"] == "empty" and attributes["passhat.tool.yields"] == 0
    assert attributes["gen_ai.tool.call.result"] == "[]"


def test_an_exception_while_iterating_is_the_tools_error(passhat_capture: Capture) -> None:
    with pytest.raises(OutOfStockError), passhat.ticket("T-1", task_type="orders"):
        for _ in reserve(["a", "b", "gone", "c"]):
            pass
    attributes = _tool(passhat_capture, "reserve")
    assert attributes["passhat.tool.outcome"] == "error" and attributes["error.type"] == "OutOfStockError"
    assert attributes["passhat.tool.yields"] == 2
    [event] = passhat_capture.one("execute_tool reserve").events
    assert event.name == "exception" and "gone is out of stock" in str((event.attributes or {})["exception.message"])


def test_closing_early_ends_the_span_with_what_was_yielded(passhat_capture: Capture) -> None:
    closed: list[bool] = []

    @passhat.tool
    def pages() -> Iterator[int]:
        try:
            yield from range(100)
        finally:
            closed.append(True)

    with passhat.ticket("T-1", task_type="orders"):
        for page in pages():
            if page == 1:
                break  # the loop drops the generator: CPython closes it at once
    assert closed == [True]
    attributes = _tool(passhat_capture, "pages")
    assert attributes["passhat.tool.outcome"] == "ok" and attributes["passhat.tool.yields"] == 2
    assert attributes["gen_ai.tool.call.result"] == "[0,1]"


def test_send_throw_and_the_return_value_reach_the_tools_generator(passhat_capture: Capture) -> None:
    @passhat.tool
    def accumulate() -> Generator[int, int | None, None]:
        total = 0
        while True:
            try:
                sent = yield total
            except ValueError:
                sent = -total
            if sent is None:
                return
            total += sent

    running = accumulate()
    assert next(running) == 0 and running.send(5) == 5 and running.throw(ValueError) == 0
    with pytest.raises(StopIteration):
        next(running)
    attributes = _tool(passhat_capture, "accumulate")
    assert attributes["passhat.tool.yields"] == 3 and attributes["gen_ai.tool.call.result"] == "[0,5,0]"


def test_without_content_capture_the_count_is_recorded_not_the_items() -> None:
    with capture(capture_content=False) as spans:
        assert len(list(list_orders("ada@example.com", 5000))) == 5000
    attributes = _tool(spans, "list_orders")
    assert attributes["passhat.tool.yields"] == 5000 and attributes["passhat.tool.outcome"] == "ok"
    assert "gen_ai.tool.call.result" not in attributes


def test_many_items_are_capped_like_any_result() -> None:
    with capture(max_content_length=100) as spans:
        assert sum(1 for _ in list_orders("ada@example.com", 100_000)) == 100_000
    recorded = str(_tool(spans, "list_orders")["gen_ai.tool.call.result"])
    assert recorded.startswith('[{"order_id":"O-0","email":"') and recorded.endswith(" chars]")
    assert "…[truncated: more than " in recorded


def test_collect_tool_calls_gets_every_item() -> None:
    with passhat.collect_tool_calls() as calls:
        list(list_orders("ada@example.com", 2))
    [call] = calls
    assert call.name == "list_orders" and call.outcome == "ok"
    assert call.result == [
        {"order_id": "O-0", "email": "ada@example.com"},
        {"order_id": "O-1", "email": "ada@example.com"},
    ]


def test_an_async_generator_tool_is_traced_over_its_iteration(passhat_capture: Capture) -> None:
    async def agent() -> list[str]:
        async with passhat.ticket("T-2", task_type="search") as ticket:
            found = []
            async for hit in search("lamp", 3):
                assert passhat.current_ticket() is ticket and trace.get_current_span() is ticket.span
                found.append(hit)
            assert len(passhat_capture.named("execute_tool search")) == 1
            return found

    assert asyncio.run(agent()) == ["lamp-0", "lamp-1", "lamp-2"]
    attributes = _tool(passhat_capture, "search")
    assert attributes["passhat.tool.yields"] == 3
    assert json.loads(str(attributes["gen_ai.tool.call.result"])) == ["lamp-0", "lamp-1", "lamp-2"]
    tool, ticket = passhat_capture.spans
    assert tool.context.trace_id == ticket.context.trace_id


def test_an_async_generator_tools_error_and_early_close(passhat_capture: Capture) -> None:
    async def agent() -> None:
        with pytest.raises(OutOfStockError):
            async for _ in reserve_async(["a", "gone"]):
                pass
        hits = search("lamp", 10)
        assert await hits.__anext__() == "lamp-0"
        await hits.aclose()

    asyncio.run(agent())
    failed = _tool(passhat_capture, "reserve_async")
    assert failed["passhat.tool.outcome"] == "error" and failed["error.type"] == "OutOfStockError"
    closed = _tool(passhat_capture, "search")
    assert closed["passhat.tool.yields"] == 1 and closed["gen_ai.tool.call.result"] == '["lamp-0"]'


def test_a_generator_tool_still_looks_like_one_to_frameworks() -> None:
    """Frameworks inspect a tool to tell a streaming one: the decorated functions are still (async) generators."""
    assert inspect.isgeneratorfunction(list_orders) and inspect.isasyncgenfunction(search)
    assert not inspect.isgeneratorfunction(search) and not inspect.iscoroutinefunction(search)


def test_wrong_arguments_raise_at_the_first_item_as_the_tools_error(passhat_capture: Capture) -> None:
    """The wrapper is a generator function, so the call's TypeError comes when the first item is asked for."""
    rows = list_orders("ada@example.com")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="count"):
        next(rows)
    assert _tool(passhat_capture, "list_orders")["error.type"] == "TypeError"
