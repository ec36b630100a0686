"""A trace as a tree of spans, each with its derived rows, and each tool call linked to the LLM call that asked
for it (`GET /api/traces/{trace_id}`, `GET /api/tickets/{ticket_id}/trace`)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from passhat.collector.ingest._api_models import SpanOut, TicketOut, ToolCallOut
from passhat.collector.store import NormalizedSpan
from passhat.semconv import CHAT_TOOL_CALL_IDS, MODEL_CALL_OPERATIONS

_MODEL_CALLS = frozenset(MODEL_CALL_OPERATIONS)


class TraceNode(BaseModel):
    """One span, what passhat derived from it, and the spans started under it (by start time)."""

    span: SpanOut
    ticket: TicketOut | None
    tool_call: ToolCallOut | None
    # For a tool call: the span id of the LLM call whose output asked for it (matched by tool-call id).
    requested_by: str | None
    # For a model call traced twice (two instrumentations of one client call: one span inside the other): the
    # span id of the outer one, which counts; this one is a duplicate.
    duplicate_of: str | None
    children: list[TraceNode]


class TraceOut(BaseModel):
    trace_id: str
    span_count: int
    ticket: TicketOut | None  # the trace's one ticket, if it has one
    roots: list[TraceNode]  # spans whose parent is not in the trace (normally one: the root span)


def trace_tree(trace_id: str, spans: Sequence[NormalizedSpan]) -> TraceOut:
    """The spans of one trace as a tree. A span whose parent was not received is a root of its own."""
    ordered = sorted(spans, key=lambda s: (s.start_time_ns, s.span_id))
    asked_by: dict[str, str] = {}
    for span in ordered:
        ids = span.attributes.get(CHAT_TOOL_CALL_IDS)
        for call_id in ids if isinstance(ids, list) else ():
            if isinstance(call_id, str):
                asked_by.setdefault(call_id, span.span_id)
    nodes: dict[str, TraceNode] = {}
    for span in ordered:
        call = span.tool_call
        nodes[span.span_id] = TraceNode(
            span=SpanOut.of(span),
            ticket=TicketOut.of(span.ticket) if span.ticket is not None else None,
            tool_call=ToolCallOut.of(call) if call is not None else None,
            requested_by=asked_by.get(call.call_id) if call is not None and call.call_id else None,
            duplicate_of=None,
            children=[],
        )
    parents = {span.span_id: span.parent_span_id for span in ordered}
    roots: list[TraceNode] = []
    for span in ordered:
        parent = nodes.get(span.parent_span_id) if span.parent_span_id else None
        if parent is None or _in_a_loop(span.span_id, parents):
            roots.append(nodes[span.span_id])
        else:
            parent.children.append(nodes[span.span_id])
            if span.operation in _MODEL_CALLS and parent.span.operation in _MODEL_CALLS:
                # A model call never contains another one: this is the same call, recorded twice.
                nodes[span.span_id].duplicate_of = parent.duplicate_of or parent.span.span_id
    ticket = next((n.ticket for n in nodes.values() if n.ticket is not None), None)
    return TraceOut(trace_id=trace_id, span_count=len(ordered), ticket=ticket, roots=roots)


def _in_a_loop(span_id: str, parents: dict[str, str | None]) -> bool:
    """Whether following parents from `span_id` comes back to it (ids are the sender's: anything can arrive)."""
    seen = {span_id}
    parent = parents.get(span_id)
    while parent is not None and parent in parents:
        if parent in seen:
            return parent == span_id  # else a loop above it: its parent is in the loop, and a root
        seen.add(parent)
        parent = parents[parent]
    return False
