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

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import Link, Status

from passhat import semconv
from passhat._redact import Redactor, find_digit_run, run_classes

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
_CONTAINERS = (dict, list)
_ENCODER = json.JSONEncoder(ensure_ascii=False)  # ``json.dumps(..., ensure_ascii=False)`` makes one per call
logger = logging.getLogger("passhat")
# A candidate is a run ``DIGIT_RUN`` finds (see passhat._redact) or an @: a superset of what the built-in patterns
# can match. None of these characters is ever escaped in JSON, so a JSON text holding no such run holds no value
# with one: a string in which neither is found is kept without parsing it or running the patterns (unless the user's
# own patterns or callback may find something in it). Timestamps, ids and counts do not pass it.

_LISTS = 16  # JSON lists remembered for the conversations that grow from them
_REMEMBERED = 1 << 22  # characters of the distinct strings whose redaction is kept for the next spans
_LONGEST_REMEMBERED = 16384  # characters: longer strings (a long conversation) are rarely met twice


def _next_candidate(value: str, classes: bytes, position: int) -> tuple[int, int] | None:
    """Where the next candidate at or after ``position`` starts and ends (``classes``: ``run_classes(value)``)."""
    at = value.find("@", position)
    run = find_digit_run(value, classes, position, at if at != -1 else len(value))
    if run is not None:
        return run
    return (at, at + 1) if at != -1 else None


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


class SpanRedaction:
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
        self._done: dict[tuple[str, str | None], str] = {}
        self._remembered = 0  # characters in both
        # The JSON lists redacted last, with their redacted form: a conversation's input messages in one model
        # call are the previous call's plus the new ones, so only the new ones are scanned (see ``_grown``).
        self._lists: list[tuple[str, str]] = []

    def span(self, span: ReadableSpan) -> ReadableSpan:
        """The span as it may leave the process: itself when nothing in it changes, else a redacted copy."""
        scope = span.instrumentation_scope
        if scope is not None and scope.name == _OWN_SCOPE:
            return span
        given = span.attributes  # each read of these three makes a new proxy or tuple: read once
        attributes = self.attributes(given)
        given_events, given_links = span.events, span.links
        events = [self.event(event) for event in given_events]
        links = [self.link(link) for link in given_links]
        given_status = status = span.status
        if status.description:
            described = self.text(status.description, None)
            if described is not status.description:
                status = Status(status.status_code, described)
        changed = (
            attributes is not given
            or status is not given_status
            or any(new is not old for new, old in zip(events, given_events, strict=True))
            or any(new is not old for new, old in zip(links, given_links, strict=True))
        )
        if not changed:
            return span
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
        out: dict[str, Any] | None = None
        kept = self._kept
        blank = self.redactor.blank
        for key, value in attributes.items():
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
                items = [self.text(item, field) if isinstance(item, str) else item for item in value]
                same = all(new is old for new, old in zip(items, value, strict=True))
                redacted = value if same else tuple(items)
            else:
                continue
            if redacted is not value:
                if out is None:
                    out = dict(attributes)
                out[key] = redacted
        return attributes if out is None else out

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
            self._kept.clear()
            self._done.clear()
            self._remembered = 0
        self._remembered += len(value)
        if found is value or found == value:
            self._kept.add(value)
            return value
        self._done[key] = found
        return found

    def _text(self, value: str, field: str | None) -> str:
        first = None
        classes = b""
        if not self._every_string:
            classes = run_classes(value)
            first = _next_candidate(value, classes, 0)
            if first is None:
                return value
            if value.startswith("[") and not self.redactor.blank:
                grown = self._grown(value)
                if grown is not None:
                    return grown
        if value.lstrip()[:1] in ("{", "["):
            try:
                data = json.loads(value)
            except ValueError:
                data = None
            else:
                if first is not None and not self.redactor.blank and isinstance(data, _CONTAINERS):
                    in_place = self._json_strings(value, classes, first)
                    if in_place is not None:
                        if isinstance(data, list):
                            self._remember_list(value, in_place)
                        return in_place
                redacted = self._json(data, field)
                if redacted is data:
                    return value
                return _ENCODER.encode(redacted)
        redacted_text = self.redactor.text(value, field)
        return value if redacted_text == value else redacted_text

    def _grown(self, value: str) -> str | None:
        """``value`` redacted when it is a JSON list remembered, grown by more items: the remembered part is
        taken as it was redacted and only the new items are (a valid list whose items are valid is valid JSON)."""
        for known, redacted in reversed(self._lists):
            size = len(known)
            if size < len(value) and value[size - 1] == "," and known.endswith("]") and value.startswith(known[:-1]):
                rest = self._text("[" + value[size:], None)
                if not (rest.startswith("[") and redacted.endswith("]")):
                    return None
                combined = f"{redacted[:-1]},{rest[1:]}"
                self._remember_list(value, combined)
                return combined
        return None

    def _remember_list(self, value: str, redacted: str) -> None:
        if len(self._lists) >= _LISTS:
            del self._lists[0]
        self._lists.append((value, redacted))

    def _json_strings(self, value: str, classes: bytes, hit: tuple[int, int] | None) -> str | None:
        """A valid JSON text with each of its strings that may hold a value redacted in place; None when its text
        has an escaped backslash (then it is redacted value by value). ``hit``: the first candidate in it.

        A big message list is not rebuilt and re-encoded to redact one email in it: the candidates are found in
        the text itself, and only the string each one sits in is decoded, redacted and written back. A value a
        pattern matches never contains a character JSON escapes, so the encoded text shows every candidate;
        whether one sits inside a string is the parity of the unescaped quotes before it.
        """
        if "\\\\" in value:
            return None
        pieces: list[str] = []
        last = position = 0
        inside = False
        while hit is not None:
            start = hit[0]
            quotes = value.count('"', position, start) - value.count('\\"', position, start)
            inside ^= quotes % 2 == 1
            if not inside:  # a number between the strings: numbers are kept
                position = hit[1]
                hit = _next_candidate(value, classes, position)
                continue
            opening = value.rfind('"', 0, start)
            while value[opening - 1] == "\\":
                opening = value.rfind('"', 0, opening)
            closing = value.find('"', start)
            while value[closing - 1] == "\\":
                closing = value.find('"', closing + 1)
            token = value[opening : closing + 1]
            decoded = json.loads(token) if "\\" in token else token[1:-1]
            redacted = self.text(decoded, None)
            if redacted is not decoded:
                pieces.append(value[last:opening])
                pieces.append(_ENCODER.encode(redacted))
                last = closing + 1
            position = closing + 1
            inside = False
            hit = _next_candidate(value, classes, position)
        if not pieces:
            return value
        pieces.append(value[last:])
        return "".join(pieces)

    def _json(self, value: Any, field: str | None) -> Any:
        """A parsed JSON value redacted; the same object when nothing in it changed."""
        if isinstance(value, str):
            return self.text(value, field)
        if isinstance(value, dict):
            out: dict[str, Any] | None = None
            for key, item in value.items():
                redacted = self._json(item, key)
                if redacted is not item:
                    if out is None:
                        out = dict(value)
                    out[key] = redacted
            return value if out is None else out
        if isinstance(value, list):
            items = [self._json(item, field) for item in value]
            return value if all(new is old for new, old in zip(items, value, strict=True)) else items
        return value  # numbers, booleans and null are kept


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
