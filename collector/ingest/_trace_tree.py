"""A trace as a tree of spans, each with its derived rows; each tool call linked to the LLM call that asked for
it (`GET /api/traces/{trace_id}`, `GET /api/tickets/{ticket_id}/trace`); and the trace's model usage, an LLM
call traced twice counted once.

Linking: by tool-call id first (passhat's, GenAI output messages, OpenInference, OpenLLMetry); a tool span
without an id (an OpenLLMetry `@tool`, the OpenAI Agents SDK or LangGraph through OpenInference) is linked by
its tool name, in order, to the calls asked for by LLM spans that started before it: those under the same
parent first, then any in the trace (LangGraph runs the model and the tools in sibling nodes). The first
`lookup` tool span goes to the first `lookup` call asked for, the second to the second.

An LLM call traced twice (passhat's `instrument_anthropic()` and the client's own or another instrumentor's
tracing) is one model-call span inside another. Both spans are stored as they came (the inner one usually
arrives first, in an earlier export: dropping it would need a delete later); the inner one is marked
`duplicate_of` the outer one, and every figure passhat computes counts the call once: the usage below, tool
links (to the outer span), tickets and daily traffic (a model call is never a ticket candidate, and in
`root_tickets` mode only root spans are).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson
from pydantic import BaseModel

from passhat.collector.ingest._api_models import SpanOut, TicketOut, ToolCallOut, UsageOut
from passhat.collector.store import NormalizedSpan
from passhat.semconv import (
    CHAT_TOOL_CALL_IDS,
    MODEL_CALL_OPERATIONS,
    OUTPUT_MESSAGES,
    USAGE_CACHE_CREATION_INPUT_TOKENS,
    USAGE_CACHE_READ_INPUT_TOKENS,
    USAGE_INPUT_TOKENS,
    USAGE_OUTPUT_TOKENS,
)

_MODEL_CALLS = frozenset(MODEL_CALL_OPERATIONS)
# Token counts under each convention's name: GenAI, then OpenLLMetry's older names, then OpenInference's.
_INPUT_TOKENS = (USAGE_INPUT_TOKENS, "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")
_OUTPUT_TOKENS = (USAGE_OUTPUT_TOKENS, "gen_ai.usage.completion_tokens", "llm.token_count.completion")
_CACHE_READ = (
    USAGE_CACHE_READ_INPUT_TOKENS,
    "gen_ai.usage.cache_read_input_tokens",
    "llm.token_count.prompt_details.cache_read",
)
_CACHE_CREATION = (
    USAGE_CACHE_CREATION_INPUT_TOKENS,
    "gen_ai.usage.cache_creation_input_tokens",
    "llm.token_count.prompt_details.cache_write",
)


class TraceNode(BaseModel):
    """One span, what passhat derived from it, and the spans started under it (by start time)."""

    span: SpanOut
    ticket: TicketOut | None
    tool_call: ToolCallOut | None
    # For a tool call: the span id of the LLM call that asked for it (by tool-call id, else by name and order).
    requested_by: str | None
    # For a model call traced twice (two instrumentations of one client call: one span inside the other), or a
    # tool call traced by its framework and by `@passhat.tool`: the span id of the outer one, which counts; this
    # one is a duplicate (a tool twin's `tool_call` is folded into the outer one's).
    duplicate_of: str | None
    children: list[TraceNode]


class TraceOut(BaseModel):
    trace_id: str
    span_count: int
    ticket: TicketOut | None  # the trace's one ticket, if it has one
    usage: UsageOut
    roots: list[TraceNode]  # spans whose parent is not in the trace (normally one: the root span)


def duplicates(spans: Iterable[NormalizedSpan]) -> dict[str, str]:
    """Span id -> the span id of the outer model call it duplicates, for every model call inside another (of
    the same trace; a chain of three names the outermost)."""
    by_id = {(s.trace_id, s.span_id): s for s in spans}
    found: dict[str, str] = {}
    for span in by_id.values():
        if span.operation not in _MODEL_CALLS:
            continue
        outer: NormalizedSpan | None = None
        parent = by_id.get((span.trace_id, span.parent_span_id or ""))
        seen = {span.span_id}
        while parent is not None and parent.operation in _MODEL_CALLS and parent.span_id not in seen:
            outer = parent
            seen.add(parent.span_id)
            parent = by_id.get((parent.trace_id, parent.parent_span_id or ""))
        if outer is not None:
            found[span.span_id] = outer.span_id
    return found


def usage_of(spans: Sequence[NormalizedSpan], duplicate_ids: Mapping[str, str] | None = None) -> UsageOut:
    """The model usage of these spans, each LLM call once (an outer span's count stands; where it has none,
    its duplicate's)."""
    dupes = duplicates(spans) if duplicate_ids is None else duplicate_ids
    calls = [s for s in spans if s.operation in _MODEL_CALLS]
    inner_of: dict[str, list[NormalizedSpan]] = {}
    for span in calls:
        outer = dupes.get(span.span_id)
        if outer is not None:
            inner_of.setdefault(outer, []).append(span)
    totals: list[int | None] = [None, None, None, None]
    counted = 0
    for span in calls:
        if span.span_id in dupes:
            continue
        counted += 1
        copies = [span, *sorted(inner_of.get(span.span_id, ()), key=lambda s: s.start_time_ns)]
        for index, names in enumerate((_INPUT_TOKENS, _OUTPUT_TOKENS, _CACHE_READ, _CACHE_CREATION)):
            value = next((v for c in copies if (v := _count(c.attributes, names)) is not None), None)
            if value is not None:
                totals[index] = (totals[index] or 0) + value
    return UsageOut(
        model_calls=counted,
        duplicate_spans=len(calls) - counted,
        input_tokens=totals[0],
        output_tokens=totals[1],
        cache_read_input_tokens=totals[2],
        cache_creation_input_tokens=totals[3],
    )


def _count(attributes: Mapping[str, Any], names: tuple[str, ...]) -> int | None:
    for name in names:
        value = attributes.get(name)
        if type(value) is int and 0 <= value < 2**63:
            return value
        if type(value) is str and value.isascii() and value.isdigit() and len(value) < 19:
            return int(value)
    return None


def requested_tools(attributes: Mapping[str, Any]) -> list[tuple[str | None, str | None]]:
    """(tool-call id, tool name) of each tool call an LLM call asked for, in order: from GenAI output messages,
    OpenInference (`llm.output_messages.M.message.tool_calls.N.tool_call.{id,function.name}`) or OpenLLMetry
    (`gen_ai.completion.M.tool_calls.N.{id,name}`)."""
    found: dict[tuple[int, ...], list[str | None]] = {}
    messages = attributes.get(OUTPUT_MESSAGES)
    if type(messages) is str:
        try:
            messages = orjson.loads(messages)
        except orjson.JSONDecodeError:
            messages = None
    if type(messages) is list:
        for m, message in enumerate(messages):
            parts = message.get("parts") if type(message) is dict else None
            for p, part in enumerate(parts if type(parts) is list else ()):
                if type(part) is dict and part.get("type") == "tool_call":
                    call_id, name = part.get("id"), part.get("name")
                    found[(0, m, p)] = [_str(call_id), _str(name)]
    for key, value in attributes.items():
        if type(value) is not str:
            continue
        slot: int | None = None
        if key.startswith("llm.output_messages.") and ".message.tool_calls." in key:
            if key.endswith(".tool_call.id"):
                slot = 0
            elif key.endswith(".tool_call.function.name"):
                slot = 1
        elif key.startswith("gen_ai.completion.") and ".tool_calls." in key:
            if key.endswith(".id"):
                slot = 0
            elif key.endswith(".name"):
                slot = 1
        if slot is not None:
            indices = (1, *(int(part) for part in key.split(".") if part.isdigit()))
            found.setdefault(indices, [None, None])[slot] = value
    return [(entry[0], entry[1]) for _, entry in sorted(found.items())]


def _str(value: Any) -> str | None:
    return value if type(value) is str else None


def trace_tree(trace_id: str, spans: Sequence[NormalizedSpan]) -> TraceOut:
    """The spans of one trace as a tree. A span whose parent was not received is a root of its own."""
    ordered = sorted(spans, key=lambda s: (s.start_time_ns, s.span_id))
    dupes = duplicates(ordered)
    asked_by: dict[str, str] = {}
    for span in ordered:
        if span.span_id in dupes:
            continue  # its outer span asked (a duplicate is never first: it starts inside the outer one)
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
            duplicate_of=dupes.get(span.span_id) or span.duplicate_of,
            children=[],
        )
    parents = {span.span_id: span.parent_span_id for span in ordered}
    roots: list[TraceNode] = []
    children: dict[str | None, list[NormalizedSpan]] = {}
    for span in ordered:
        parent = nodes.get(span.parent_span_id) if span.parent_span_id else None
        if parent is None or _in_a_loop(span.span_id, parents):
            roots.append(nodes[span.span_id])
            children.setdefault(None, []).append(span)
        else:
            parent.children.append(nodes[span.span_id])
            children.setdefault(span.parent_span_id, []).append(span)
    answered = {s.tool_call.call_id for s in ordered if s.tool_call is not None and s.tool_call.call_id}
    taken: set[tuple[str, int]] = set()  # (LLM span id, index of its request) already answered by name
    for siblings in children.values():
        _link_by_name(siblings, nodes, dupes, answered, taken)
    _link_by_name(ordered, nodes, dupes, answered, taken)  # then across the trace (LangGraph: other nodes)
    ticket = next((n.ticket for n in nodes.values() if n.ticket is not None), None)
    return TraceOut(
        trace_id=trace_id,
        span_count=len(ordered),
        ticket=ticket,
        usage=usage_of(ordered, dupes),
        roots=roots,
    )


def _link_by_name(
    spans: list[NormalizedSpan],
    nodes: dict[str, TraceNode],
    dupes: Mapping[str, str],
    answered: set[str],
    taken: set[tuple[str, int]],
) -> None:
    """Tool spans still unlinked, matched in order by tool name to the calls asked for by LLM spans that started
    before them among `spans` (by start time); a call already answered (by a tool span with its id, or by name
    in an earlier pass) is skipped."""
    pending: list[tuple[str, str, int]] = []  # (tool name, LLM span id, index of the request), in order asked
    for span in spans:
        if span.operation in _MODEL_CALLS and span.span_id not in dupes:
            for index, (call_id, name) in enumerate(requested_tools(span.attributes)):
                fresh = call_id is None or call_id not in answered
                if name is not None and fresh and (span.span_id, index) not in taken:
                    pending.append((name, span.span_id, index))
            continue
        node = nodes[span.span_id]
        call = span.tool_call
        if call is None or node.requested_by is not None:
            continue
        match = next((i for i, (name, _, _) in enumerate(pending) if name == call.tool_name), None)
        if match is not None:
            _, asker, index = pending.pop(match)
            node.requested_by = asker
            taken.add((asker, index))


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
