"""Serving a domain's tools over a real MCP transport (stdio or streamable HTTP), and connecting to them.

`python -m passhat.sandbox --domain retail --database trial.sqlite --transport stdio` is what the trial
runner spawns for stdio trials; `passhat sandbox serve` runs the same code for any MCP client. Over HTTP the
tools can change the database, so every request must carry `Authorization: Bearer <token>`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hmac
import json
import os
import secrets
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, MutableMapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer

from passhat.sandbox.agents import McpEndpoint, Toolbox
from passhat.sandbox.domain import Domain, DomainError, ToolClient, load_domain
from passhat.sandbox.trial._database import TrialDatabase, build_database, sqlite_engine

Transport = Literal["direct", "memory", "stdio", "http"]
"""How a trial reaches its tools: ``direct`` calls them in this process without the MCP protocol (the trusted
path for agents in the trial's own process, and the default), ``memory`` over MCP in memory, ``stdio`` in a
``python -m passhat.sandbox`` subprocess, ``http`` over streamable HTTP on a loopback port."""
TRANSPORTS: tuple[str, ...] = ("direct", "memory", "stdio", "http")


def open_server(domain: Domain, database: Path, *, seed: int = 0, size: str = "small") -> MCPServer:
    """A tool server on the SQLite file `database`, building and seeding it first if it does not exist."""
    if domain.build_server is None:
        raise DomainError(f"domain {domain.name!r} serves no MCP tools (its Domain has no build_server)")
    if not database.exists():
        build_database(domain, database, seed=seed, size=size)
    return domain.build_server(sqlite_engine(database))


TOKEN_ENV = "PASSHAT_SANDBOX_TOKEN"
"""The environment variable a served domain's bearer token may come from."""

_Scope = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
_Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
_App = Callable[[_Scope, _Receive, _Send], Awaitable[None]]


def new_token() -> str:
    """A fresh bearer token for a served domain or one trial's HTTP tool server."""
    return secrets.token_urlsafe(24)


def require_bearer(app: _App, token: str) -> _App:
    """The ASGI app `app`, answering 401 to every HTTP request without `Authorization: Bearer <token>`."""
    if not token:
        raise DomainError("an HTTP tool server needs a non-empty bearer token")
    expected = f"Bearer {token}".encode()

    async def guarded(scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                body = json.dumps(
                    {"error": "unauthorized", "message": "send Authorization: Bearer <token> (printed at start)"}
                ).encode()
                headers = [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b'Bearer realm="passhat-sandbox"'),
                ]
                await send({"type": "http.response.start", "status": 401, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded


def serve(
    domain_name: str,
    database: Path,
    *,
    transport: Literal["stdio", "http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    seed: int = 0,
    size: str = "small",
    token: str | None = None,
) -> None:
    """Serve a domain until interrupted (blocking); over HTTP only to requests bearing `token`."""
    server = open_server(load_domain(domain_name), database, seed=seed, size=size)
    if transport == "stdio":
        server.run("stdio")
        return
    import uvicorn

    if not token:
        raise DomainError(f"serving {domain_name} over HTTP needs a bearer token (set {TOKEN_ENV} or pass one)")
    app = require_bearer(server.streamable_http_app(), token)
    uvicorn.run(app, host=host, port=port, log_level="warning", lifespan="on")


def toolbox_server(tools: Toolbox, name: str = "passhat-trial") -> Any:
    """An MCP server whose tools are the trial's: each call goes through `tools.call`, so it is recorded and traced.

    What an agent in another process (an HTTP agent, a graded session) connects to: the trial's own tool server
    stays in this process, behind the Toolbox, and this server only forwards.
    """
    import mcp_types as types
    from mcp.server.lowlevel import Server

    async def list_tools(context: Any, params: Any) -> types.ListToolsResult:
        listed = await tools.list_tools()
        return types.ListToolsResult(
            tools=[
                types.Tool(name=tool["name"], description=tool["description"], input_schema=tool["input_schema"])
                for tool in listed
            ]
        )

    async def call_tool(context: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        result = await tools.call(params.name, params.arguments or {})
        return types.CallToolResult(content=[types.TextContent(text=result.text)], is_error=not result.ok)

    return Server(name, on_list_tools=list_tools, on_call_tool=call_tool)


@asynccontextmanager
async def serve_toolbox(tools: Toolbox) -> AsyncIterator[McpEndpoint]:
    """The trial's tools over streamable HTTP on a free loopback port, with a fresh bearer token of their own."""
    token = new_token()
    async with _http_server(toolbox_server(tools), token) as url:
        yield McpEndpoint(url, token)


SHUTDOWN_GRACE_S = 2
"""How long a trial's HTTP tool server waits at the trial's end for its clients' open streams before closing them."""


def _embedded_server(config: Any) -> Any:
    """A uvicorn server that runs inside a process it does not own: it never takes the process's signals.

    `uvicorn.Server.serve` installs its own SIGINT/SIGTERM handlers and restores the previous ones when it
    stops. With one tool server per trial, many run at once in one event loop, so that goes wrong twice:

    - sse-starlette (the SSE responses of streamable HTTP) finds "the" uvicorn server through the SIGTERM
      handler and, once that server's ``should_exit`` is set, ends every SSE stream of the thread. The handler
      belongs to whichever trial's server started last, so one trial ending closed the open response streams of
      every other trial: tool calls in flight there never got an answer (an MCP client's "Request timed out").
    - Servers stop in another order than they start, so the restored handler can be a stopped server's, whose
      ``should_exit`` stays true: from then on every new SSE stream in the process ends at once.

    A trial's server stops when its trial ends (``should_exit``), never on a signal: the process's own
    handlers (a Ctrl-C of `passhat replay`, the graded-sessions server) stay where they are.
    """
    import uvicorn

    class EmbeddedServer(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

        async def shutdown(self, sockets: Any = None) -> None:
            # A connection the listener accepted just before it closed joins after uvicorn asked the open ones
            # to close, and an idle one would hold the trial's end: ask again until the server is down.
            async def keep_closing() -> None:
                while True:
                    for connection in list(self.server_state.connections):
                        connection.shutdown()
                    await asyncio.sleep(0.05)

            closing = asyncio.ensure_future(keep_closing())
            try:
                await super().shutdown(sockets)
            finally:
                closing.cancel()

    return EmbeddedServer(config)


@asynccontextmanager
async def _http_server(server: Any, token: str) -> AsyncIterator[str]:
    """Run `server` over streamable HTTP on a free loopback port in this process; yields its URL."""
    import uvicorn

    class EmbeddedServer(uvicorn.Server):
        """Leaves the process's signal handlers alone. A plain uvicorn.Server sets its own for SIGINT and SIGTERM
        and puts back what it found when it stops: with trials' servers starting and stopping out of order, a
        stopped server's handler would end up installed and the process would ignore SIGTERM."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    app = require_bearer(server.streamable_http_app(), token)
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", lifespan="on",
        # Streams a client left open (a session never closed) do not hold the trial's end for long.
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
    )  # fmt: skip
    http = _embedded_server(config)
    task = asyncio.ensure_future(http.serve())
    try:
        while not http.started:
            if task.done():
                task.result()
                raise DomainError("the HTTP tool server stopped before it started")
            await asyncio.sleep(0.005)
        port = http.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        http.should_exit = True
        await task


@asynccontextmanager
async def connect(domain: Domain, database: TrialDatabase, transport: Transport) -> AsyncIterator[ToolClient | None]:
    """A connected MCP client to a fresh tool server for one trial's database, over `transport`.

    None for a domain without MCP tools (its agents use the trial's database directly). ``direct`` gives the
    domain's tools called in this process (`Domain.in_process_tools`), the same calls without the protocol.
    """
    if domain.build_server is None:
        yield None
    elif transport == "direct":
        tools = domain.in_process_tools(database.engine)
        try:
            yield tools
        finally:
            if tools is not None:
                tools.close()
    elif transport == "memory":
        async with Client(domain.build_server(database.engine), read_timeout_seconds=60) as client:
            yield client
    elif transport == "stdio":
        if database.path is None:
            raise DomainError("a stdio tool server needs a file database (Sandbox.file_copy)")
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "passhat.sandbox", "--domain", domain.name, "--database", str(database.path)],
        )
        async with Client(params, read_timeout_seconds=60) as client:
            yield client
    elif transport == "http":
        import httpx2  # mcp's HTTP client library
        from mcp.client.streamable_http import streamable_http_client

        token = new_token()  # one per trial: nobody else on the machine can reach this trial's tools
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            _http_server(domain.build_server(database.engine), token) as url,
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            yield client
    else:
        raise DomainError(f"unknown transport {transport!r}; choose one of {', '.join(TRANSPORTS)}")


def main(argv: list[str] | None = None) -> None:
    """Command-line entry for the stdio subprocess."""
    parser = argparse.ArgumentParser(prog="python -m passhat.sandbox")
    parser.add_argument("--domain", required=True)
    parser.add_argument("--database", required=True, type=Path)
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--token", default=os.environ.get(TOKEN_ENV), help=f"bearer token for http (or {TOKEN_ENV})")
    args = parser.parse_args(argv)
    try:
        serve(args.domain, args.database, transport=args.transport, host=args.host, port=args.port, token=args.token)
    except DomainError as exc:
        sys.stderr.write(f"passhat: {exc}\n")
        raise SystemExit(2) from None
