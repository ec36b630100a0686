"""A trial's spans stay in the trial, whichever provider made them.

A framework traces into OpenTelemetry's global provider (pydantic-ai's instrumentation, an instrumentor), and
the global provider is the production one once the agent's code calls ``passhat.configure(set_global=True)``:
in a replay's trial, the framework's model and agent spans went to production's exporter (sent to the collector
as the production agent's traffic) and were missing from the trial's trace.

passhat's processors on a provider sit behind :class:`TrialRouting`: a span started inside a ticket of another
passhat instance (a replay's trial is a ticket of the replay's own instance) goes to that instance's processors,
redacted by its redactor, and never to this provider's; every other span goes to this provider's, as before.

When the agent's module sets no global provider (it configures passhat in its ``main()``, which a replay never
calls), a framework's spans would go to OpenTelemetry's no-op provider and the trials would lack them: a process
that runs trials then takes :func:`route_unclaimed_spans_to_trials`, a global provider that keeps only the spans
started inside a trial's ticket.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider

from passhat._span_redaction import SpanRedaction, _withheld
from passhat._ticket import _current_ticket

if TYPE_CHECKING:
    from passhat._runtime import Passhat

logger = logging.getLogger("passhat")


class TrialRouting(SpanProcessor):
    """passhat's processors of one provider, and where a span started inside another instance's ticket goes."""

    def __init__(self, provider: object) -> None:
        self._provider = provider
        self._own: tuple[SpanProcessor, ...] = ()
        self._away: dict[int, Passhat] = {}  # span id -> the instance whose ticket it was started in
        self.used = False

    def add_span_processor(self, processor: SpanProcessor) -> None:
        self._own = (*self._own, processor)
        self.used = True

    def processors(self) -> tuple[SpanProcessor, ...]:
        """passhat's processors behind this one, in the order they were added."""
        return self._own

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        ticket = _current_ticket.get()
        if ticket is not None and ticket.runtime.tracer_provider is not self._provider and span.context is not None:
            self._away[span.context.span_id] = ticket.runtime
            _target(ticket.runtime).on_start(span, parent_context=parent_context)
            return
        for processor in self._own:
            processor.on_start(span, parent_context=parent_context)

    def _on_ending(self, span: Span) -> None:
        runtime = self._away.get(span.context.span_id) if self._away and span.context is not None else None
        if runtime is not None:
            _target(runtime)._on_ending(span)
            return
        for processor in self._own:
            processor._on_ending(span)

    def on_end(self, span: ReadableSpan) -> None:
        runtime = self._away.pop(span.context.span_id, None) if self._away and span.context is not None else None
        if runtime is not None:
            _target(runtime).on_end(_redacted(span, runtime))
            return
        for processor in self._own:
            processor.on_end(span)

    def shutdown(self) -> None:
        for processor in self._own:
            processor.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        deadline = time.monotonic() + timeout_millis / 1000
        flushed = True
        for processor in self._own:
            left = max(0, int((deadline - time.monotonic()) * 1000))
            flushed = processor.force_flush(left) and flushed
        return flushed


class TrialsOnlyProvider(TracerProvider):
    """OpenTelemetry's global provider in a process that runs trials and had none: a span started inside a
    trial's ticket goes to that trial's instance (`TrialRouting`), every other span nowhere."""


def route_unclaimed_spans_to_trials() -> bool:
    """Where OpenTelemetry has no global provider yet, make it a `TrialsOnlyProvider`, so a framework's spans made
    in a trial are the trial's; True when this call made it. For processes that exist to run trials (a replay's
    worker processes, Ray's workers): call it after the agent's module was imported, which may set its own.

    A provider the agent's code sets later with ``passhat.configure(set_global=True)`` is used by its own instance
    but does not become global in such a process (its spans outside trials are not a trial's business)."""
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return False
    provider = TrialsOnlyProvider(shutdown_on_exit=False)
    provider.add_span_processor(TrialRouting(provider))
    trace.set_tracer_provider(provider)
    return isinstance(trace.get_tracer_provider(), TrialsOnlyProvider)


def _target(runtime: Passhat) -> SpanProcessor:
    """The processors of the trial's instance: its SDK provider's, else none (never this provider's)."""
    target = getattr(runtime.tracer_provider, "_active_span_processor", None)
    return target if isinstance(target, SpanProcessor) else _DROPPED


class _Dropped(SpanProcessor):
    """Where a trial's span goes when its instance's provider takes no processors: nowhere (never production)."""


_DROPPED = _Dropped()


def _redacted(span: ReadableSpan, runtime: Passhat) -> ReadableSpan:
    """The span as the trial's instance keeps it: another library's text redacted by its redactor, as passhat's
    own content is (passhat's own spans were redacted when made)."""
    if not runtime.redactor.active:
        return span
    try:
        return SpanRedaction(runtime.redactor).span(span)
    except Exception as exc:  # fail closed: kept without its text
        logger.warning("passhat: redacting a trial's span failed (%r); its text values were withheld", exc)
        return _withheld(span)
