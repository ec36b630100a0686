"""Systems: a domain's backends, each with its own tables and tools, served together on one MCP server.

A tool is declared once, on the method that implements it, with its kind (`@tool("lookup")`); the system's
tool list, the domain's lookup and write sets and the server are all derived from those declarations. A tool
refuses by raising `ToolError(kind, message)` (the kind is one of its domain's error vocabulary); the server
turns it into an MCP error result `{"error": kind, "message": ...}`, so nothing else has to pass errors up.

Why one server with every system's tools, rather than one MCP server per system: the agent sees one tool list
in which each tool's description starts with its system (`[hris] ...`) and its `_meta` names it, and a trial
connects once. Measured with benchmarks/bench_tool_listing.py (18 systems of 5 tools, consulting's size, in
memory, on the shared 2-core machine under load): building, connecting and listing took a median 47 ms per trial
with one server and 332 ms with eighteen (seven times more, mostly the per-server MCP handshake), while the
listing the agent reads is the same size either way (32.6k JSON characters for 90 tools): separate servers cost
time and buy nothing the description prefix does not give. Tool names stay unique across the domain (checked
when the domain is built), so an agent never needs a server name to call one.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from passhat import ToolKind
from passhat.sandbox.domain._toolkit import fail, ok

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.tools import Tool
    from mcp_types import ListToolsResult
    from sqlalchemy import Connection, Engine, Select, Table

    from passhat.sandbox.domain._in_process import InProcessTools

# The MCP modules are imported where used: `_toolkit` is the module that names the missing extra when they
# are not installed, and it must be the first to try.

SYSTEM_META_KEY = "passhat/system"
"""The `_meta` key of a listed tool naming the system it belongs to."""

_TOOL_ATTRIBUTE = "__passhat_tool__"

Method = TypeVar("Method", bound=Callable[..., Any])


class ToolError(Exception):
    """A tool's refusal, the way a real backend refuses: `kind` from the domain's error vocabulary.

    Raise it from a tool; the server returns it to the agent as an MCP error result (never an exception).
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass(frozen=True)
class ToolDeclaration:
    """What `@tool` records on a method: the tool's kind and, optionally, a name other than the method's."""

    kind: ToolKind
    name: str | None = None


def tool(kind: ToolKind, *, name: str | None = None) -> Callable[[Method], Method]:
    """Declare a backend method as a tool of kind `lookup`, `write` or `other` (its docstring describes it)."""
    if kind not in ("lookup", "write", "other"):
        raise ValueError(f"a tool's kind is lookup, write or other, not {kind!r}")

    def declare(method: Method) -> Method:
        setattr(method, _TOOL_ATTRIBUTE, ToolDeclaration(kind, name))
        return method

    return declare


def declared_tools(backend: type) -> dict[str, tuple[str, ToolKind]]:
    """The tools a backend class declares: tool name -> (method name, kind), in definition order."""
    found: dict[str, tuple[str, ToolKind]] = {}
    for klass in reversed(backend.__mro__):
        for attribute, value in vars(klass).items():
            declaration = getattr(value, _TOOL_ATTRIBUTE, None)
            if isinstance(declaration, ToolDeclaration):
                found[declaration.name or attribute] = (attribute, declaration.kind)
    return found


class Session:
    """One trial's conversation state shared by every system (who was identified, who is asking).

    Systems read and write it through `backend.session`; a domain may subclass it for more state.
    """

    def __init__(self) -> None:
        self.identified: set[str] = set()
        self.requester: str | None = None


_LOOKUPS: dict[tuple[Table, tuple[str, ...], bool], Select[Any]] = {}


def _lookup(table: Table, columns: tuple[str, ...], ordered: bool) -> Select[Any]:
    """`SELECT * FROM table WHERE a = :a AND ...`, built once per (table, columns): building is not free."""
    key = (table, columns, ordered)
    statement = _LOOKUPS.get(key)
    if statement is None:
        from sqlalchemy import bindparam, select

        statement = select(table).where(*(table.c[name] == bindparam(name) for name in columns))
        if ordered:
            statement = statement.order_by(*table.primary_key.columns)
        statement = _LOOKUPS[key] = statement
    return statement


class SystemBackend:
    """Base of a system's backend: one trial's database connection and the shared session.

    `row(table, column=value, ...)` and `rows(...)` look rows up by column values, the lookup nearly every tool
    starts with.
    """

    def __init__(self, connection: Connection, session: Session) -> None:
        self.db = connection
        self.session = session

    def row(self, table: Table, **where: Any) -> dict[str, Any] | None:
        """The row of `table` whose columns have the given values (the first, if several do); None if none does."""
        found = self.db.execute(_lookup(table, tuple(where), False), where).mappings().first()
        return dict(found) if found is not None else None

    def rows(self, table: Table, **where: Any) -> list[dict[str, Any]]:
        """Every row of `table` whose columns have the given values (every row when none is given), in primary
        key order."""
        return [dict(found) for found in self.db.execute(_lookup(table, tuple(where), True), where).mappings()]


@dataclass(frozen=True)
class System:
    """One backend system of a domain: its tables and the backend class whose `@tool` methods are its tools."""

    name: str
    description: str
    tables: tuple[str, ...]
    backend: type[SystemBackend]

    @functools.cached_property
    def tools(self) -> dict[str, ToolKind]:
        """Tool name -> kind, as the backend class declares them."""
        return {name: kind for name, (_, kind) in declared_tools(self.backend).items()}


def _guarded(method: Callable[..., Any], *, described: bool = True) -> Callable[..., Any]:
    """The tool as the server calls it: data becomes a result, a ToolError an error result.

    `described` copies the method's signature onto the wrapper, which the prototype needs once (its argument
    model is parsed from it); a trial's copy of the prototype only calls it, so it skips the copying.
    """
    from mcp_types import CallToolResult

    async def call(**arguments: Any) -> CallToolResult:
        try:
            value = method(**arguments)
            if inspect.isawaitable(value):
                value = await value
        except ToolError as refusal:
            return fail(refusal.kind, refusal.message)
        return value if isinstance(value, CallToolResult) else ok(value)

    return functools.wraps(method)(call) if described else call


@dataclass
class SystemsServer:
    """Builds a fresh MCP server per trial from a domain's systems; tool prototypes are parsed once."""

    name: str
    instructions: str
    systems: Sequence[System]
    session_type: type[Session] = Session
    _prototypes: list[tuple[System, str, Tool]] | None = field(default=None, init=False, repr=False)
    _listing: ListToolsResult | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        seen: dict[str, str] = {}
        for system in self.systems:
            for tool_name in system.tools:
                if tool_name in seen:
                    raise ValueError(
                        f"tool {tool_name!r} is declared by systems {seen[tool_name]!r} and {system.name!r}: "
                        "tool names must be unique across a domain (prefix one with its system)"
                    )
                seen[tool_name] = system.name

    @property
    def tool_kinds(self) -> dict[str, ToolKind]:
        """Every tool of every system -> its kind."""
        return {name: kind for system in self.systems for name, kind in system.tools.items()}

    @property
    def tool_systems(self) -> dict[str, str]:
        """Every tool -> the name of the system it belongs to."""
        return {name: system.name for system in self.systems for name in system.tools}

    def _load(self, backends: Mapping[str, SystemBackend]) -> list[tuple[System, str, Tool]]:
        if self._prototypes is None:
            from mcp.server.mcpserver.tools import Tool

            prototypes = []
            for system in self.systems:
                for tool_name, (method, _) in declared_tools(system.backend).items():
                    bound = getattr(backends[system.name], method)
                    description = f"[{system.name}] {inspect.getdoc(bound) or ''}".strip()
                    prototype = Tool.from_function(
                        _guarded(bound),
                        name=tool_name,
                        description=description,
                        meta={SYSTEM_META_KEY: system.name},
                        structured_output=False,
                    )
                    prototypes.append((system, method, prototype))
            self._prototypes = prototypes
        return self._prototypes

    def build(self, engine: Engine) -> MCPServer:
        """A fresh server on `engine`'s database: one connection and one session shared by every system."""
        from mcp.server.mcpserver import MCPServer

        connection = engine.connect()
        session = self.session_type()
        backends = {system.name: system.backend(connection, session) for system in self.systems}
        tools = [
            prototype.model_copy(update={"fn": _guarded(getattr(backends[system.name], method), described=False)})
            for system, method, prototype in self._load(backends)
        ]
        return MCPServer(self.name, instructions=self.instructions, tools=tools, log_level="WARNING")

    def bind(self, engine: Engine) -> InProcessTools:
        """The tools on `engine`'s database, called in this process (no MCP server, no protocol): a trial's
        trusted path. One connection and one session shared by every system, as `build` gives its server."""
        from passhat.sandbox.domain._in_process import InProcessTools

        connection = engine.connect()
        session = self.session_type()
        backends = {system.name: system.backend(connection, session) for system in self.systems}
        tools = {
            prototype.name: (prototype, _guarded(getattr(backends[system.name], method), described=False))
            for system, method, prototype in self._load(backends)
        }
        return InProcessTools(tools, self._listed, connection.close)

    async def _listed(self) -> ListToolsResult:
        """The tool list an MCP client gets from `build`'s server, built once (from the parsed prototypes)."""
        if self._listing is None:
            from mcp.server.mcpserver import MCPServer
            from mcp_types import ListToolsResult

            assert self._prototypes is not None  # `bind` parsed them
            prototypes = [prototype for _, _, prototype in self._prototypes]
            server = MCPServer(self.name, instructions=self.instructions, tools=prototypes, log_level="WARNING")
            self._listing = ListToolsResult(tools=await server.list_tools())
        return self._listing
