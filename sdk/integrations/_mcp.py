"""``instrument_mcp()``: MCP tool calls as ``execute_tool`` spans, the trace context carried in ``_meta``."""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Mapping
from typing import Any

from mcp.client.session import ClientSession
from mcp_types import CallToolResult
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from passhat import semconv
from passhat._content import to_json
from passhat._outcome import ToolOutcome, outcome_of
from passhat._runtime import Passhat
from passhat._ticket import active_runtime, current_ticket, error_type_of, record_exception
from passhat.integrations._handle import Instrumentation

_PATCHED = "__passhat_original__"
_TOOL_ERROR = "tool_error"  # the error.type of an MCP result with isError: MCP gives no finer type


def result_outcome(result: Any) -> tuple[ToolOutcome, str | None]:
    """(outcome, error.type) of a tool result by the one rule: ``error`` if ``isError``, ``empty`` if it carries
    nothing (no content, blank text, or an empty value).

    The client sees a ``CallToolResult``; server middleware sees the same result as its wire dict. A tool's
    kind is not known here, so the rule's unknown-kind case applies.
    """
    if isinstance(result, CallToolResult):
        is_error, structured = result.is_error, result.structured_content
        texts: list[Any] = [getattr(block, "text", None) for block in result.content]
    elif isinstance(result, Mapping):
        is_error, structured = result.get("isError") is True, result.get("structuredContent")
        texts = [block.get("text") if isinstance(block, Mapping) else None for block in result.get("content") or ()]
    else:
        return outcome_of(result), None
    if is_error:
        return outcome_of(error_type=_TOOL_ERROR), _TOOL_ERROR
    if isinstance(structured, Mapping):
        # MCPServer wraps a non-object return value as {"result": value}.
        return outcome_of(structured.get("result") if set(structured) == {"result"} else structured), None
    if all(isinstance(text, str) and outcome_of(_decoded(text)) == "empty" for text in texts):
        return outcome_of(None), None  # no content at all, or only blank or empty-valued text
    return outcome_of(texts), None


def _decoded(text: str) -> Any:
    """A text block's value: its JSON when it is JSON, else the text itself (stripped)."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except ValueError:
        return stripped


def _result_json(result: Any) -> Any:
    if isinstance(result, CallToolResult):
        if result.structured_content is not None:
            return result.structured_content
        return [getattr(block, "text", None) or block.model_dump(mode="json") for block in result.content]
    return result


def _start(runtime: Passhat, name: str, kind: SpanKind, parent: Any = None) -> trace.Span:
    attributes: dict[str, Any] = {
        semconv.OPERATION_NAME: semconv.OP_EXECUTE_TOOL,
        semconv.TOOL_NAME: name,
        semconv.TOOL_TYPE: "function",
        semconv.MCP_METHOD_NAME: "tools/call",
    }
    if kind is SpanKind.CLIENT:
        ticket = current_ticket()
        call_id = ticket.claim_tool_call(name) if ticket is not None else None
        if call_id is not None:
            attributes[semconv.TOOL_CALL_ID] = call_id
    return runtime.tracer.start_span(
        f"{semconv.OP_EXECUTE_TOOL} {name}",
        context=parent,
        kind=kind,
        attributes=attributes,
        start_time=runtime.now(),
    )


def _finish(runtime: Passhat, span: trace.Span, result: Any) -> None:
    outcome, error_type = result_outcome(result)
    span.set_attribute(semconv.TOOL_OUTCOME, outcome)
    if error_type is not None:
        span.set_attribute(semconv.ERROR_TYPE, error_type)
        span.set_status(Status(StatusCode.ERROR))
    if runtime.capture_content:
        span.set_attribute(
            semconv.TOOL_CALL_RESULT,
            to_json(_result_json(result), runtime.redactor, runtime.max_content_length),
        )
    span.end(end_time=runtime.now())


_client_lock = threading.Lock()
_client_users = 0  # handles sharing the one client patch; the last one to go removes it


def _patch_client(runtime: Passhat | None) -> Instrumentation:
    global _client_users
    with _client_lock:
        _client_users += 1
        if not hasattr(ClientSession.call_tool, _PATCHED):
            _install_client_patch(runtime)

    def undo() -> None:
        global _client_users
        with _client_lock:
            _client_users -= 1
            patched = ClientSession.call_tool
            if _client_users == 0 and hasattr(patched, _PATCHED):
                ClientSession.call_tool = getattr(patched, _PATCHED)  # type: ignore[method-assign]

    return Instrumentation("mcp", undo)


def _install_client_patch(runtime: Passhat | None) -> None:
    original = ClientSession.call_tool

    @functools.wraps(original)
    async def call_tool(
        self: ClientSession, name: str, arguments: dict[str, Any] | None = None, *args: Any, **kwargs: Any
    ) -> Any:
        active = runtime or active_runtime()
        span = _start(active, name, SpanKind.CLIENT)
        if active.capture_content and arguments is not None:
            span.set_attribute(
                semconv.TOOL_CALL_ARGUMENTS, to_json(arguments, active.redactor, active.max_content_length)
            )
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            meta = dict(kwargs.get("meta") or {})
            propagate.inject(meta)  # W3C traceparent/tracestate, so the server continues this trace
            kwargs["meta"] = meta
            result = await original(self, name, arguments, *args, **kwargs)
        except BaseException as exc:
            record_exception(active, span, exc)
            span.set_attribute(semconv.TOOL_OUTCOME, outcome_of(error_type=error_type_of(exc)))
            span.end(end_time=active.now())
            raise
        finally:
            otel_context.detach(token)
        _finish(active, span, result)
        return result

    setattr(call_tool, _PATCHED, original)
    ClientSession.call_tool = call_tool  # type: ignore[method-assign]


def _parent_context(meta: Mapping[str, Any]) -> Any:
    """The caller's context from ``_meta``, unless the current span (mcp's own) already continues it."""
    if "traceparent" not in meta:
        return None
    extracted = propagate.extract(meta)
    remote = trace.get_current_span(extracted).get_span_context()
    ambient = trace.get_current_span().get_span_context()
    if not remote.is_valid or (ambient.is_valid and ambient.trace_id == remote.trace_id):
        return None
    return extracted


class PasshatServerMiddleware:
    """MCP server middleware: each ``tools/call`` is an ``execute_tool`` SERVER span in the caller's trace."""

    def __init__(self, runtime: Passhat | None) -> None:
        self._runtime = runtime

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        runtime = self._runtime or active_runtime()
        params = ctx.params or {}
        name = params.get("name")
        meta = ctx.meta or params.get("_meta") or {}
        parent = _parent_context(meta)
        span = _start(runtime, name if isinstance(name, str) else "unknown", SpanKind.SERVER, parent)
        if runtime.capture_content and params.get("arguments") is not None:
            span.set_attribute(
                semconv.TOOL_CALL_ARGUMENTS,
                to_json(params["arguments"], runtime.redactor, runtime.max_content_length),
            )
        token = otel_context.attach(trace.set_span_in_context(span, parent))
        try:
            result = await call_next(ctx)
        except BaseException as exc:
            record_exception(runtime, span, exc)
            span.set_attribute(semconv.TOOL_OUTCOME, outcome_of(error_type=error_type_of(exc)))
            span.end(end_time=runtime.now())
            raise
        finally:
            otel_context.detach(token)
        _finish(runtime, span, result)
        return result


def instrument(*, server: Any = None, runtime: Passhat | None = None) -> Instrumentation:
    """Patch the MCP client; with ``server=``, also add passhat's middleware to that server."""
    client = _patch_client(runtime)
    if server is None:
        return client
    chain = getattr(server, "middleware", None)
    if not isinstance(chain, list):
        client.uninstrument()
        raise TypeError(
            f"passhat.instrument_mcp: server= must be an mcp MCPServer or Server, got {type(server).__name__}"
        )
    middleware = PasshatServerMiddleware(runtime)
    chain.append(middleware)

    def undo() -> None:
        client.uninstrument()
        if middleware in chain:
            chain.remove(middleware)

    return Instrumentation("mcp", undo)
