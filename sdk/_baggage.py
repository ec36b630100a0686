"""The ticket as OpenTelemetry baggage: `passhat.ticket()` sets it, so spans of any framework started inside the
ticket (in this process, or in a service it calls with W3C propagation) carry the ticket id and task type."""

from __future__ import annotations

from opentelemetry import baggage
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from passhat import semconv

# Baggage keys are the span attribute names: OpenTelemetry's own baggage span processors (Python, JS, Java...)
# copy an entry to the attribute of the same name, and the collector reads that attribute either way.
TICKET_BAGGAGE = (semconv.TICKET_ID, semconv.TASK_TYPE, semconv.SOURCE)


def with_ticket_baggage(context: Context, ticket_id: str, task_type: str, source: str) -> Context:
    """`context` carrying the ticket's baggage."""
    for key, value in zip(TICKET_BAGGAGE, (ticket_id, task_type, source), strict=True):
        context = baggage.set_baggage(key, value, context=context)
    return context


class TicketBaggageProcessor(SpanProcessor):
    """Copies the ticket baggage onto every span another instrumentation starts (passhat's own spans sit under
    the ticket span already), so the collector finds the ticket even where the passhat span is not sent."""

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        scope = span.instrumentation_scope
        if scope is not None and scope.name == "passhat":
            return
        entries = baggage.get_all(parent_context)
        if not entries:
            return
        for key in TICKET_BAGGAGE:
            value = entries.get(key)
            if isinstance(value, str) and (span.attributes is None or key not in span.attributes):
                span.set_attribute(key, value)

    def on_end(self, span: ReadableSpan) -> None:
        return None
