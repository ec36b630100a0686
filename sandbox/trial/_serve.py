"""Serving a domain's tools over a real MCP transport (stdio or streamable HTTP), and connecting to them.

`python -m passhat.sandbox --domain retail --database trial.sqlite --transport stdio` is what the trial
runner spawns for stdio trials; `passhat sandbox serve` runs the same code for any MCP client.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Literal

from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer

from passhat.sandbox.domain import Domain, DomainError, load_domain
from passhat.sandbox.trial._database import TrialDatabase, build_database, sqlite_engine

Transport = Literal["memory", "stdio", "http"]
TRANSPORTS: tuple[str, ...] = ("memory", "stdio", "http")


def open_server(domain: Domain, database: Path, *, seed: int = 0, size: str = "default") -> MCPServer:
    """A tool server on the SQLite file `database`, building and seeding it first if it does not exist."""
    if domain.build_server is None:
        raise DomainError(f"domain {domain.name!r} serves no MCP tools (its Domain has no build_server)")
    if not database.exists():
        build_database(domain, database, seed=seed, size=size)
    return domain.build_server(sqlite_engine(database))


def serve(
    domain_name: str,
    database: Path,
    *,
    transport: Literal["stdio", "http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    seed: int = 0,
    size: str = "default",
) -> None:
    """Serve a domain until interrupted (blocking)."""
    server = open_server(load_domain(domain_name), database, seed=seed, size=size)
    if transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=host, port=port)


@asynccontextmanager
async def _http_server(server: MCPServer) -> AsyncIterator[str]:
    """Run `server` over streamable HTTP on a free loopback port in this process; yields its URL."""
    import uvicorn

    config = uvicorn.Config(server.streamable_http_app(), host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    http = uvicorn.Server(config)
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
async def connect(domain: Domain, database: TrialDatabase, transport: Transport) -> AsyncIterator[Client | None]:
    """A connected MCP client to a fresh tool server for one trial's database, over `transport`.

    None for a domain without MCP tools (its agents use the trial's database directly).
    """
    if domain.build_server is None:
        yield None
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
        async with _http_server(domain.build_server(database.engine)) as url, Client(url) as client:
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
    args = parser.parse_args(argv)
    try:
        serve(args.domain, args.database, transport=args.transport, host=args.host, port=args.port)
    except DomainError as exc:
        sys.stderr.write(f"passhat: {exc}\n")
        raise SystemExit(2) from None
