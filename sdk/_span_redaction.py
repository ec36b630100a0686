"""Redaction of every span passhat exports, whoever made it: a wrapper around the exporter.

passhat's own spans are redacted as they are made. A framework's own instrumentation (pydantic-ai, OpenInference,
OpenLLMetry, Traceloop...) writes messages, tool arguments and results into its spans' attributes and events in
clear. Before a batch leaves the process, :class:`RedactingSpanExporter` gives the exporter a copy of each such
span with every string attribute, every event attribute, every link attribute and the status message redacted by
the SDK's :class:`passhat.Redactor`: the same keyed pseudonyms as the ticket's intent, so a replay still finds the
customer's rows. A string holding JSON (``gen_ai.input.messages``, ``pydantic_ai.all_messages``,
``input.value``...) is parsed and redacted value by value, JSON inside JSON too, each value under its key (so
``redact_blank`` names a field wherever it sits).

The work runs on the export thread, never in the agent's own calls. passhat's own spans (scope ``passhat``) pass
as they are: they are redacted already, and a phone number's pseudonym is not recognisable as one, so a second
pass would change it. Numbers are kept as they are (timestamps and counts are not personal data).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import Link, Status

from passhat import semconv
from passhat._json_texts import JsonTexts
from passhat._redact import Redactor
from passhat._stretches import replaced, run_classes

# Identifiers passhat copies onto every span of a ticket (from its baggage) or sets itself: never personal data
# once passhat set them, and a second pass would change a pseudonym already in them (the intent).
_KEPT = frozenset(
    (
        semconv.TICKET_ID,
        semconv.TASK_TYPE,
        semconv.SOURCE,
        semconv.DOMAIN,
        semconv.INTENT,
        semconv.REPLAY_RUN_ID,
        semconv.TRIAL_ATTEMPT,
        semconv.OPERATION_NAME,
    )
)
_OWN_SCOPE = "passhat"
_NUMBERS = (int, float)  # a tuple: ``int | float`` in an ``isinstance`` call builds a union each time
logger = logging.getLogger("passhat")
_REMEMBERED = 1 << 22  # characters of the distinct strings whose redaction is kept for the next spans
_LONGEST_REMEMBERED = 16384  # characters: longer strings (a long conversation) are rarely met twice


# ReadableSpan's parameters in the order passed by position; by keyword if this OpenTelemetry SDK's differ.
_POSITIONAL = tuple(inspect.signature(ReadableSpan.__init__).parameters)[1:] == (
    "name",
    "context",
    "parent",
    "resource",
    "attributes",
    "events",
    "links",
    "kind",
    "instrumentation_info",
    "status",
    "start_time",
    "end_time",
    "instrumentation_scope",
)


def _copied(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """A dict of ``attributes``, copied in C when it can be: a finished SDK span's attributes are a read-only view
    of ``BoundedAttributes``, whose items are otherwise read one Python call at a time."""
    try:
        copied = attributes.copy()  # type: ignore[attr-defined]
    except (AttributeError, TypeError):
        return dict(attributes)
    return copied if type(copied) is dict else dict(attributes)


def _withheld(span: ReadableSpan) -> ReadableSpan:
    """The span with every text value replaced and its events' attributes dropped: what leaves when redacting it
    failed (its structure, names, ids and numbers still tell the collector what happened)."""
    withheld = "[REDACTED:redaction_error]"
    attributes = {
        key: value if key in _KEPT or not isinstance(value, str | Sequence) else withheld
        for key, value in (span.attributes or {}).items()
    }
    return ReadableSpan(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=attributes,
        events=[Event(event.name, {}, event.timestamp) for event in span.events],
        links=[Link(link.context) for link in span.links],
        kind=span.kind,
        status=Status(span.status.status_code),
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


class SpanRedaction(JsonTexts):
    """Redacts a span's attributes, events, links and status message with one :class:`Redactor`."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self._every_string = bool(redactor.patterns or redactor.callback)
        # A span repeats the ids, names and tool definitions of the spans before it, and a conversation's messages
        # come back in every later model call's input and in the run's span: each distinct string is redacted
        # once (not with a callback, which need not give the same answer twice). What changes nothing is kept in
        # a set, whatever its field (a field changes only how a value found is replaced); what changes, by the
        # string and the field when that field is blanked.
        self._remember = redactor.callback is None
        self._kept: set[str] = set()
        self._done: dict[object, str] = {}  # by (string, field), or by the string alone when ``_plain``
        self._remembered = 0  # characters in both
        self._lists = []  # see JsonTexts
        self._scanned = {}
        # With the built-in patterns alone and no field blanked, a string's redaction does not depend on its field:
        # the strings are remembered by themselves, and found by the shortest way.
        self._plain = redactor.is_plain and not redactor.blank

    def span(self, span: ReadableSpan) -> ReadableSpan:
        """The span as it may leave the process: itself when nothing in it changes, else a redacted copy."""
        scope = span.instrumentation_scope
        if scope is not None and scope.name == _OWN_SCOPE:
            return span
        given = span.attributes  # each read of these three makes a new proxy or tuple: read once
        attributes = self._plain_attributes(given) if self._plain and given else self.attributes(given)
        given_events, given_links = span.events, span.links
        changed = attributes is not given
        events: Sequence[Event] = given_events
        if given_events:
            events = [self.event(event) for event in given_events]
            changed = changed or any(new is not old for new, old in zip(events, given_events, strict=True))
        links: Sequence[Link] = given_links
        if given_links:
            links = [self.link(link) for link in given_links]
            changed = changed or any(new is not old for new, old in zip(links, given_links, strict=True))
        status = span.status
        if status.description:
            described = self.text(status.description, None)
            if described is not status.description:
                status = Status(status.status_code, described)
                changed = True
        if not changed:
            return span
        if _POSITIONAL:  # a third cheaper than by keyword, on the export thread's path for every span
            return ReadableSpan(
                span.name,
                span.context,
                span.parent,
                span.resource,
                attributes,
                events,
                links,
                span.kind,
                None,
                status,
                span.start_time,
                span.end_time,
                scope,
            )
        return ReadableSpan(
            name=span.name,
            context=span.context,
            parent=span.parent,
            resource=span.resource,
            attributes=attributes,
            events=events,
            links=links,
            kind=span.kind,
            status=status,
            start_time=span.start_time,
            end_time=span.end_time,
            instrumentation_scope=scope,
        )

    def attributes(self, attributes: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        """The attributes with each string (and each string in a list) redacted; the same object if none changed."""
        if not attributes:
            return attributes
        if self._plain:
            return self._plain_attributes(attributes)
        out = _copied(attributes)
        changed = False
        kept = self._kept
        blank = self.redactor.blank
        for key, value in out.items():
            if key in _KEPT:
                continue
            field = key.rsplit(".", 1)[-1] if blank else None  # a field matters only to blank
            if isinstance(value, str):
                if value in kept:
                    continue  # an id, a name, a model, a schema met before: nothing to find
                redacted: Any = self.text(value, field)
            elif isinstance(value, _NUMBERS):
                continue  # numbers and booleans are kept
            elif isinstance(value, Sequence) and not isinstance(value, bytes):
                redacted = self._sequence(value, field)
            else:
                continue
            if redacted is not value:
                out[key] = redacted
                changed = True
        return out if changed else attributes

    def _plain_attributes(self, attributes: Mapping[str, Any]) -> Mapping[str, Any]:
        """``attributes`` when the strings are redacted by themselves (``_plain``): the same, in fewer steps (most
        of a span's strings were met before)."""
        out = _copied(attributes)
        changed = False
        kept = self._kept
        done = self._done
        redacted: Any
        for key, value in out.items():
            if type(value) is str:
                if value in kept or key in _KEPT or (len(value) < 9 and "@" not in value):
                    continue  # met before with nothing in it, an identifier, or shorter than any digit run
                redacted = done.get(value)
                if redacted is None:
                    redacted = self._plain_new(value)
                    if redacted is value:
                        continue
            elif key in _KEPT or isinstance(value, _NUMBERS) or not isinstance(value, Sequence | str):
                continue
            elif isinstance(value, str):
                redacted = self.text(value, None)
            elif isinstance(value, bytes):
                continue
            else:
                redacted = self._sequence(value, None)
            if redacted is not value:
                out[key] = redacted
                changed = True
        return out if changed else attributes

    def _sequence(self, value: Sequence[Any], field: str | None) -> Sequence[Any]:
        """A list attribute with each string in it redacted; the same object when none changed."""
        items = [self.text(item, field) if isinstance(item, str) else item for item in value]
        return value if all(new is old for new, old in zip(items, value, strict=True)) else tuple(items)

    def event(self, event: Event) -> Event:
        attributes = self.attributes(event.attributes)
        if attributes is event.attributes:
            return event
        return Event(event.name, attributes, event.timestamp)

    def link(self, link: Link) -> Link:
        attributes = self.attributes(link.attributes)
        return link if attributes is link.attributes else Link(link.context, attributes)

    def text(self, value: str, field: str | None) -> str:
        """One string redacted (JSON in it value by value); the very same object when nothing changed.

        A string met before (a framework repeats its tool definitions and request parameters in every model
        call's span, and each message in every later call's input) is answered from memory.
        """
        if not self._every_string and len(value) < 9 and "@" not in value:
            return value  # shorter than any run of digits
        if self._plain:
            if value in self._kept:
                return value
            found = self._done.get(value)
            return self._plain_new(value) if found is None else found
        if not self._remember or len(value) > _LONGEST_REMEMBERED:
            return self._text(value, field)
        if value in self._kept:
            return value
        key = (value, field if field in self.redactor.blank else None)
        found = self._done.get(key)
        if found is not None:
            return found
        found = self._text(value, key[1])
        if self._remembered > _REMEMBERED:
            self._forget()
        self._remembered += len(value)
        if found is value or found == value:
            self._kept.add(value)
            return value
        self._done[key] = found
        return found

    def _forget(self) -> None:
        self._kept.clear()
        self._done.clear()
        self._remembered = 0

    def _plain_new(self, value: str) -> str:
        """``text`` for a string not met before, when ``_plain``: redacted, then remembered."""
        head = value[:1]
        if head.isspace():
            head = value.lstrip()[:1]
        if head == "[" or head == "{":
            found = self._unescaped(value, None) if "\\" not in value else self._text(value, None)
        else:
            claimed = self.redactor.regional(value, run_classes(value))
            if claimed is None:
                claimed = self.redactor.claims(value)
            found = replaced(value, claimed) if claimed else value
        if len(value) > _LONGEST_REMEMBERED:
            return found
        if self._remembered > _REMEMBERED:
            self._forget()
        self._remembered += len(value)
        if found is value or found == value:
            self._kept.add(value)
            return value
        self._done[value] = found
        return found


class RedactingSpanExporter(SpanExporter):
    """Hands ``exporter`` each batch with every span redacted (see the module's docstring).

    A batch retried through an outage is redacted once: the copy is kept until the batch is exported, so the
    wrapped exporter sees the same span objects again (the OTLP exporter then reuses its encoded body).
    """

    def __init__(self, exporter: SpanExporter, redactor: Redactor) -> None:
        self.exporter = exporter
        self.redaction = SpanRedaction(redactor)
        self._redacted: tuple[tuple[int, int, int], list[ReadableSpan]] | None = None
        self._warned = False

    def __getattr__(self, name: str) -> Any:
        """Anything else the export pipeline asks of its exporter (its URL, its budgets...) is the wrapped one's."""
        if name == "exporter":  # not set yet (during unpickling or a failed __init__): no recursion
            raise AttributeError(name)
        return getattr(self.exporter, name)

    @property
    def timeout(self) -> float:
        return float(getattr(self.exporter, "timeout", 5.0))

    @property
    def last_error(self) -> str | None:
        error = getattr(self.exporter, "last_error", None)
        return error if isinstance(error, str) else None

    def redacted(self, spans: Sequence[ReadableSpan]) -> list[ReadableSpan]:
        """The batch as it may leave the process."""
        key = (id(spans[0]), id(spans[-1]), len(spans)) if spans else None
        if key is not None and self._redacted is not None and self._redacted[0] == key:
            return self._redacted[1]
        batch = [self._one(span) for span in spans]
        self._redacted = (key, batch) if key is not None else None
        return batch

    def _one(self, span: ReadableSpan) -> ReadableSpan:
        try:
            return self.redaction.span(span)
        except Exception as exc:  # fail closed: a span that cannot be redacted leaves without its text
            if not self._warned:
                self._warned = True
                logger.warning("passhat: redacting a span failed (%r); its text values were withheld", exc)
            return _withheld(span)

    def _settled(self, result: SpanExportResult) -> SpanExportResult:
        if result is SpanExportResult.SUCCESS:
            self._redacted = None
        return result

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self._settled(self.exporter.export(self.redacted(spans)))

    def export_within(self, spans: Sequence[ReadableSpan], timeout: float) -> SpanExportResult:
        """As the wrapped exporter's ``export_within`` (a shutdown's budget), else its ``export``."""
        within = getattr(self.exporter, "export_within", None)
        batch = self.redacted(spans)
        if callable(within):
            result: SpanExportResult = within(batch, timeout)
            return self._settled(result)
        return self._settled(self.exporter.export(batch))

    def after_fork(self) -> None:
        self._redacted = None
        after_fork = getattr(self.exporter, "after_fork", None)
        if callable(after_fork):
            after_fork()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.exporter.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self.exporter.shutdown()
