"""A trial's tools called in this process: the tool bodies a domain's MCP server runs, without the protocol.

An agent living in the trial's own process (the ReferenceAgent, a factory's agent, a framework adapter) gets
nothing from JSON-RPC framing, per-trial sessions, the client's output-schema validation (which lists the tools
again on the first call of every trial) or MCP's tracing middleware: those cost about half of a trial's CPU. So
on the trusted in-process path a call goes straight to the tool, with what decides its outcome kept exactly as
the MCP server has it: the arguments travel as JSON values, the tool's argument model validates them (an
argument the model rejects, an unknown tool and a crashing tool come back as the same error results, word for
word), and the result is the tool's own `CallToolResult`. Agents outside the process (HTTP agents, graded
sessions, `passhat sandbox serve`) keep the real MCP wire; tests/sandbox/trial/test_in_process_tools.py shows
both give the same trials on every task type.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, ListToolsResult, TextContent
from pydantic import ValidationError
from pydantic_core import to_jsonable_python

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.tools import Tool


class ToolClient(Protocol):
    """What a trial's Toolbox calls tools through: a connected MCP client, or `InProcessTools`."""

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult: ...

    async def list_tools(self) -> ListToolsResult: ...


ToolBody = Callable[..., Awaitable[CallToolResult]]


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


class InProcessTools:
    """One trial's tools, called in process: ``tools`` maps a name to its parsed prototype and its trial body.

    The prototype (parsed once per process) holds the argument model; the body is the tool bound to this trial's
    backend. ``listing`` is the domain's tool list, built once. ``close`` releases the trial's connection.
    """

    def __init__(
        self,
        tools: Mapping[str, tuple[Tool, ToolBody]],
        listing: Callable[[], Awaitable[ListToolsResult]],
        close: Callable[[], None] = lambda: None,
    ) -> None:
        self._tools = tools
        self._listing = listing
        self._close = close

    async def list_tools(self) -> ListToolsResult:
        """The domain's tools, as its MCP server lists them."""
        return await self._listing()

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call a tool as the MCP server would, returning its result or the error result the server would send."""
        found = self._tools.get(name)
        if found is None:
            return _error(f"Unknown tool: {name}")
        prototype, body = found
        try:
            # Over the wire the arguments arrive as JSON values: a tuple as a list, a date as its ISO text.
            validated = prototype.fn_metadata.validate_arguments(to_jsonable_python(arguments))
        except ValidationError as exc:
            return _error(f"Error executing tool {name}: {exc}")
        except MCPError:
            raise
        except Exception:
            return _error(f"Error executing tool {name}")
        try:
            return await body(**validated)
        except MCPError:
            raise
        except (ToolError, ResourceError) as exc:
            return _error(f"Error executing tool {name}: {exc}")
        except Exception:
            return _error(f"Error executing tool {name}")

    def close(self) -> None:
        self._close()


async def call_on_server(server: MCPServer, name: str, arguments: dict[str, Any]) -> CallToolResult:
    """A call on an `MCPServer` object in this process (a domain that builds its server by hand), no protocol."""
    try:
        result = await server.call_tool(name, to_jsonable_python(arguments))
    except MCPError:
        raise
    except Exception as exc:
        return _error(str(exc) if isinstance(exc, ToolError | ResourceError) else f"Error executing tool {name}")
    if not isinstance(result, CallToolResult):
        raise MCPError(-32603, f"tool {name} asked for more input, which a sandbox trial cannot give")
    return result


class ServerTools:
    """`InProcessTools`' counterpart for a domain with a hand-built server: calls go to the server object."""

    def __init__(self, server: MCPServer) -> None:
        self._server = server

    async def list_tools(self) -> ListToolsResult:
        return ListToolsResult(tools=await self._server.list_tools())

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        return await call_on_server(self._server, name, arguments)

    def close(self) -> None:
        return None
