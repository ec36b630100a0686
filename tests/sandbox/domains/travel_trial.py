"""One travel trial's backend for the travel tests: a database copy and its MCP server, a real in-memory client."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp import Client

from passhat.checks import CheckContext, Verdict
from passhat.sandbox import Sandbox, TrialDatabase


@asynccontextmanager
async def open_trial(travel: Sandbox) -> AsyncIterator[tuple[Client, TrialDatabase]]:
    """A fresh database copy and tool server, connected."""
    database = travel.memory_copy()
    try:
        async with Client(travel.domain.build_server(database.engine)) as client:
            yield client, database
    finally:
        database.close()


async def call(client: Client, name: str, **arguments: Any) -> tuple[bool, dict[str, Any]]:
    """A tool call: whether it succeeded, and its JSON payload (the error type and message when it failed)."""
    result = await client.call_tool(name, arguments)
    text = "".join(getattr(block, "text", "") for block in result.content)
    payload: dict[str, Any] = json.loads(text)
    return not result.is_error, payload


async def ok(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    """A tool call that must succeed."""
    success, payload = await call(client, name, **arguments)
    assert success, payload
    return payload


def grade(travel: Sandbox, database: TrialDatabase, check: Any, response: str = "") -> Verdict:
    """The check's verdict on what the trial's database holds now."""
    diff = database.diff(travel.initial, travel.domain.metadata, travel.rowids)
    verdict: Verdict = check(CheckContext(diff=diff, initial=travel.initial, final_response=response))
    return verdict
