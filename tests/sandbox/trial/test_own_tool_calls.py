"""An agent that queries its database directly: its own @passhat.tool calls are the trial's tool calls."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Column, Connection, Engine, Integer, MetaData, String, Table, insert, select

import passhat
from passhat.checks import updated
from passhat.sandbox import CustomerScript, Domain, Message, Sandbox, TaskType, Toolbox, TrialContext, run_trial

metadata = MetaData()
accounts = Table("accounts", metadata, Column("id", Integer, primary_key=True), Column("owner", String))


class AccountNotFoundError(Exception):
    error_type = "not_found"


@passhat.tool
def lookup_by_owner(engine: Engine, owner: str) -> int | None:
    with engine.connect() as connection:
        return connection.execute(select(accounts.c.id).where(accounts.c.owner == owner)).scalar()


@passhat.tool
def lookup_strict(engine: Engine, owner: str) -> int:
    raise AccountNotFoundError(f"no account of {owner}")


@passhat.tool
def rename(engine: Engine, account_id: int, owner: str) -> None:
    raise ValueError("renaming is switched off")


def seed(connection: Connection, seed: int = 0, size: str = "small") -> None:
    connection.execute(insert(accounts), [{"id": 1, "owner": "ada"}])


domain = Domain(
    name="accounts",
    description="one table, no MCP server",
    metadata=metadata,
    seed=seed,
    task_types={
        "rename": TaskType(
            name="rename",
            kind="write",
            description="rename an account",
            candidates=lambda connection: [{"id": 1, "owner": "ada"}],
            script=lambda intent: CustomerScript(goal="rename", opening="Rename my account please.", facts={}),
            check=lambda intent: updated("accounts", {"id": 1}, {"owner": "grace"}),
        )
    },
    lookup_tools=frozenset({"lookup_by_owner", "lookup_strict"}),
    write_tools=frozenset({"rename"}),
)


class DirectAgent:
    def __init__(self, context: TrialContext) -> None:
        pass

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        assert tools.engine is not None
        lookup_by_owner(tools.engine, "nobody")
        with contextlib.suppress(AccountNotFoundError):
            await asyncio.to_thread(lookup_strict, tools.engine, "nobody")
        account = lookup_by_owner(tools.engine, "ada")
        with contextlib.suppress(ValueError):
            rename(tools.engine, account, "grace")
        return Message("agent", "I could not rename it.", final=True)


def test_direct_calls_are_recorded_in_order_by_the_mcp_outcome_rule() -> None:
    with Sandbox(domain) as sandbox:
        scenario = sandbox.scenarios("rename", 1)[0]
        result = asyncio.run(run_trial(sandbox, scenario, 0, DirectAgent))
    calls: list[tuple[str, str, Any, bool]] = [
        (c.name, c.outcome, c.error_type, c.is_write) for c in result.record.tool_calls
    ]
    assert calls == [
        ("lookup_by_owner", "empty", None, False),
        ("lookup_strict", "empty", "not_found", False),  # a lookup's not_found is an empty lookup, as over MCP
        ("lookup_by_owner", "ok", None, False),
        ("rename", "error", "ValueError", True),
    ]
    assert result.record.tool_calls[0].arguments == {"owner": "nobody"}  # the engine is not an argument worth keeping
    # lookup_strict never got a result: the empty lookup comes first in the signatures' precedence.
    assert result.signature is not None and result.signature.label == "tool_usage.empty_lookup"


def _traced_trial(agent: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """One trial traced by a runtime of its own while the process's global runtime is a production one (as when
    the agent's module configured passhat): the spans each of them received."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporters = [InMemorySpanExporter(), InMemorySpanExporter()]
    runtimes = []
    for exporter, source in zip(exporters, ("sandbox", "production"), strict=True):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        runtimes.append(passhat.configure(tracer_provider=provider, source=source, send=False, make_global=False))
    previous = passhat._runtime.set_current(runtimes[1])
    try:
        with Sandbox(domain) as sandbox:
            scenario = sandbox.scenarios("rename", 1)[0]
            asyncio.run(run_trial(sandbox, scenario, 0, agent, runtime=runtimes[0]))
    finally:
        passhat._runtime.set_current(previous)
    return exporters[0].get_finished_spans(), exporters[1].get_finished_spans()


def test_direct_calls_are_in_the_trials_trace_not_the_global_runtimes() -> None:
    """A replay traces trials with a runtime of its own (never the process's global one, which may send production
    traffic or nothing): an agent's own @passhat.tool calls inside the trial are spans of the trial's trace."""
    spans, production = _traced_trial(DirectAgent)
    tools = [s for s in spans if s.attributes and s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    assert [s.attributes["gen_ai.tool.name"] for s in tools if s.attributes] == [
        "lookup_by_owner", "lookup_strict", "lookup_by_owner", "rename"
    ]  # fmt: skip
    ticket = next(s for s in spans if s.name.startswith("invoke_agent"))
    assert all(s.context.trace_id == ticket.context.trace_id for s in tools)
    assert production == ()


class TicketOpeningAgent:
    """An agent whose own code opens a passhat ticket per reply, as its production handler does."""

    def __init__(self, context: TrialContext) -> None:
        pass

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        assert tools.engine is not None
        with passhat.ticket("PROD-1", task_type="rename"):
            lookup_by_owner(tools.engine, "ada")
        return Message("agent", "Done.", final=True)


def test_a_ticket_the_agent_opens_inside_a_trial_is_part_of_the_trial_not_production() -> None:
    trial_spans, global_spans = _traced_trial(TicketOpeningAgent)
    assert global_spans == ()  # no production ticket from a replay
    inner = [s for s in trial_spans if s.attributes and s.attributes.get("passhat.ticket.id") == "PROD-1"]
    assert len(inner) == 1 and inner[0].attributes is not None
    assert inner[0].attributes["passhat.source"] == "sandbox"
