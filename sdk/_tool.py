"""``@passhat.tool``: each call of an agent's tool becomes an ``execute_tool {name}`` span with an outcome."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from passhat import semconv
from passhat._content import MARGIN, to_json
from passhat._outcome import TOOL_KINDS, EmptyPredicate, ToolKind, outcome_of
from passhat._runtime import Passhat
from passhat._ticket import active_runtime, current_ticket, error_type_of, exception_message, record_exception

logger = logging.getLogger("passhat")

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class ToolCall:
    """One call of a ``@passhat.tool`` function as :func:`collect_tool_calls` hands it over, in this process.

    ``arguments`` and ``result`` are the call's own values (not redacted: they never leave the process this
    way); ``error_type`` is set when the call raised; ``outcome`` is the tool's own by :func:`outcome_of`.
    """

    name: str
    arguments: dict[str, Any]
    outcome: str
    kind: ToolKind | None = None
    result: Any = None
    error_type: str | None = None
    error_message: str | None = None


ToolCallHook = Callable[[ToolCall], None]

_collectors: contextvars.ContextVar[tuple[ToolCallHook, ...]] = contextvars.ContextVar(
    "passhat_tool_collectors", default=()
)


@contextlib.contextmanager
def collect_tool_calls(on_call: ToolCallHook | None = None) -> Iterator[list[ToolCall]]:
    """Collect every ``@passhat.tool`` call made in this context while the block runs (in call order).

    Tasks and ``asyncio.to_thread`` calls started inside the block are included (they copy the context);
    ``on_call`` is also called with each one as it finishes. The sandbox uses it to put the tool calls of
    agents that use their backend directly in the trial record.
    """
    calls: list[ToolCall] = []

    def hook(call: ToolCall) -> None:
        calls.append(call)
        if on_call is not None:
            on_call(call)

    token = _collectors.set((*_collectors.get(), hook))
    try:
        yield calls
    finally:
        _collectors.reset(token)


def _collect(call: ToolCall) -> None:
    for hook in _collectors.get():
        try:
            hook(call)
        except Exception as error:  # a broken collector must not break the agent's tool
            logger.debug("passhat: a tool-call collector raised %r", error)


class _ToolSpan:
    """The span bookkeeping shared by the sync and async wrappers."""

    __slots__ = ("arguments", "base_attributes", "empty", "kind", "name", "signature", "span_name")

    def __init__(
        self, func: Callable[..., Any], name: str, empty: EmptyPredicate | None, kind: ToolKind | None
    ) -> None:
        self.name = name
        self.kind = kind
        self.span_name = f"{semconv.OP_EXECUTE_TOOL} {name}"
        self.empty = empty
        self.base_attributes: dict[str, Any] = {
            semconv.OPERATION_NAME: semconv.OP_EXECUTE_TOOL,
            semconv.TOOL_NAME: name,
            semconv.TOOL_TYPE: "function",
        }
        summary = (inspect.getdoc(func) or "").strip().split("\n\n", 1)[0].replace("\n", " ")
        if summary:  # the docstring's first paragraph: what the model is told the tool does
            self.base_attributes[semconv.TOOL_DESCRIPTION] = summary
        try:
            self.signature: inspect.Signature | None = inspect.signature(func)
        except (TypeError, ValueError):
            self.signature = None

    def start(self, runtime: Passhat, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[trace.Span, object]:
        attributes = dict(self.base_attributes)
        ticket = current_ticket()
        if ticket is not None and ticket.pending_tool_calls:
            call_id = ticket.claim_tool_call(self.name)
            if call_id is not None:
                attributes[semconv.TOOL_CALL_ID] = call_id
        if runtime.capture_content:
            attributes[semconv.TOOL_CALL_ARGUMENTS] = to_json(
                self.bind(args, kwargs), runtime.redactor, runtime.max_content_length
            )
        span = runtime.tracer.start_span(
            self.span_name, kind=SpanKind.INTERNAL, attributes=attributes, start_time=runtime.now()
        )
        token = otel_context.attach(trace.set_span_in_context(span))
        return span, token

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        if self.signature is None:
            return {"args": list(args), "kwargs": kwargs}
        try:
            bound = self.signature.bind_partial(*args, **kwargs)
        except TypeError:
            return {"args": list(args), "kwargs": kwargs}
        return {key: value for key, value in bound.arguments.items() if key not in ("self", "cls")}

    def finish_ok(
        self,
        runtime: Passhat,
        span: trace.Span,
        result: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        yields: _Yields | None = None,
    ) -> None:
        if _collectors.get():
            outcome = outcome_of(result, self.empty, kind=self.kind)
            _collect(ToolCall(self.name, self.bind(args, kwargs), outcome, self.kind, result))
        if span.is_recording():
            span.set_attribute(semconv.TOOL_OUTCOME, outcome_of(result, self.empty, kind=self.kind))
            if yields is not None:
                span.set_attribute(semconv.TOOL_YIELDS, yields.count)
            if runtime.capture_content:
                whole = yields is None or yields.count == len(result)
                span.set_attribute(
                    semconv.TOOL_CALL_RESULT, to_json(result, runtime.redactor, runtime.max_content_length, whole=whole)
                )
        span.end(end_time=runtime.now())

    def finish_error(
        self,
        runtime: Passhat,
        span: trace.Span,
        exc: BaseException,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        yields: _Yields | None = None,
    ) -> None:
        if _collectors.get() and isinstance(exc, Exception):
            error_type = error_type_of(exc)
            outcome = outcome_of(error_type=error_type, kind=self.kind)
            message = exception_message(exc)
            _collect(ToolCall(self.name, self.bind(args, kwargs), outcome, self.kind, None, error_type, message))
        if span.is_recording():
            if yields is not None:
                span.set_attribute(semconv.TOOL_YIELDS, yields.count)
            record_exception(runtime, span, exc)
            span.set_attribute(semconv.TOOL_OUTCOME, outcome_of(error_type=error_type_of(exc), kind=self.kind))
        span.end(end_time=runtime.now())


class _Yields:
    """What a generator tool yielded: the count, and the items its result is made of.

    Every item is kept when something needs the whole result (a :func:`collect_tool_calls` collector, an ``empty``
    predicate); with content capture alone, as many as the recorded text can show (each is at least a character and
    a comma); with neither, the first (whether it yielded anything decides an ``empty`` outcome).
    """

    __slots__ = ("count", "items", "keep")

    def __init__(self, tool_span: _ToolSpan, runtime: Passhat) -> None:
        self.count = 0
        self.items: list[Any] = []
        self.keep: int | None
        if tool_span.empty is not None or _collectors.get():
            self.keep = None
        elif runtime.capture_content:
            self.keep = runtime.max_content_length + MARGIN + 1
        else:
            self.keep = 1

    def add(self, item: Any) -> None:
        self.count += 1
        if self.keep is None or len(self.items) < self.keep:
            self.items.append(item)


def _generator_wrapper(tool_span: _ToolSpan, func: Callable[..., Any], bound: Passhat | None) -> Callable[..., Any]:
    """A generator tool's wrapper: its span runs from the first ``next()`` until the generator is exhausted, closed
    or raises; the tool's code runs with the span current, the caller's code between two items without it."""

    @functools.wraps(func)
    def generator_wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
        runtime = bound or active_runtime()
        span, token = tool_span.start(runtime, args, kwargs)
        try:
            generator = func(*args, **kwargs)
            yields = _Yields(tool_span, runtime)
        except BaseException as exc:
            tool_span.finish_error(runtime, span, exc, args, kwargs)
            raise
        finally:
            otel_context.detach(token)  # type: ignore[arg-type]
        sent: Any = None
        thrown: BaseException | None = None
        while True:
            resumed = otel_context.attach(trace.set_span_in_context(span))
            try:
                if thrown is None:
                    item = generator.send(sent)
                else:
                    error, thrown = thrown, None
                    item = generator.throw(error)
            except StopIteration as stop:
                tool_span.finish_ok(runtime, span, yields.items, args, kwargs, yields)
                return stop.value  # type: ignore[no-any-return]
            except BaseException as exc:
                tool_span.finish_error(runtime, span, exc, args, kwargs, yields)
                raise
            finally:
                otel_context.detach(resumed)
            yields.add(item)
            try:
                sent = yield item
            except GeneratorExit:  # the caller closed it (or dropped it): close the tool's generator too
                resumed = otel_context.attach(trace.set_span_in_context(span))
                try:
                    generator.close()
                except BaseException as exc:
                    tool_span.finish_error(runtime, span, exc, args, kwargs, yields)
                    raise
                finally:
                    otel_context.detach(resumed)
                tool_span.finish_ok(runtime, span, yields.items, args, kwargs, yields)
                raise
            except BaseException as exc:  # thrown in by the caller: the tool's generator gets it
                thrown = exc

    return generator_wrapper


def _async_generator_wrapper(
    tool_span: _ToolSpan, func: Callable[..., Any], bound: Passhat | None
) -> Callable[..., Any]:
    """:func:`_generator_wrapper` for an async generator tool."""

    @functools.wraps(func)
    async def async_generator_wrapper(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        runtime = bound or active_runtime()
        span, token = tool_span.start(runtime, args, kwargs)
        try:
            generator = func(*args, **kwargs)
            yields = _Yields(tool_span, runtime)
        except BaseException as exc:
            tool_span.finish_error(runtime, span, exc, args, kwargs)
            raise
        finally:
            otel_context.detach(token)  # type: ignore[arg-type]
        sent: Any = None
        thrown: BaseException | None = None
        while True:
            resumed = otel_context.attach(trace.set_span_in_context(span))
            try:
                if thrown is None:
                    item = await generator.asend(sent)
                else:
                    error, thrown = thrown, None
                    item = await generator.athrow(error)
            except StopAsyncIteration:
                tool_span.finish_ok(runtime, span, yields.items, args, kwargs, yields)
                return
            except BaseException as exc:
                tool_span.finish_error(runtime, span, exc, args, kwargs, yields)
                raise
            finally:
                otel_context.detach(resumed)
            yields.add(item)
            try:
                sent = yield item
            except GeneratorExit:  # the caller closed it (aclose, or the loop's finaliser): close the tool's too
                resumed = otel_context.attach(trace.set_span_in_context(span))
                try:
                    await generator.aclose()
                except BaseException as exc:
                    tool_span.finish_error(runtime, span, exc, args, kwargs, yields)
                    raise
                finally:
                    otel_context.detach(resumed)
                tool_span.finish_ok(runtime, span, yields.items, args, kwargs, yields)
                raise
            except BaseException as exc:  # thrown in by the caller: the tool's generator gets it
                thrown = exc

    return async_generator_wrapper


def _wrap(
    func: F, name: str | None, empty: EmptyPredicate | None, kind: ToolKind | None, bound: Passhat | None = None
) -> F:
    if not callable(func):
        raise TypeError(f"passhat.tool decorates a function or method, got {type(func).__name__}")
    tool_span = _ToolSpan(func, name or str(getattr(func, "__name__", "tool")), empty, kind)

    if inspect.isasyncgenfunction(func):
        return _async_generator_wrapper(tool_span, func, bound)  # type: ignore[return-value]
    if inspect.isgeneratorfunction(func):
        return _generator_wrapper(tool_span, func, bound)  # type: ignore[return-value]

    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            runtime = bound or active_runtime()
            span, token = tool_span.start(runtime, args, kwargs)
            try:
                result = await func(*args, **kwargs)
            except BaseException as exc:
                tool_span.finish_error(runtime, span, exc, args, kwargs)
                raise
            finally:
                otel_context.detach(token)  # type: ignore[arg-type]
            tool_span.finish_ok(runtime, span, result, args, kwargs)
            return result

        return async_wrapper  # type: ignore[return-value]

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        runtime = bound or active_runtime()
        span, token = tool_span.start(runtime, args, kwargs)
        try:
            result = func(*args, **kwargs)
        except BaseException as exc:
            tool_span.finish_error(runtime, span, exc, args, kwargs)
            raise
        finally:
            otel_context.detach(token)  # type: ignore[arg-type]
        tool_span.finish_ok(runtime, span, result, args, kwargs)
        return result

    return wrapper  # type: ignore[return-value]


@overload
def tool(
    func: F,
    /,
    *,
    name: str | None = None,
    empty: EmptyPredicate | None = None,
    kind: ToolKind | None = None,
    runtime: Passhat | None = None,
) -> F: ...


@overload
def tool(
    *,
    name: str | None = None,
    empty: EmptyPredicate | None = None,
    kind: ToolKind | None = None,
    runtime: Passhat | None = None,
) -> Callable[[F], F]: ...


def tool(
    func: F | None = None,
    /,
    *,
    name: str | None = None,
    empty: EmptyPredicate | None = None,
    kind: ToolKind | None = None,
    runtime: Passhat | None = None,
) -> F | Callable[[F], F]:
    """Trace each call of an agent tool as an ``execute_tool {name}`` span (sync, async, functions, methods).

    The span records ``passhat.tool.outcome`` by :func:`passhat.outcome_of`, the one tool-outcome rule, from
    the result or the raised exception's ``error.type`` (its ``error_type`` attribute if it has one, else its
    class name), ``empty(result)`` and ``kind`` (``lookup``, ``write`` or ``other``; None when not said).
    Arguments and result are recorded only with content capture on, redacted and length-capped. ``name``
    defaults to the function's. ``runtime`` binds the tool to one :class:`passhat.Passhat` instead of the
    global one.
    """
    if name is not None and (not isinstance(name, str) or not name):
        raise TypeError(f"passhat.tool: name must be a non-empty str, got {name!r}")
    if empty is not None and not callable(empty):
        raise TypeError("passhat.tool: empty must be a function taking the result and returning a bool")
    if kind is not None and kind not in TOOL_KINDS:
        raise TypeError(f"passhat.tool: kind must be one of {', '.join(TOOL_KINDS)} or None, got {kind!r}")
    if func is not None:
        return _wrap(func, name, empty, kind, runtime)

    def decorate(inner: F) -> F:
        return _wrap(inner, name, empty, kind, runtime)

    return decorate
