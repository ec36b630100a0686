"""One customer ticket as the root ``invoke_agent`` span, usable as a sync or async context manager."""

from __future__ import annotations

import contextvars
import logging
import random
import traceback
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from passhat import semconv
from passhat._baggage import with_ticket_baggage
from passhat._content import cap, capped_text, to_json
from passhat._runtime import current
from passhat._sampling import is_sampled

if TYPE_CHECKING:
    from passhat._runtime import Passhat

logger = logging.getLogger("passhat")

_current_ticket: contextvars.ContextVar[Ticket | None] = contextvars.ContextVar("passhat_ticket", default=None)


def current_ticket() -> Ticket | None:
    """The ticket whose ``with`` block is running in this context, if any."""
    return _current_ticket.get()


def active_runtime() -> Passhat:
    """The runtime of the ticket open in this context, else the global one (`passhat._runtime.current`).

    What the SDK's tool spans, recorded writes and instrumented clients use when given no runtime: a span inside a
    ticket belongs to that ticket's trace, and goes where the ticket's spans go. A replay runs each trial inside a
    ticket of the replay's own runtime, never the process's global one (which may send production traffic, or
    nothing), so an agent's own `@passhat.tool` calls and writes land in the trial's trace."""
    ticket = _current_ticket.get()
    return ticket.runtime if ticket is not None else current()


def error_type_of(exc: BaseException) -> str:
    """An exception's ``error.type``: its ``error_type`` attribute when it has a str one, else its class."""
    declared = getattr(exc, "error_type", None)
    return declared if isinstance(declared, str) and declared else type(exc).__name__


def exception_message(exc: BaseException) -> str:
    """``str(exc)``, or what the traceback module writes when that raises: recording must not replace the error."""
    try:
        return str(exc)
    except Exception:
        return "<exception str() failed>"


def record_exception(
    runtime: Passhat, span: trace.Span, exc: BaseException, *, event: bool = True, failed: bool = True
) -> None:
    """Record an exception on a span with its message and stack redacted (they often quote customer data): its
    ``exception`` event and (``failed``) the span's error status and ``error.type``.

    A ticket opened again (continued) whose block raised records the event only: whether the ticket failed is for
    the code around it, which may handle the exception; if it does not, the ticket records the status (``event``
    False: not the same event twice)."""
    if not span.is_recording():
        return
    redact = runtime.redactor.text
    message = exception_message(exc)
    if event:
        stack = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        span.add_event(
            "exception",
            {
                "exception.type": f"{type(exc).__module__}.{type(exc).__qualname__}",
                "exception.message": cap(redact(message), runtime.max_content_length),
                "exception.stacktrace": cap(redact(stack), runtime.max_content_length * 4),
            },
            timestamp=runtime.now(),
        )
    if failed:
        span.set_attribute(semconv.ERROR_TYPE, error_type_of(exc))
        span.set_status(Status(StatusCode.ERROR, cap(redact(message), 512)))


Message = str | Mapping[str, Any] | Sequence[Any]
"""What ``customer_says`` / ``agent_says`` take: text, a chat message dict, or a list of content parts."""

_MESSAGE_SHAPES = (
    "a str, a chat message dict with a 'content' (a str or a list of content parts, e.g. "
    "{'role': 'user', 'content': 'Hi'}), or a list of content parts (str, or dicts with 'text', e.g. "
    "[{'type': 'text', 'text': 'Hi'}])"
)


def message_text(message: Any) -> str:
    """The text of a message as ``customer_says`` takes it; a TypeError naming the accepted shapes otherwise.

    A part without text (an image, a tool call or its result) adds nothing; the texts of several parts are joined
    by newlines; a dict whose content is None (an assistant message that only calls tools) is the empty text."""
    if isinstance(message, str):
        return message
    if isinstance(message, Mapping):
        if "content" in message:
            content = message["content"]
            if content is None:
                return ""
            if isinstance(content, str):
                return content
            if isinstance(content, Sequence) and not isinstance(content, bytes | bytearray):
                return _parts_text(content, message)
        elif isinstance(message.get("text"), str):  # one content part
            return str(message["text"])
    elif isinstance(message, Sequence) and not isinstance(message, bytes | bytearray):
        return _parts_text(message, message)
    raise TypeError(f"passhat: a message must be {_MESSAGE_SHAPES}; got {_shape(message)}")


def _parts_text(parts: Sequence[Any], message: Any) -> str:
    texts: list[str] = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, Mapping):
            text = part.get("text")
            if isinstance(text, str):
                texts.append(text)
            elif text is not None:
                raise TypeError(f"passhat: a content part's 'text' must be a str, got {type(text).__name__}")
        else:
            raise TypeError(f"passhat: a message must be {_MESSAGE_SHAPES}; got {_shape(message)}")
    return "\n".join(texts)


def _shape(message: Any) -> str:
    if isinstance(message, Mapping):
        return f"a {type(message).__name__} with keys {sorted(map(str, message))[:8]}"
    if isinstance(message, Sequence) and not isinstance(message, bytes | bytearray):
        kinds = sorted({type(part).__name__ for part in message})
        return f"a {type(message).__name__} of {', '.join(kinds) or 'nothing'}"
    return f"a {type(message).__name__}"


def _require_text(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError(f"passhat.ticket: {name} must be a non-empty str, got {value!r}")
    return value


class Ticket:
    """The root span of one customer ticket. Use ``with passhat.ticket(...) as t:`` (or ``async with``)."""

    def __init__(
        self,
        runtime: Passhat,
        ticket_id: str,
        *,
        task_type: str,
        intent: Mapping[str, Any] | None = None,
        source: str | None = None,
        domain: str | None = None,
        conversation_id: str | None = None,
        agent_name: str | None = None,
        replay_run_id: str | None = None,
        trial_attempt: int | None = None,
        attributes: Mapping[str, Any] | None = None,
    ) -> None:
        self.runtime = runtime
        self.ticket_id = _require_text("ticket_id", ticket_id)
        self.task_type = _require_text("task_type", task_type)
        self.source = source if source is not None else runtime.source
        if self.source not in semconv.SOURCES:
            raise ValueError(f"passhat.ticket: source must be 'production' or 'sandbox', got {self.source!r}")
        if intent is not None and not isinstance(intent, Mapping):
            raise TypeError(f"passhat.ticket: intent must be a dict of parameters, got {type(intent).__name__}")
        self.intent: dict[str, Any] = dict(intent or {})
        self.outcome: str | None = None
        self._attributes: dict[str, Any] = {
            semconv.OPERATION_NAME: semconv.OP_INVOKE_AGENT,
            semconv.TICKET_ID: self.ticket_id,
            semconv.TASK_TYPE: self.task_type,
            semconv.SOURCE: self.source,
            semconv.INTENT: to_json(self.intent, runtime.redactor),
        }
        optional: dict[str, Any] = {
            semconv.DOMAIN: domain,
            semconv.CONVERSATION_ID: conversation_id,
            semconv.AGENT_NAME: agent_name,
            semconv.REPLAY_RUN_ID: replay_run_id,
            semconv.TRIAL_ATTEMPT: trial_attempt,
        }
        redactor = runtime.redactor
        if conversation_id is not None and redactor.active:  # a framework's conversation id is redacted too
            optional[semconv.CONVERSATION_ID] = redactor.text(conversation_id)
        self._attributes.update({key: value for key, value in optional.items() if value is not None})
        if attributes:
            # The application's own attributes are application data: passhat's spans leave as they are made.
            self._attributes.update(
                {key: redactor.value(value) for key, value in attributes.items()} if redactor.active else attributes
            )
        self.name = f"{semconv.OP_INVOKE_AGENT} {agent_name}" if agent_name else semconv.OP_INVOKE_AGENT
        # Sandbox trials are always traced: a replay is worthless without its trace.
        self.sampled = self.source == "sandbox" or is_sampled(self.ticket_id, runtime.sample_rate)
        self.span: trace.Span = trace.INVALID_SPAN
        self.pending_tool_calls: list[tuple[str, str]] = []
        self.read_rows: set[tuple[str, str]] = set()  # before-images already recorded in this ticket
        self._provider: str | None = None
        self._context_token: object | None = None
        self._ticket_token: contextvars.Token[Ticket | None] | None = None
        # The ticket of the same id opened first, which this one continues (see __enter__): the one that ends the span.
        self._continues: Ticket | None = None
        self._raised: BaseException | None = None  # the last exception a continuation of this ticket recorded

    @property
    def trace_id(self) -> str:
        """The ticket's trace id as 32 hex digits (all zeros before the ticket starts)."""
        return format(self.span.get_span_context().trace_id, "032x")

    # -- context management -------------------------------------------------------------------------------
    def __enter__(self) -> Ticket:
        if self._ticket_token is not None:
            raise RuntimeError("passhat.ticket: this ticket is already open; create a new one per ticket")
        outer = _current_ticket.get()
        parent: otel_context.Context | None = None  # the current context: the ticket's parent, if any
        links: Sequence[Link] | None = None
        if outer is not None and outer.ticket_id == self.ticket_id:
            # The same ticket opened again (a handler and the code it calls both open it): one ticket, one span.
            self._continues = outer if outer._continues is None else outer._continues
            if self.intent:
                outer.set_intent(self.intent)
            self.intent = outer.intent  # one intent: set_intent on either adds to it
            self.span = outer.span
            self.pending_tool_calls = outer.pending_tool_calls
            self.read_rows = outer.read_rows
            self._provider = outer._provider
            self._ticket_token = _current_ticket.set(self)
            return self
        if outer is not None and outer.source != "sandbox":
            # Another ticket inside an open one: a ticket is a trace (the collector keeps one ticket per trace), so
            # this one starts a trace of its own, linked to the open ticket's span, which goes on after it.
            parent = otel_context.Context()
            outer_span = outer.span.get_span_context()
            links = [Link(outer_span)] if outer_span.is_valid else None
            self._warn_nested(outer)
        # Inside a sandbox trial, a ticket the agent's own code opens stays part of the trial's trace: the trial
        # is the ticket a replay counts, and the agent's ticket is its production handler's view of it.
        if self.sampled:
            self.span = self.runtime.tracer.start_span(
                self.name,
                context=parent,
                kind=SpanKind.INTERNAL,
                attributes=self._attributes,
                links=links,
                start_time=self.runtime.now(),
            )
        else:
            # A non-recording, unsampled parent: every span under it is dropped by the parent-based sampler.
            self.span = NonRecordingSpan(
                SpanContext(
                    trace_id=random.getrandbits(128) or 1,
                    span_id=random.getrandbits(64) or 1,
                    is_remote=False,
                    trace_flags=TraceFlags(TraceFlags.DEFAULT),
                )
            )
        context = with_ticket_baggage(trace.set_span_in_context(self.span), self.ticket_id, self.task_type, self.source)
        self._context_token = otel_context.attach(context)
        self._ticket_token = _current_ticket.set(self)
        return self

    def _warn_nested(self, outer: Ticket) -> None:
        runtime = self.runtime
        if runtime.warned_nested_ticket:
            return
        runtime.warned_nested_ticket = True
        logger.warning(
            "passhat: ticket %r (%s) was opened while ticket %r (%s) is open in the same context; each ticket is a "
            "trace of its own, so %r is traced and counted as a separate ticket (linked to %r), and %r goes on "
            "after it. Open one ticket per customer request, or the same ticket id to continue it (this warning is "
            "given once per process)",
            self.ticket_id,
            self.task_type,
            outer.ticket_id,
            outer.task_type,
            self.ticket_id,
            outer.ticket_id,
            outer.ticket_id,
        )

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._continues is not None:  # the open ticket it continues records the outcome and ends the span
            try:
                opened = self._continues
                if exc is not None and opened._raised is not exc:
                    # What raised here is part of the ticket even when the code around it handles it.
                    record_exception(self.runtime, self.span, exc, failed=False)
                    opened._raised = exc
            finally:
                if self._ticket_token is not None:
                    _current_ticket.reset(self._ticket_token)
            return
        try:
            if exc is not None:
                record_exception(self.runtime, self.span, exc, event=exc is not self._raised)
            self._raised = None  # no longer kept (nor its traceback's frames)
            self.span.end(end_time=self.runtime.now())
        finally:
            if self._ticket_token is not None:
                _current_ticket.reset(self._ticket_token)
            if self._context_token is not None:
                otel_context.detach(self._context_token)  # type: ignore[arg-type]

    async def __aenter__(self) -> Ticket:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.__exit__(exc_type, exc, tb)

    # -- what happens during the ticket ------------------------------------------------------------------
    def customer_says(self, message: Message) -> None:
        """Record a customer message (its content only when content capture is on; always redacted).

        ``message`` is its text, a chat message dict (``{"role": "user", "content": ...}``) or a list of content parts
        (``[{"type": "text", "text": ...}]``, as OpenAI's and Anthropic's APIs take them): their text is recorded."""
        self._message(semconv.EVENT_CUSTOMER_MESSAGE, message)

    def agent_says(self, message: Message) -> None:
        """Record an agent message (its content only when content capture is on; always redacted).

        ``message`` as in :meth:`customer_says`."""
        self._message(semconv.EVENT_AGENT_MESSAGE, message)

    def _message(self, event: str, message: Message) -> None:
        text = message_text(message)
        if not self.span.is_recording():
            return
        attributes: dict[str, Any] = {}
        if self.runtime.capture_content:
            attributes[semconv.MESSAGE_CONTENT] = capped_text(
                self.runtime.redactor, text, self.runtime.max_content_length
            )
        self.span.add_event(event, attributes, timestamp=self.runtime.now())

    def resolve(self, outcome: str = "resolved") -> None:
        """Record how the ticket ended (free text: ``resolved``, ``refused``, ``transferred`` …)."""
        if not isinstance(outcome, str) or not outcome:
            raise TypeError(f"passhat: outcome must be a non-empty str, got {outcome!r}")
        self.outcome = outcome
        self.span.set_attribute(semconv.TICKET_OUTCOME, outcome)

    def uses_provider(self, provider: str) -> None:
        """Record on the ticket span the model provider its LLM calls go to (`gen_ai.provider.name`; the first)."""
        if self._provider is None:
            self._provider = provider
            self.span.set_attribute(semconv.PROVIDER_NAME, provider)

    def set_intent(self, intent: Mapping[str, Any]) -> None:
        """Add or replace intent parameters found during the ticket (e.g. the order id once known)."""
        if not isinstance(intent, Mapping):
            raise TypeError(f"passhat: intent must be a dict of parameters, got {type(intent).__name__}")
        self.intent.update(intent)
        self.span.set_attribute(semconv.INTENT, to_json(self.intent, self.runtime.redactor))

    def expect_tool_calls(self, calls: list[tuple[str, str]]) -> None:
        """Remember tool calls a model asked for as (tool name, call id); the next tool spans claim them."""
        self.pending_tool_calls.extend(calls)

    def claim_tool_call(self, tool_name: str) -> str | None:
        """The id of the oldest pending call of ``tool_name``, removed from the pending list."""
        pending = self.pending_tool_calls
        for index, (name, call_id) in enumerate(pending):
            if name == tool_name:
                del pending[index]
                return call_id
        return None
