"""A ticket's trace as the ticket page draws it: a span tree laid out as a waterfall, and its conversation."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from passhat import semconv
from passhat.collector.store import NormalizedSpan, StateWriteRow, TicketDetail, TicketRow

_KIND_OF_OPERATION = {"invoke_agent": "agent", "chat": "llm", "execute_tool": "tool"}
_SHOWN_ATTRIBUTES = (
    semconv.REQUEST_MODEL,
    semconv.PROVIDER_NAME,
    semconv.USAGE_INPUT_TOKENS,
    semconv.USAGE_OUTPUT_TOKENS,
    semconv.TOOL_NAME,
    semconv.TOOL_OUTCOME,
    semconv.ERROR_TYPE,
    semconv.TOOL_CALL_ARGUMENTS,
    semconv.TOOL_CALL_RESULT,
)


@dataclass(frozen=True)
class WaterfallRow:
    """One span: its depth in the tree and its bar, as thousandths of the trace's duration.

    A span that starts before or ends after its parent (two clocks in one trace, or a child left running) is
    drawn clipped to its parent, and `clipped` says by how much it fell outside: its own times stay as recorded.
    """

    span_id: str
    name: str
    kind: str  # agent | llm | tool | other
    depth: int
    offset_ms: float
    duration_ms: float
    bar_start: int
    bar_width: int
    error: str | None
    attributes: list[tuple[str, str]]
    clipped: str | None = None


@dataclass(frozen=True)
class Message:
    role: str  # customer | agent
    text: str
    offset_ms: float
    captured: bool = True  # False: the SDK recorded the message without its text (content capture was off)


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 2000 else text[:2000] + "…"


def _error_of(span: NormalizedSpan) -> str | None:
    tool = span.tool_call
    if tool is not None and tool.outcome != "ok":
        detail = tool.error_type or tool.error_message
        return f"{tool.outcome}: {detail}" if detail else tool.outcome
    if span.status == "error":
        return span.status_message or str(span.attributes.get(semconv.ERROR_TYPE) or "error")
    return None


def _ms(ns: int) -> str:
    return f"{ns / 1e6:,.0f} ms" if abs(ns) >= 10_000_000 else f"{ns / 1e6:.1f} ms"


def outside_note(start_ns: int, end_ns: int, window: tuple[int, int], what: str) -> str | None:
    """What a span's [start, end] does outside `window` (its parent's), or None when it lies within."""
    low, high = window
    parts = []
    if start_ns < low:
        parts.append(f"starts {_ms(low - start_ns)} before {what}")
    if start_ns > high:
        parts.append(f"starts {_ms(start_ns - high)} after {what} ended")
    elif end_ns > high:
        parts.append(f"ends {_ms(end_ns - high)} after {what}")
    if not parts:
        return None
    return "; ".join(parts) + " (drawn clipped: its clock may differ from its parent's)"


def waterfall(spans: Sequence[NormalizedSpan]) -> list[WaterfallRow]:
    """The spans of one trace in tree order (children under their parent, by start time); orphans at the top.

    The scale is the top spans' extent (the ticket span's, for a traced ticket): a child outside its parent is
    clipped to the parent and noted, never allowed to stretch the scale so the real work shrinks to nothing."""
    if not spans:
        return []
    ids = {s.span_id for s in spans}
    children: dict[str | None, list[NormalizedSpan]] = {}
    for span in spans:
        parent = span.parent_span_id if span.parent_span_id in ids else None
        children.setdefault(parent, []).append(span)
    tops = children.get(None, [])
    start = min(s.start_time_ns for s in tops)
    end = max(max(s.end_time_ns for s in tops), start)
    total = max(end - start, 1)
    rows: list[WaterfallRow] = []
    stack = [(s, 0, (start, end)) for s in sorted(tops, key=lambda s: s.start_time_ns, reverse=True)]
    while stack:  # depth first without recursion: a deep trace must not hit the recursion limit
        span, depth, window = stack.pop()
        raw_end = max(span.end_time_ns, span.start_time_ns)
        note = None if depth == 0 else outside_note(span.start_time_ns, raw_end, window, "its parent")
        low = min(max(span.start_time_ns, window[0]), window[1])
        high = min(max(raw_end, low), window[1])
        begin = (low - start) * 1000 // total
        width = max((high - low) * 1000 // total, 2)
        shown = [(name, _text(span.attributes[name])) for name in _SHOWN_ATTRIBUTES if name in span.attributes]
        rows.append(
            WaterfallRow(
                span_id=span.span_id,
                name=span.name,
                kind="other" if span.duplicate_of else _KIND_OF_OPERATION.get(span.operation, "other"),
                depth=depth,
                offset_ms=(span.start_time_ns - start) / 1e6,
                duration_ms=(span.end_time_ns - span.start_time_ns) / 1e6,
                bar_start=int(min(begin, 998)),
                bar_width=int(min(width, 1000 - min(begin, 998))),
                error=_error_of(span),
                attributes=shown,
                clipped=note,
            )
        )
        kids = sorted(children.get(span.span_id, []), key=lambda s: s.start_time_ns, reverse=True)
        stack.extend((kid, depth + 1, (low, high)) for kid in kids)
    return rows


def conversation(spans: Sequence[NormalizedSpan]) -> list[Message]:
    """What the customer and the agent said, in time order (the SDK's message events); a message recorded
    without its content (capture_content off) is kept, marked not captured, so the page can say so."""
    if not spans:
        return []
    start = min(s.start_time_ns for s in spans)
    roles = {semconv.EVENT_CUSTOMER_MESSAGE: "customer", semconv.EVENT_AGENT_MESSAGE: "agent"}
    found = [
        Message(
            roles[e.name],
            _text(e.attributes.get(semconv.MESSAGE_CONTENT, "")),
            (e.time_ns - start) / 1e6,
            captured=semconv.MESSAGE_CONTENT in e.attributes,
        )
        for span in spans
        for e in span.events
        if e.name in roles
    ]
    return sorted(found, key=lambda m: m.offset_ms)


@dataclass(frozen=True)
class IntentRow:
    field: str
    value: str
    evidence: str | None  # how replay inferred the value; None for a recorded intent

    @property
    def stands_in(self) -> str:
        """What a value that is not the customer's own is: "" for any other value."""
        if _BLANKED.fullmatch(self.value):
            return "redacted before export"
        if _PSEUDONYM.fullmatch(self.value):
            return "a pseudonym, not the address"
        return ""


# The SDK's blank (`[REDACTED:email]`) and its email pseudonym (16 hex digits at the reserved example.com).
_BLANKED = re.compile(r"\[REDACTED(:[^\]]+)?\]")
_PSEUDONYM = re.compile(r"[0-9a-f]{16}@example\.com")


def intent_rows(recorded: Mapping[str, Any] | None, inferred: Mapping[str, Any] | None) -> tuple[str, list[IntentRow]]:
    """The intent a ticket page shows as a table: ("recorded", rows) when the ticket recorded one, else the
    intent replay inferred with each field's evidence (its source, e.g. "inferred:rules", and rows); ("", [])
    when there is none."""
    if recorded:
        return "recorded", [IntentRow(k, _text(v), None) for k, v in sorted(recorded.items())]
    if inferred and isinstance(inferred.get("intent"), Mapping):
        found = inferred.get("evidence")
        evidence: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        label = str(inferred.get("source") or "inferred")  # e.g. inferred:rules
        rows = [
            IntentRow(k, _text(v), str(evidence[k]) if k in evidence else "no evidence stored")
            for k, v in sorted(inferred["intent"].items())
        ]
        return label, rows
    return "", []


@dataclass(frozen=True)
class TraceView:
    """One attempt of a ticket (a trace) with what the ticket page shows of it."""

    attempt: TicketRow
    rows: list[WaterfallRow]
    messages: list[Message]
    writes: list[StateWriteRow]
    reads: list[StateWriteRow]
    duration_ms: float

    @property
    def uncaptured(self) -> int:
        """Messages recorded without their text (the SDK's content capture was off)."""
        return sum(not m.captured for m in self.messages)

    @property
    def clipped(self) -> int:
        """Spans drawn clipped to their parent."""
        return sum(r.clipped is not None for r in self.rows)


def trace_view(detail: TicketDetail, trace_id: str | None, *, fallback: bool = True) -> TraceView | None:
    """The attempt `trace_id` of a ticket (default: its first production attempt, else its first).

    With ``fallback=False`` a `trace_id` that is not one of the ticket's attempts gives None: the page says the
    trace is not stored rather than showing another attempt's."""
    if not detail.attempts:
        return None
    chosen = next((a for a in detail.attempts if a.trace_id == trace_id), None)
    if chosen is None:
        if trace_id and not fallback:
            return None
        chosen = next((a for a in detail.attempts if a.source == "production"), detail.attempts[0])
    spans = [s for s in detail.spans if s.trace_id == chosen.trace_id]
    return TraceView(
        attempt=chosen,
        rows=waterfall(spans),
        messages=conversation(spans),
        writes=[w for w in detail.state_writes if w.trace_id == chosen.trace_id],
        reads=[r for r in detail.state_reads if r.trace_id == chosen.trace_id],
        duration_ms=(chosen.end_time_ns - chosen.start_time_ns) / 1e6,
    )


def changed_fields(write: StateWriteRow) -> list[tuple[str, str, str]]:
    """(field, before, after) of every field a write changed (all fields of an insert or delete)."""
    before, after = write.before or {}, write.after or {}
    names = write.changed or sorted(set(before) | set(after))
    return [(name, _text(before.get(name, "")), _text(after.get(name, ""))) for name in names]
