"""Building blocks for a domain's MCP tools: results, typed errors, and a fast per-trial server factory."""

from __future__ import annotations

import ast
import json
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from passhat.checks import ERROR_CATEGORIES

try:
    import sqlalchemy  # noqa: F401  (the trial databases)
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.tools import Tool
    from mcp_types import CallToolResult, TextContent
except ModuleNotFoundError as exc:  # the first sandbox module to load: name the extra once, here
    raise ModuleNotFoundError(
        f"passhat.sandbox needs {exc.name}, which is not installed: pip install 'passhat[sandbox]'", name=exc.name
    ) from None

STANDARD_ERRORS: Mapping[str, str] = {category: category for category in ERROR_CATEGORIES}
"""The error vocabulary a domain gets unless it declares its own: each classifier category under its own name
(`not_found`, `precondition_failed`, `not_allowed`, `conflict`, `approval_required`, `permission_denied`,
`insufficient_funds`, `invalid_argument`)."""

TOOL_ERROR_TYPES: tuple[str, ...] = tuple(STANDARD_ERRORS)


_BINARY: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    raise ValueError("only numbers, + - * / and parentheses are allowed")


def evaluate_arithmetic(expression: str) -> float:
    """The value of an arithmetic expression (numbers, + - * / and parentheses): every domain's calculator.

    Raises ValueError, SyntaxError or ZeroDivisionError for anything else, including a result too large to be a
    finite number (JSON has no Infinity); a tool turns those into an error.
    """
    value = _evaluate(ast.parse(expression, mode="eval"))
    if not math.isfinite(value):
        raise ValueError("the result is too large to be a finite number")
    return value


def ok(data: Any) -> CallToolResult:
    """A successful tool result: the data as JSON text, and as structured content when it is an object.

    Non-finite floats are refused (ValueError): Infinity and NaN are not JSON, and an agent's client may choke.
    """
    text = json.dumps(data, sort_keys=True, default=str, allow_nan=False)
    structured = data if isinstance(data, dict) else {"result": data}
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def fail(error_type: str, message: str) -> CallToolResult:
    """A tool error the agent must handle (returned, never raised): `{"error": type, "message": ...}`.

    `error_type` is one of the domain's error vocabulary (`Domain.errors`); raising `ToolError` from a tool
    declared with `@tool` does the same.
    """
    text = json.dumps({"error": error_type, "message": message})
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def parse_error(text: str, vocabulary: Mapping[str, str] | None = STANDARD_ERRORS) -> tuple[str | None, str]:
    """Read an error result's type and message; a type outside `vocabulary` (the domain's error types), or an
    error not produced by `fail` / `ToolError`, gets type None. With `vocabulary=None` any type is read."""
    try:
        payload = json.loads(text)
    except ValueError:
        return None, text
    if isinstance(payload, dict) and isinstance(payload.get("error"), str):
        error_type = payload["error"]
        known = vocabulary is None or error_type in vocabulary
        return (error_type if known else None), str(payload.get("message", ""))
    return None, text


class ServerFactory:
    """Builds one `MCPServer` per trial from tool prototypes parsed once.

    Parsing a tool's signature into its argument model costs milliseconds; a trial's server only needs the
    same tools bound to a different backend object, so each prototype is copied with the new bound method.
    """

    def __init__(self, name: str, instructions: str, backend_type: type, tool_names: Sequence[str]) -> None:
        self._name = name
        self._instructions = instructions
        self._tool_names = tuple(tool_names)
        self._prototypes: list[Tool] | None = None
        self._backend_type = backend_type

    def _load_prototypes(self, backend: object) -> list[Tool]:
        if self._prototypes is None:
            self._prototypes = [
                Tool.from_function(getattr(backend, tool_name), name=tool_name) for tool_name in self._tool_names
            ]
        return self._prototypes

    def build(self, backend: object) -> MCPServer:
        """A fresh server whose tools call the methods of `backend` (one trial's state and database)."""
        if not isinstance(backend, self._backend_type):
            raise TypeError(f"expected a {self._backend_type.__name__}, got {type(backend).__name__}")
        bound: list[Tool] = []
        for prototype in self._load_prototypes(backend):
            method: Callable[..., Any] = getattr(backend, prototype.name)
            bound.append(prototype.model_copy(update={"fn": method}))
        return MCPServer(self._name, instructions=self._instructions, tools=bound, log_level="WARNING")
