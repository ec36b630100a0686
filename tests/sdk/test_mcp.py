"""instrument_mcp against a real mcp v2 server, in memory and over stdio, with trace context in ``_meta``."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import pathlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from opentelemetry.trace import SpanKind

import passhat
from passhat.testing import Capture, OtlpReceiver

SERVER_SCRIPT = pathlib.Path(__file__).with_name("mcp_shop_server.py")


def _load_server() -> Any:
    """The shop server module, loaded from its file (the same file runs as the stdio subprocess)."""
    spec = importlib.util.spec_from_file_location("passhat_test_mcp_shop_server", SERVER_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server


server = _load_server()


@pytest.fixture
def instrumented() -> Iterator[passhat.Instrumentation]:
    handle = passhat.instrument_mcp(server=server)
    yield handle
    handle.uninstrument()


async def test_in_memory_call_is_a_client_span_continued_by_the_server(
    instrumented: passhat.Instrumentation, passhat_capture: Capture
) -> None:
    async with passhat.ticket("T-1", task_type="refund"), Client(server) as client:
        result = await client.call_tool("find_order", {"order_id": "O-1"})
    assert not result.is_error
    server_span, client_span = passhat_capture.named("execute_tool find_order")
    ticket = passhat_capture.one("invoke_agent")
    assert client_span.kind is SpanKind.CLIENT and server_span.kind is SpanKind.SERVER
    assert client_span.parent is not None and client_span.parent.span_id == ticket.context.span_id
    assert server_span.context.trace_id == ticket.context.trace_id
    assert server_span.parent is not None and server_span.parent.span_id == client_span.context.span_id
    for span in (client_span, server_span):
        attributes = span.attributes or {}
        assert attributes["mcp.method.name"] == "tools/call"
        assert attributes["gen_ai.tool.name"] == "find_order"
        assert attributes["passhat.tool.outcome"] == "ok"
    assert '"O-1"' in str((client_span.attributes or {})["gen_ai.tool.call.arguments"])


async def test_an_is_error_result_is_an_error_outcome(
    instrumented: passhat.Instrumentation, passhat_capture: Capture
) -> None:
    async with Client(server) as client:
        result = await client.call_tool("find_order", {"order_id": "O-404"})
    assert result.is_error
    for span in passhat_capture.named("execute_tool find_order"):
        assert (span.attributes or {})["passhat.tool.outcome"] == "error"
        assert (span.attributes or {})["error.type"] == "tool_error"


async def test_an_empty_result_is_an_empty_outcome(
    instrumented: passhat.Instrumentation, passhat_capture: Capture
) -> None:
    async with Client(server) as client:
        await client.call_tool("search_orders", {"customer": "ada"})
    outcomes = {
        (s.attributes or {})["passhat.tool.outcome"] for s in passhat_capture.named("execute_tool search_orders")
    }
    assert outcomes == {"empty"}


async def test_the_trace_context_travels_in_meta(
    instrumented: passhat.Instrumentation, passhat_capture: Capture
) -> None:
    seen: list[dict[str, object]] = []

    async def spy(ctx: object, call_next: object) -> object:
        if getattr(ctx, "method", None) == "tools/call":
            seen.append(dict(getattr(ctx, "meta", None) or {}))
        return await call_next(ctx)  # type: ignore[operator]

    server.middleware.append(spy)
    try:
        async with passhat.ticket("T-2", task_type="refund") as t, Client(server) as client:
            await client.call_tool("find_order", {"order_id": "O-1"}, meta={"tenant": "acme"})
    finally:
        server.middleware.remove(spy)
    (meta,) = seen
    assert meta["tenant"] == "acme"
    version, trace_id, _span_id, _flags = str(meta["traceparent"]).split("-")
    assert version == "00" and trace_id == t.trace_id


async def test_uninstrument_restores_the_client(passhat_capture: Capture) -> None:
    passhat.instrument_mcp().uninstrument()
    async with Client(server) as client:
        await client.call_tool("find_order", {"order_id": "O-1"})
    assert passhat_capture.spans == []


@pytest.mark.slow
async def test_over_stdio_the_server_process_continues_the_callers_trace(
    instrumented: passhat.Instrumentation, passhat_capture: Capture, receiver: OtlpReceiver
) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(SERVER_SCRIPT)],
        env={
            "PASSHAT_ENDPOINT": receiver.url,
            "PASSHAT_CAPTURE_CONTENT": "true",
            "PATH": os.environ["PATH"],
            "PASSHAT_PSEUDONYM_KEY_FILE": os.environ["PASSHAT_PSEUDONYM_KEY_FILE"],
        },
    )
    async with passhat.ticket("T-3", task_type="refund") as t, Client(params) as client:
        result = await client.call_tool("find_order", {"order_id": "O-1"})
    assert not result.is_error
    (client_span,) = [s for s in passhat_capture.named("execute_tool find_order") if s.kind is SpanKind.CLIENT]
    (remote,) = [s for s in receiver.wait_for_spans(1, timeout=20) if s.name == "execute_tool find_order"]
    assert remote.trace_id == t.trace_id
    assert remote.parent_span_id == format(client_span.context.span_id, "016x")
    assert remote.resource["service.name"] == "shop-tools"
    assert remote.attributes["passhat.tool.outcome"] == "ok"


async def test_several_handles_share_the_client_patch_until_the_last_is_removed(
    passhat_capture: Capture,
) -> None:
    first = passhat.instrument_mcp()
    second = passhat.instrument_mcp(server=server)
    first.uninstrument()
    async with Client(server) as client:
        await client.call_tool("find_order", {"order_id": "O-1"})
    assert len(passhat_capture.named("execute_tool find_order")) == 2  # client and server side
    second.uninstrument()
    passhat_capture.clear()
    async with Client(server) as client:
        await client.call_tool("find_order", {"order_id": "O-1"})
    assert passhat_capture.spans == []


def test_a_server_that_is_not_an_mcp_server_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="server= must be an mcp MCPServer or Server"):
        passhat.instrument_mcp(server=object())


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
async def test_over_streamable_http_the_server_process_continues_the_callers_trace(
    instrumented: passhat.Instrumentation, passhat_capture: Capture, receiver: OtlpReceiver
) -> None:
    port = _free_port()
    env = dict(os.environ, PASSHAT_ENDPOINT=receiver.url)
    process = subprocess.Popen(
        [sys.executable, str(SERVER_SCRIPT), "--http", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the MCP HTTP server did not start"
                await asyncio.sleep(0.1)
        async with passhat.ticket("T-4", task_type="refund") as t, Client(f"http://127.0.0.1:{port}/mcp") as client:
            result = await client.call_tool("find_order", {"order_id": "O-1"})
        assert not result.is_error
        (client_span,) = passhat_capture.named("execute_tool find_order")
        (remote,) = [s for s in receiver.wait_for_spans(1, timeout=20) if s.name == "execute_tool find_order"]
        assert remote.trace_id == t.trace_id
        assert remote.parent_span_id == format(client_span.context.span_id, "016x")
        assert remote.kind == 2  # SPAN_KIND_SERVER on the wire
    finally:
        process.terminate()
        process.wait(timeout=10)
