"""Trials' own MCP endpoints over streamable HTTP: many run at once in one process and never disturb each other."""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import Mapping
from typing import Any

import httpx2

from passhat.sandbox.agents import McpEndpoint, ToolResult
from passhat.sandbox.trial._serve import serve_toolbox


class HeldTools:
    """A trial's tools whose one tool answers only once the test lets it (a call held in flight)."""

    def __init__(self) -> None:
        self.called = asyncio.Event()
        self.release = asyncio.Event()

    async def list_tools(self) -> list[dict[str, Any]]:
        schema = {"type": "object", "properties": {"order_id": {"type": "string"}}}
        return [{"name": "get_order", "description": "Read an order.", "input_schema": schema}]

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        self.called.set()
        await self.release.wait()
        return ToolResult(name, True, {"order_id": arguments["order_id"]}, '{"order_id": "#W1"}', kind="lookup")


async def _call(endpoint: McpEndpoint) -> str:
    """One tool call as an MCP client that waits for the answer on its request's own response stream.

    The JSON-RPC exchange of streamable HTTP, written out: a client that does not reconnect to find a lost
    answer elsewhere (the official TypeScript SDK's) sees exactly what the server sent on each POST.
    """
    headers = {
        "Authorization": f"Bearer {endpoint.token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    version = "2025-06-18"
    hello = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(10, read=30)) as http:
        opened = await http.post(
            endpoint.url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}
        )
        assert opened.status_code == 200, opened.text
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": version}
        ready = await http.post(
            endpoint.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session
        )
        assert ready.status_code == 202, ready.text
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "get_order", "arguments": {"order_id": "#W1"}},
        }
        async with http.stream("POST", endpoint.url, json=call, headers=session) as response:
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    message = json.loads(line.removeprefix("data:"))
                    if message.get("id") == 1:
                        return "".join(block.get("text", "") for block in message["result"]["content"])
    return "the response stream ended without an answer"


async def test_a_call_in_flight_is_answered_while_other_trials_endpoints_close_in_any_order() -> None:
    held = HeldTools()
    async with serve_toolbox(held) as endpoint:  # type: ignore[arg-type]
        first, second = serve_toolbox(HeldTools()), serve_toolbox(HeldTools())  # type: ignore[arg-type]
        await first.__aenter__()
        await second.__aenter__()
        call = asyncio.ensure_future(_call(endpoint))
        await asyncio.wait_for(held.called.wait(), 10)
        # Trials end in another order than they started: the first one's endpoint closes before the second's.
        await first.__aexit__(None, None, None)
        await second.__aexit__(None, None, None)
        await asyncio.sleep(1.2)  # longer than a shutdown watcher's poll
        held.release.set()
        assert await asyncio.wait_for(call, 10) == '{"order_id": "#W1"}'


async def test_a_trials_endpoint_leaves_the_processs_signal_handlers_alone() -> None:
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    tools = HeldTools()
    tools.release.set()
    async with serve_toolbox(tools) as endpoint:  # type: ignore[arg-type]
        assert {sig: signal.getsignal(sig) for sig in before} == before
        assert await _call(endpoint) == '{"order_id": "#W1"}'
    assert {sig: signal.getsignal(sig) for sig in before} == before
