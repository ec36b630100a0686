"""``instrument_anthropic()``: each ``messages.create`` of the anthropic client as a ``chat {model}`` span."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Iterator
from typing import Any

from anthropic.resources.messages.messages import AsyncMessages, Messages
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from passhat import semconv
from passhat._content import to_json
from passhat._runtime import Passhat
from passhat._ticket import Ticket, active_runtime, current_ticket, record_exception
from passhat.integrations._handle import Instrumentation

_PATCHED = "__passhat_original__"


class _ChatRecord:
    """What a chat span learns from a response, whether it arrives whole or as stream events."""

    def __init__(self, runtime: Passhat, span: trace.Span, ticket: Ticket | None) -> None:
        self.runtime = runtime
        self.span = span
        self.ticket = ticket
        self.tool_calls: list[tuple[str, str]] = []
        self.stop_reason: str | None = None
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
        self.cache_read_tokens: int | None = None
        self.cache_creation_tokens: int | None = None
        self.parts: list[dict[str, Any]] = []  # the output message, kept only with content capture on
        self.model: str | None = None
        self.response_id: str | None = None
        self.ended = False

    def message(self, message: Any) -> None:
        self.model = getattr(message, "model", None)
        self.response_id = getattr(message, "id", None)
        self.stop_reason = getattr(message, "stop_reason", None)
        self.usage(getattr(message, "usage", None))
        for block in getattr(message, "content", None) or ():
            if getattr(block, "type", None) == "tool_use":
                self.tool_calls.append((str(block.name), str(block.id)))
            if self.runtime.capture_content:
                self.parts.append(_part(block))

    def usage(self, usage: Any) -> None:
        if usage is None:
            return
        input_tokens = getattr(usage, "input_tokens", None)
        output_tokens = getattr(usage, "output_tokens", None)
        if isinstance(input_tokens, int):
            self.input_tokens = input_tokens
        if isinstance(output_tokens, int):
            self.output_tokens = output_tokens
        cache_read = getattr(usage, "cache_read_input_tokens", None)
        cache_creation = getattr(usage, "cache_creation_input_tokens", None)
        if isinstance(cache_read, int):
            self.cache_read_tokens = cache_read
        if isinstance(cache_creation, int):
            self.cache_creation_tokens = cache_creation

    def stream_event(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if kind == "message_start":
            self.message(event.message)
        elif kind == "content_block_start":
            block = event.content_block
            if getattr(block, "type", None) == "tool_use":
                self.tool_calls.append((str(block.name), str(block.id)))
        elif kind == "message_delta":
            self.stop_reason = getattr(event.delta, "stop_reason", None) or self.stop_reason
            self.usage(getattr(event, "usage", None))

    def finish(self, exc: BaseException | None = None) -> None:
        if self.ended:
            return
        self.ended = True
        span = self.span
        if exc is not None:
            record_exception(self.runtime, span, exc)
        values: dict[str, Any] = {
            semconv.RESPONSE_MODEL: self.model,
            semconv.RESPONSE_ID: self.response_id,
            semconv.USAGE_INPUT_TOKENS: self.input_tokens,
            semconv.USAGE_OUTPUT_TOKENS: self.output_tokens,
            semconv.USAGE_CACHE_READ_INPUT_TOKENS: self.cache_read_tokens,
            semconv.USAGE_CACHE_CREATION_INPUT_TOKENS: self.cache_creation_tokens,
            semconv.RESPONSE_FINISH_REASONS: [self.stop_reason] if self.stop_reason else None,
            semconv.CHAT_TOOL_CALL_IDS: [call_id for _, call_id in self.tool_calls] or None,
        }
        if self.parts:
            output = [{"role": "assistant", "parts": self.parts, "finish_reason": self.stop_reason or "unknown"}]
            values[semconv.OUTPUT_MESSAGES] = _content(self.runtime, output)
        span.set_attributes({key: value for key, value in values.items() if value is not None})
        if self.ticket is not None and self.tool_calls:
            self.ticket.expect_tool_calls(self.tool_calls)
        span.end(end_time=self.runtime.now())


class _StreamProxy:
    """Passes a sync stream through unchanged while recording its events; the span ends with the stream."""

    def __init__(self, stream: Any, record: _ChatRecord) -> None:
        self._stream = stream
        self._record = record

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        try:
            event = next(self._stream)
        except StopIteration:
            self._record.finish()
            raise
        except BaseException as exc:
            self._record.finish(exc)
            raise
        self._record.stream_event(event)
        return event

    def __enter__(self) -> _StreamProxy:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._record.finish()
        self._stream.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _AsyncStreamProxy:
    """Passes an async stream through unchanged while recording its events; the span ends with the stream."""

    def __init__(self, stream: Any, record: _ChatRecord) -> None:
        self._stream = stream
        self._record = record

    def __aiter__(self) -> AsyncIterator[Any]:
        return self

    async def __anext__(self) -> Any:
        try:
            event = await self._stream.__anext__()
        except StopAsyncIteration:
            self._record.finish()
            raise
        except BaseException as exc:
            self._record.finish(exc)
            raise
        self._record.stream_event(event)
        return event

    async def __aenter__(self) -> _AsyncStreamProxy:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        self._record.finish()
        await self._stream.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _snapshot(stream: Any) -> Any:
    """The message accumulated by a ``messages.stream()`` helper stream so far, if any."""
    peek = getattr(stream, "_current_snapshot_or_none", None)
    if callable(peek):
        return peek()
    try:
        return stream.current_message_snapshot
    except (AssertionError, AttributeError):
        return None


class _StreamManagerProxy:
    """Wraps the manager ``messages.stream()`` returns: the span opens on enter and closes on exit."""

    def __init__(self, manager: Any, runtime: Passhat | None, kwargs: dict[str, Any]) -> None:
        self._manager = manager
        self._runtime = runtime
        self._kwargs = kwargs
        self._record: _ChatRecord | None = None
        self._stream: Any = None

    def _open(self) -> tuple[_ChatRecord, object]:
        record, token = _start(self._runtime, self._kwargs)
        self._record = record
        return record, token

    def _close(self, exc: BaseException | None) -> None:
        if self._record is None:
            return
        snapshot = _snapshot(self._stream) if self._stream is not None else None
        if snapshot is not None:
            self._record.message(snapshot)
        self._record.finish(exc)

    def __enter__(self) -> Any:
        record, token = self._open()
        try:
            self._stream = self._manager.__enter__()
        except BaseException as exc:
            record.finish(exc)
            raise
        finally:
            otel_context.detach(token)  # type: ignore[arg-type]
        return self._stream

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> Any:
        self._close(exc)
        return self._manager.__exit__(exc_type, exc, tb)

    async def __aenter__(self) -> Any:
        record, token = self._open()
        try:
            self._stream = await self._manager.__aenter__()
        except BaseException as exc:
            record.finish(exc)
            raise
        finally:
            otel_context.detach(token)  # type: ignore[arg-type]
        return self._stream

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> Any:
        self._close(exc)
        return await self._manager.__aexit__(exc_type, exc, tb)


def _content(runtime: Passhat, value: Any) -> str:
    return to_json(value, runtime.redactor, runtime.max_content_length)


def _field(block: Any, name: str) -> Any:
    return block.get(name) if isinstance(block, dict) else getattr(block, name, None)


def _part(block: Any) -> dict[str, Any]:
    """An Anthropic content block as a GenAI message part (`text`, `tool_call`, `tool_call_response`)."""
    kind = _field(block, "type")
    if kind == "text":
        return {"type": "text", "content": _field(block, "text")}
    if kind == "tool_use":
        return {
            "type": "tool_call",
            "id": _field(block, "id"),
            "name": _field(block, "name"),
            "arguments": _field(block, "input"),
        }
    if kind == "tool_result":
        return {"type": "tool_call_response", "id": _field(block, "tool_use_id"), "response": _field(block, "content")}
    return {"type": str(kind)}  # images, documents, thinking...: named, not copied


def _message(message: Any) -> dict[str, Any]:
    content = _field(message, "content")
    parts = [{"type": "text", "content": content}] if isinstance(content, str) else [_part(b) for b in content or ()]
    return {"role": _field(message, "role"), "parts": parts}


def _tool_definition(tool: Any) -> dict[str, Any]:
    return {
        "type": "function",
        "name": _field(tool, "name"),
        "description": _field(tool, "description"),
        "parameters": _field(tool, "input_schema"),
    }


def _start(runtime: Passhat | None, kwargs: dict[str, Any]) -> tuple[_ChatRecord, object]:
    active = runtime or active_runtime()
    model = kwargs.get("model")
    attributes: dict[str, Any] = {
        semconv.OPERATION_NAME: semconv.OP_CHAT,
        semconv.PROVIDER_NAME: "anthropic",
    }
    if isinstance(model, str):
        attributes[semconv.REQUEST_MODEL] = model
    max_tokens = kwargs.get("max_tokens")
    if isinstance(max_tokens, int):
        attributes["gen_ai.request.max_tokens"] = max_tokens
    if active.capture_content:
        # The GenAI conventions' message attributes: opt-in, redacted and capped like every other content.
        messages = kwargs.get("messages")
        if isinstance(messages, list):
            attributes[semconv.INPUT_MESSAGES] = _content(active, [_message(m) for m in messages])
        system = kwargs.get("system")
        if system:
            blocks = [{"type": "text", "text": system}] if isinstance(system, str) else system
            attributes[semconv.SYSTEM_INSTRUCTIONS] = _content(active, [_part(b) for b in blocks])
        tools = kwargs.get("tools")
        if isinstance(tools, list):
            attributes[semconv.TOOL_DEFINITIONS] = _content(active, [_tool_definition(t) for t in tools])
    name = f"{semconv.OP_CHAT} {model}" if isinstance(model, str) else semconv.OP_CHAT
    span = active.tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes, start_time=active.now())
    token = otel_context.attach(trace.set_span_in_context(span))
    ticket = current_ticket()
    if ticket is not None:
        ticket.uses_provider("anthropic")
    return _ChatRecord(active, span, ticket), token


def instrument(runtime: Passhat | None = None) -> Instrumentation:
    """Patch ``create`` and ``stream`` of ``Messages`` and ``AsyncMessages``; the handle restores them."""
    sync_original = Messages.create
    async_original = AsyncMessages.create
    sync_stream = Messages.stream
    async_stream = AsyncMessages.stream
    if hasattr(sync_original, _PATCHED):
        raise RuntimeError("passhat.instrument_anthropic is already active; call uninstrument() on its handle first")

    @functools.wraps(sync_original)
    def create(self: Messages, *args: Any, **kwargs: Any) -> Any:
        record, token = _start(runtime, kwargs)
        try:
            result = sync_original(self, *args, **kwargs)
        except BaseException as exc:
            record.finish(exc)
            raise
        finally:
            otel_context.detach(token)  # type: ignore[arg-type]
        if kwargs.get("stream"):
            return _StreamProxy(result, record)
        record.message(result)
        record.finish()
        return result

    @functools.wraps(async_original)
    async def async_create(self: AsyncMessages, *args: Any, **kwargs: Any) -> Any:
        record, token = _start(runtime, kwargs)
        try:
            result = await async_original(self, *args, **kwargs)
        except BaseException as exc:
            record.finish(exc)
            raise
        finally:
            otel_context.detach(token)  # type: ignore[arg-type]
        if kwargs.get("stream"):
            return _AsyncStreamProxy(result, record)
        record.message(result)
        record.finish()
        return result

    @functools.wraps(sync_stream)
    def stream(self: Messages, *args: Any, **kwargs: Any) -> Any:
        return _StreamManagerProxy(sync_stream(self, *args, **kwargs), runtime, kwargs)

    @functools.wraps(async_stream)
    def async_stream_wrapper(self: AsyncMessages, *args: Any, **kwargs: Any) -> Any:
        return _StreamManagerProxy(async_stream(self, *args, **kwargs), runtime, kwargs)

    setattr(create, _PATCHED, sync_original)
    setattr(async_create, _PATCHED, async_original)
    Messages.create = create  # type: ignore[method-assign]
    AsyncMessages.create = async_create  # type: ignore[method-assign]
    Messages.stream = stream  # type: ignore[method-assign]
    AsyncMessages.stream = async_stream_wrapper  # type: ignore[method-assign]

    def undo() -> None:
        Messages.create = sync_original  # type: ignore[method-assign]
        AsyncMessages.create = async_original  # type: ignore[method-assign]
        Messages.stream = sync_stream  # type: ignore[method-assign]
        AsyncMessages.stream = async_stream  # type: ignore[method-assign]

    return Instrumentation("anthropic", undo)
