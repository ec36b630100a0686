"""A trial's conversation, the tools an agent gets, and the Agent and Customer protocols."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from passhat import ToolCall, ToolKind, ToolOutcome, outcome_of
from passhat.sandbox.domain import STANDARD_ERRORS, parse_error

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer
    from sqlalchemy import Engine

    from passhat.checks import ToolCallRecord
    from passhat.sandbox.domain import CustomerScript, Domain, Scenario, ToolClient


@dataclass(frozen=True)
class Message:
    """One turn of the conversation.

    Text is what a human would see. The structured fields let offline participants talk without parsing
    language: a customer's `facts` are the facts it revealed in this turn, an agent's `asks` name the facts
    it asks for (`"confirm"` asks for an explicit yes, `proposes` names the action it asks the yes for). A
    customer's `consent` records, as a fact, that this turn agrees to the action the agent proposed: the action's
    name, or `"*"` (`passhat.checks.ANY_ACTION`) for whatever the agent's turn before proposed. `final` marks an
    agent turn that acts, refuses or answers; `stop` ends the conversation from either side.
    """

    role: Literal["customer", "agent"]
    text: str
    facts: Mapping[str, Any] = field(default_factory=dict)
    asks: tuple[str, ...] = ()
    final: bool = False
    stop: bool = False
    proposes: str | None = None
    consent: str | None = None


@dataclass(frozen=True)
class ToolResult:
    """What a tool call returned, as the agent sees it."""

    name: str
    ok: bool
    data: Any
    text: str
    error_type: str | None = None
    error_message: str | None = None
    kind: ToolKind | None = None
    error_category: str | None = None
    """What the error means in the classifier's terms (`passhat.checks.ERROR_CATEGORIES`), from the domain's
    error vocabulary: `not_found` for a domain's `no_such_employee`, say."""

    @property
    def outcome(self) -> ToolOutcome:
        """How the call came out, by the one tool-outcome rule (the trace and the trial record both use it)."""
        if self.ok:
            return outcome_of(self.data, kind=self.kind)
        return outcome_of(error_type=self.error_category or self.error_type or "tool_error", kind=self.kind)


@dataclass(frozen=True)
class Usage:
    """Tokens used by a model-backed participant (0 for offline ones)."""

    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens)


class ToolTransportError(Exception):
    """The tool server could not be reached or failed: an infrastructure error, not the agent's."""


class AgentError(Exception):
    """The agent itself failed its turn, as its framework says: its model misbehaved past the framework's retries,
    hit a limit it sets (turns, a recursion limit, a usage limit), or a guardrail of the agent's stopped the run.
    The trial ends there (``agent_error``) and is graded on the state the agent left: the agent's failure, counted
    in every figure. Any other exception an agent raises stays a harness failure (``infra_error``): passhat cannot
    tell a bug of the agent from one of the sandbox's. The framework adapters raise it; an agent of your own may."""


_PLAIN_VALUES = (str, int, float, bool, type(None), list, tuple, dict)

ToolHook = Callable[[str, dict[str, Any], ToolResult, str | None, int], Awaitable[None]]
"""Told of every MCP call once it returned: (name, arguments, result, the model's call id, nanoseconds it took)."""


@dataclass(frozen=True)
class McpEndpoint:
    """A trial's tools over streamable HTTP: the URL and the bearer token every request must carry.

    Calls through it are the trial's calls (recorded and traced like any other); the token is the trial's own.
    """

    url: str
    token: str


EndpointOpener = Callable[["Toolbox"], Awaitable[McpEndpoint]]


class Toolbox:
    """The agent's view of one trial's backend.

    Its MCP tool server (`call`, `list_tools`, `client`; every call is recorded with its outcome) and its
    database `engine`, for agents that use their backend directly rather than over MCP.
    """

    def __init__(
        self,
        client: ToolClient | None,
        *,
        lookup_tools: frozenset[str],
        write_tools: frozenset[str],
        on_call: ToolHook | None = None,
        engine: Engine | None = None,
        errors: Mapping[str, str] = STANDARD_ERRORS,
        open_endpoint: EndpointOpener | None = None,
    ) -> None:
        self._client = client
        self._open_endpoint = open_endpoint
        self._endpoint: McpEndpoint | None = None
        self.engine = engine
        self._errors = errors

        self._lookup_tools = lookup_tools
        self._write_tools = write_tools
        self._on_call = on_call
        self.calls: list[ToolCallRecord] = []
        self.errors = 0
        self.turn: int | None = None
        """The conversation position of calls made now: the index of the agent turn being answered (the runner
        sets it before each agent turn)."""

    def kind_of(self, name: str) -> ToolKind | None:
        """A tool's kind as its domain declares it; None for a tool the domain classifies as neither."""
        if name in self._write_tools:
            return "write"
        return "lookup" if name in self._lookup_tools else None

    @property
    def client(self) -> ToolClient:
        """The trial's tools as an MCP client offers them (`call_tool`, `list_tools`), for agents that want them raw.

        A connected MCP client over the trial's transport; in process (``direct``, the default) an object with
        the same two calls, made without the protocol."""
        if self._client is None:
            raise ToolTransportError("this domain serves no MCP tools (Domain.build_server is None): use tools.engine")
        return self._client

    async def http_endpoint(self) -> McpEndpoint:
        """These tools over streamable HTTP with a bearer token of this trial's own (for agents in other processes).

        Opened on first use and closed with the trial; every call through it is recorded like `call`.
        """
        if self._endpoint is None:
            if self._open_endpoint is None:
                raise ToolTransportError("this trial serves no HTTP endpoint for its tools (run it with run_trial)")
            self._endpoint = await self._open_endpoint(self)
        return self._endpoint

    async def list_tools(self) -> list[dict[str, Any]]:
        """The server's tools as name, description and JSON-schema input (the shape LLM APIs take)."""
        if self._client is None:
            return []
        listed = await self._client.list_tools()
        return [
            {"name": tool.name, "description": tool.description or "", "input_schema": tool.input_schema}
            for tool in listed.tools
        ]

    async def call(self, name: str, arguments: Mapping[str, Any], *, call_id: str | None = None) -> ToolResult:
        """Call a tool; a tool error comes back as a ToolResult with ok=False, never as an exception.

        `call_id` is the model's id for this call (e.g. a `tool_use` id), kept on the trace.
        """
        from passhat.checks import ToolCallRecord

        args = dict(arguments)
        kind = self.kind_of(name)
        started = time.monotonic_ns()
        try:
            response = await self.client.call_tool(name, args)
        except Exception as exc:  # the transport itself failed
            raise ToolTransportError(f"tool server failed on {name}: {exc}") from exc
        text = "".join(getattr(block, "text", "") for block in response.content)
        if response.is_error:
            # Any type the tool names is kept (an undeclared one has no category: the contract test flags it).
            error_type, message = parse_error(text, None)
            if error_type is None:
                error_type = "invalid_argument"  # argument validation by the MCP layer, or an unknown tool
            result = ToolResult(name, False, None, text, error_type, message, kind, self._errors.get(error_type))
            self.errors += 1
        else:
            try:
                data = json.loads(text) if text else None
            except ValueError:
                data = text
            result = ToolResult(name, True, data, text, kind=kind)
        self.calls.append(
            ToolCallRecord(
                name=name,
                arguments=args,
                outcome=result.outcome,
                error_type=result.error_type,
                error_message=result.error_message,
                is_write=name in self._write_tools,
                turn=self.turn,
            )
        )
        if self._on_call is not None:
            await self._on_call(name, args, result, call_id, time.monotonic_ns() - started)
        return result

    def record_own_call(self, call: ToolCall) -> None:
        """Record a call of one of the agent's own ``@passhat.tool`` functions, by the rule MCP calls follow.

        The tool's kind is the domain's (`lookup_tools` / `write_tools`), else what the decorator says.
        """
        from passhat.checks import ToolCallRecord

        kind = self.kind_of(call.name) or call.kind
        failed = call.error_type is not None
        result = ToolResult(call.name, not failed, call.result, "", call.error_type, call.error_message, kind)
        if failed:
            self.errors += 1
        # Arguments such as the agent's database session say nothing about the call: only plain values are kept.
        plain = {key: value for key, value in call.arguments.items() if isinstance(value, _PLAIN_VALUES)}
        self.calls.append(
            ToolCallRecord(
                name=call.name,
                arguments=plain,
                outcome=result.outcome,
                error_type=call.error_type,
                error_message=call.error_message,
                is_write=kind == "write",
                turn=self.turn,
            )
        )


@dataclass(frozen=True)
class TrialContext:
    """What an agent or customer factory gets for one trial."""

    domain: Domain
    scenario: Scenario
    attempt: int
    run_id: str
    tracer: Tracer | None = None
    """The trial's tracer (under its ticket span), for participants that trace their own work (LLM calls)."""

    @property
    def policy(self) -> str:
        """The domain's written policy (the agent's system prompt)."""
        return self.domain.policy

    @property
    def script(self) -> CustomerScript:
        """The customer's script for this scenario."""
        return self.scenario.script


class Agent(Protocol):
    """A customer-service agent under test: given the conversation so far and the tools, its next turn."""

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message: ...


class Customer(Protocol):
    """A simulated customer: opens the conversation, then answers each agent turn."""

    async def opening(self) -> Message: ...

    async def respond(self, conversation: Sequence[Message]) -> Message: ...


AgentFactory = Callable[[TrialContext], Agent]
CustomerFactory = Callable[[TrialContext], Customer]


def usage_of(participant: object) -> Usage:
    """Tokens a participant reports through a `usage` attribute, or zero."""
    usage = getattr(participant, "usage", None)
    return usage if isinstance(usage, Usage) else Usage()
