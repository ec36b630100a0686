"""Benchmark: what listing a many-system domain's tools costs, one server for all systems vs one per system.

Builds a domain-shaped set of systems (default 18 systems of 5 tools, consulting's size) and measures, per trial,
building the server(s), connecting an in-memory MCP client to each and listing the tools, either with every
system's tools on one server (what passhat does) or with one server per system. Also reports the size of the
listing an agent receives (JSON characters, a proxy for prompt tokens) in both layouts.

Run: .venv/bin/python benchmarks/bench_tool_listing.py [--systems 18] [--tools 5] [--repeats 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from contextlib import AsyncExitStack
from typing import Any

from mcp import Client
from sqlalchemy import create_engine

from passhat.sandbox import System, SystemBackend, tool
from passhat.sandbox.domain import SystemsServer


def _system(index: int, tools: int) -> System:
    """A system whose tools take two string arguments and return a row, like a real lookup."""
    namespace: dict[str, Any] = {}
    for number in range(tools):

        async def method(self: SystemBackend, record_id: str, reason: str = "") -> dict[str, str]:
            return {"record_id": record_id}

        method.__doc__ = f"Look up a record of system {index} (tool {number}) by its id."
        namespace[f"sys{index}_tool{number}"] = tool("lookup")(method)
    backend = type(f"System{index}", (SystemBackend,), namespace)
    return System(f"sys{index}", f"System {index}.", (), backend)


async def _list(servers: list[SystemsServer], engine: Any) -> int:
    async with AsyncExitStack() as stack:
        size = 0
        for server in servers:
            client = await stack.enter_async_context(Client(server.build(engine)))
            listed = await client.list_tools()
            size += len(json.dumps([t.model_dump(mode="json", exclude_none=True) for t in listed.tools]))
        return size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--systems", type=int, default=18)
    parser.add_argument("--tools", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    systems = [_system(i, args.tools) for i in range(args.systems)]
    engine = create_engine("sqlite://")
    layouts = {
        "one server, every system": [SystemsServer("all", "", systems)],
        "one server per system": [SystemsServer(s.name, "", [s]) for s in systems],
    }
    for name, servers in layouts.items():
        size = asyncio.run(_list(servers, engine))  # warm-up: prototypes parsed once
        times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            asyncio.run(_list(servers, engine))
            times.append(time.perf_counter() - started)
        print(
            f"{name:28s} {len(servers):3d} server(s)  median {1000 * statistics.median(times):6.1f} ms per trial"
            f"  listing {size} JSON characters"
        )


if __name__ == "__main__":
    main()
