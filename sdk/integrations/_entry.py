"""The ``instrument_*`` entry points: each imports its library only when called."""

from __future__ import annotations

from typing import Any

from passhat._runtime import Passhat
from passhat.integrations._handle import Instrumentation, require


def instrument_sqlalchemy(engine: Any, *, runtime: Passhat | None = None) -> Instrumentation:
    """Record ORM inserts, updates and deletes on ``engine`` as ``passhat.state_write`` events (table, primary
    key, changed columns before → after), the rows loaded inside a ticket as ``passhat.state_read``
    before-images, and Core INSERT/UPDATE/DELETE statements with their table and row count.

    Needs ``pip install 'passhat[sqlalchemy]'``. Returns a handle whose ``uninstrument()`` removes it.
    """
    require("sqlalchemy", "sqlalchemy")
    from passhat.integrations._sqlalchemy import instrument

    return instrument(engine, runtime)


def instrument_mcp(*, server: Any = None, runtime: Passhat | None = None) -> Instrumentation:
    """Trace MCP client ``call_tool`` as ``execute_tool`` spans and carry the trace context in ``_meta``.

    With ``server=`` (an mcp ``MCPServer`` or low-level ``Server``), that server also opens an
    ``execute_tool`` span per ``tools/call`` that continues the caller's trace. Needs ``pip install
    'passhat[mcp]'``. Returns a handle whose ``uninstrument()`` removes it.
    """
    require("mcp", "mcp")
    from passhat.integrations._mcp import instrument

    return instrument(server=server, runtime=runtime)


def instrument_anthropic(*, runtime: Passhat | None = None) -> Instrumentation:
    """Trace ``messages.create`` (sync, async, ``stream=True``) and ``messages.stream()`` of the ``anthropic``
    client as ``chat {model}`` spans with token usage, stop reason and the tool_use ids that later tool spans
    link to.

    Needs ``pip install 'passhat[anthropic]'``. Returns a handle whose ``uninstrument()`` removes it.
    """
    require("anthropic", "anthropic")
    from passhat.integrations._anthropic import instrument

    return instrument(runtime)
