"""A small MCP server (mcp v2 MCPServer) instrumented by passhat, for the MCP tests in memory and on stdio.

Run as a script it serves over stdio (or streamable HTTP with ``--http PORT``) and exports its spans to
``PASSHAT_ENDPOINT``.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

ORDERS = {"O-1": {"id": "O-1", "status": "delivered", "total": 42.5}}

server = MCPServer("shop")


@server.tool()
def find_order(order_id: str) -> dict[str, Any]:
    """Look up one order by id."""
    if order_id not in ORDERS:
        raise ToolError(f"order {order_id} not found")
    return ORDERS[order_id]


@server.tool()
def search_orders(customer: str) -> list[str]:
    """Order ids of a customer (none in this tiny shop)."""
    return []


if __name__ == "__main__":
    import sys

    import passhat

    passhat.configure(service_name="shop-tools", export_interval=0.05)
    passhat.instrument_mcp(server=server)
    if len(sys.argv) == 3 and sys.argv[1] == "--http":  # streamable HTTP on 127.0.0.1:<port>/mcp
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
