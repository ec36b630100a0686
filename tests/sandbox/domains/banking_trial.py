"""A banking trial opened by hand for the tool and check tests: a fresh database copy, its server, a client."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp import Client

from passhat.checks import CheckContext, Verdict
from passhat.sandbox import Sandbox, TrialDatabase


@asynccontextmanager
async def open_trial(banking: Sandbox) -> AsyncIterator[tuple[Client, TrialDatabase]]:
    """A fresh database copy and tool server, connected (a context manager: anyio scopes stay in one task)."""
    database = banking.memory_copy()
    try:
        async with Client(banking.domain.build_server(database.engine)) as client:
            yield client, database
    finally:
        database.close()


async def call(client: Client, name: str, **arguments: Any) -> tuple[bool, dict[str, Any]]:
    """Call a tool: (succeeded, the JSON it returned)."""
    result = await client.call_tool(name, arguments)
    text = "".join(getattr(block, "text", "") for block in result.content)
    return (not result.is_error), json.loads(text)


async def must(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    """Call a tool that must succeed."""
    succeeded, payload = await call(client, name, **arguments)
    assert succeeded, payload
    return payload


async def verify(client: Client, intent: Any) -> None:
    """Both identity factors, as the scenario's caller."""
    found = await must(
        client, "find_customer_by_card", last_name=intent["last_name"], card_last_four=intent["card_last_four"]
    )
    await must(client, "verify_date_of_birth", customer_id=found["customer_id"], date_of_birth=intent["date_of_birth"])


def grade(banking: Sandbox, database: TrialDatabase, check: Any) -> Verdict:
    """Grade the trial database's changes with `check`."""
    diff = database.diff(banking.initial, banking.domain.metadata, banking.rowids)
    verdict: Verdict = check(CheckContext(diff=diff))
    return verdict
