"""Monitoring never breaks the agent: with content capture on, a tool's arguments and results that cannot be
copied, pickled or turned into JSON (a framework's context, tasks, modules, clients, locks, cycles) are
recorded by their type, and the tool runs and returns as it would without passhat."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
import threading
from typing import Any

import httpx
from pydantic_ai import Agent, RunContext
from pydantic_ai.models.test import TestModel

import passhat
from passhat.testing import Capture


@dataclasses.dataclass
class HoldsATask:
    """A dataclass whose deep copy fails (a pydantic-ai `RunContext` is one: it holds tasks and clients)."""

    task: Any
    lock: Any


class LoudRepr:
    def __repr__(self) -> str:
        raise RuntimeError("repr is not for you")


class BrokenDump:
    def model_dump(self, **kwargs: Any) -> Any:
        raise ValueError("cannot dump")


def _hostile(task: Any) -> dict[str, Any]:
    cycle: dict[str, Any] = {"name": "loop"}
    cycle["self"] = cycle
    return {
        "context": HoldsATask(task, threading.Lock()),
        "task": task,
        "module": sys,
        "client": httpx.Client(),
        "lock": threading.Lock(),
        "loud": LoudRepr(),
        "broken": BrokenDump(),
        "cycle": cycle,
        "tuple_keys": {(1, 2): "a"},
        "email": "ada@example.org",
    }


def _arguments(span: Any) -> dict[str, Any]:
    recorded: dict[str, Any] = json.loads(str(span.attributes["gen_ai.tool.call.arguments"]))
    return recorded


def _check_recorded(span: Any) -> None:
    recorded = _arguments(span)
    assert recorded["context"] == "<tests.sdk.test_tool_hostile_arguments.HoldsATask>"
    assert recorded["task"] == "<_asyncio.Task>"
    assert recorded["module"] == "<builtins.module>"
    assert recorded["client"] == "<httpx.Client>"
    assert recorded["loud"] == "<tests.sdk.test_tool_hostile_arguments.LoudRepr>"
    assert recorded["broken"] == "<tests.sdk.test_tool_hostile_arguments.BrokenDump>"
    assert recorded["cycle"]["name"] == "loop" and "<builtins.dict>" in json.dumps(recorded["cycle"])  # cut off
    assert "ada@example.org" not in json.dumps(recorded)  # the plain values beside them are still redacted
    assert "@example.com" in recorded["email"]
    assert span.attributes["passhat.tool.outcome"] == "ok"


def test_a_sync_tool_with_hostile_arguments_runs_and_records_them_by_type(passhat_capture: Capture) -> None:
    @passhat.tool
    def handle(
        context: Any,
        task: Any,
        module: Any,
        client: Any,
        lock: Any,
        loud: Any,
        broken: Any,
        cycle: Any,
        tuple_keys: Any,
        email: str,
    ) -> Any:
        return {"handled": email, "module": module, "lock": lock}

    async def main() -> Any:
        task = asyncio.get_running_loop().create_task(asyncio.sleep(0))
        result = handle(**_hostile(task))
        await task
        return result

    result = asyncio.run(main())
    assert result["handled"] == "ada@example.org" and result["module"] is sys  # the tool's own values, untouched
    span = passhat_capture.one("execute_tool handle")
    _check_recorded(span)
    recorded_result = json.loads(str(span.attributes["gen_ai.tool.call.result"]))  # type: ignore[index]
    assert recorded_result["module"] == "<builtins.module>" and recorded_result["lock"] == "<_thread.lock>"


async def test_an_async_tool_with_hostile_arguments_runs_and_records_them_by_type(passhat_capture: Capture) -> None:
    @passhat.tool
    async def handle(**arguments: Any) -> Any:
        await asyncio.sleep(0)
        return arguments["task"]  # a result that cannot be recorded either

    task = asyncio.get_running_loop().create_task(asyncio.sleep(0))
    with passhat.ticket("T-HOSTILE", task_type="support"):
        assert await handle(**_hostile(task)) is task
    await task
    span = passhat_capture.one("execute_tool handle")
    recorded = _arguments(span)
    _check_recorded_kwargs(recorded["arguments"])  # keyword arguments, as the signature binds them
    assert json.loads(str(span.attributes["gen_ai.tool.call.result"])) == "<_asyncio.Task>"  # type: ignore[index]


def _check_recorded_kwargs(recorded: dict[str, Any]) -> None:
    assert recorded["task"] == "<_asyncio.Task>"
    assert recorded["module"] == "<builtins.module>"
    assert recorded["context"] == "<tests.sdk.test_tool_hostile_arguments.HoldsATask>"
    assert "ada@example.org" not in json.dumps(recorded)


async def test_a_pydantic_ai_tool_taking_run_context_runs_with_content_capture_on(passhat_capture: Capture) -> None:
    agent = Agent(TestModel())

    @agent.tool
    @passhat.tool
    async def lookup_customer(ctx: RunContext[Any], email: str) -> str:
        """Find a customer by email."""
        return f"customer {email} found (step {ctx.run_step})"

    result = await agent.run("Find ada@example.org")
    assert "found" in result.output
    span = passhat_capture.one("execute_tool lookup_customer")
    recorded = _arguments(span)
    assert recorded["ctx"] == f"<{RunContext.__module__}.{RunContext.__qualname__}>"
    assert span.attributes["passhat.tool.outcome"] == "ok"  # type: ignore[index]
