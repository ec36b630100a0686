"""One tool call traced twice is one tool call: a framework's tool span and a `@passhat.tool` span of the same call.

A team that wraps its tools with `@passhat.tool` and also turns on its framework's instrumentation (pydantic-ai,
OpenInference, OpenLLMetry) sends two spans per call: the framework's (it carries the model's tool-call id) and
passhat's (it carries the outcome by passhat's rule, the declared error type, the arguments as passhat records
them). Both are stored as they came; when a trace is read back, the inner one is marked `duplicate_of` the outer
one and its derived tool call is folded into the outer one's, so every route, page, figure and replay that reads
tool calls counts the call once, as LLM calls traced twice are (`ingest._trace_tree.duplicates`).

Two tool spans are the same call when they have the same tool name, come from different instrumentations (scope
names), and one sits inside the other: its descendant, or, when the framework does not make its tool span the
current one (the OpenAI Agents SDK through OpenInference), within its start and end. Each inner span takes the
tightest such outer span; a chain names the outermost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from passhat.collector.store._rows import NormalizedSpan, ToolCallRow

_SEVERITY = {"ok": 0, "empty": 1, "error": 2}


def merge_tool_twins(spans: Sequence[NormalizedSpan]) -> dict[str, str]:
    """Fold each twin tool span into the span that counts (in place); span id -> the span id that counts."""
    tools = [s for s in spans if s.tool_call is not None]
    if len(tools) < 2:
        return {}
    by_id = {s.span_id: s for s in spans}
    # Twins share a trace: each call is matched against its own trace's tool spans only (many tickets' traces
    # read together, as replay planning and grading read them, would otherwise compare every pair).
    of_trace: dict[str, list[NormalizedSpan]] = {}
    for span in tools:
        of_trace.setdefault(span.trace_id, []).append(span)
    outer_of: dict[str, NormalizedSpan] = {}
    for inner in tools:
        outer = _enclosing(inner, of_trace[inner.trace_id], by_id)
        if outer is not None:
            outer_of[inner.span_id] = outer
    merged: dict[str, str] = {}
    for inner_id, outer in outer_of.items():
        top = outer
        seen = {inner_id}
        while top.span_id in outer_of and top.span_id not in seen:
            seen.add(top.span_id)
            top = outer_of[top.span_id]
        if top.span_id not in seen:  # ids and clocks are the sender's: a loop counts each of its spans
            merged[inner_id] = top.span_id
    for inner_id, top_id in sorted(merged.items(), key=lambda item: by_id[item[0]].start_time_ns):
        inner, top = by_id[inner_id], by_id[top_id]
        if inner.tool_call is not None and top.tool_call is not None:
            top.tool_call = _folded(top.tool_call, inner.tool_call)
        inner.tool_call = None
        inner.duplicate_of = top_id
    return merged


def _enclosing(
    inner: NormalizedSpan, tools: Sequence[NormalizedSpan], by_id: dict[str, NormalizedSpan]
) -> NormalizedSpan | None:
    """The tightest tool span of the same call around `inner`: an ancestor first, else one that contains it."""
    call = inner.tool_call
    assert call is not None
    parent = by_id.get(inner.parent_span_id or "")
    seen = {inner.span_id}
    while parent is not None and parent.span_id not in seen:
        seen.add(parent.span_id)
        if _same_call(inner, parent):
            return parent
        parent = by_id.get(parent.parent_span_id or "")
    around = [
        other
        for other in tools
        if other is not inner
        and _same_call(inner, other)
        and other.start_time_ns <= inner.start_time_ns
        and inner.end_time_ns <= other.end_time_ns
        and (other.start_time_ns, -other.end_time_ns, other.span_id)
        < (inner.start_time_ns, -inner.end_time_ns, inner.span_id)
    ]
    return min(around, key=lambda s: s.end_time_ns - s.start_time_ns, default=None)


def _order(span: NormalizedSpan) -> tuple[int, int, str]:
    """Outer spans first: the earlier start, then the later end (the span id breaks a tie, never both ways)."""
    return (span.start_time_ns, -span.end_time_ns, span.span_id)


def _same_call(inner: NormalizedSpan, outer: NormalizedSpan) -> bool:
    a, b = inner.tool_call, outer.tool_call
    return (
        a is not None
        and b is not None
        and a.tool_name == b.tool_name
        and inner.trace_id == outer.trace_id
        and inner.scope_name != outer.scope_name
    )


def _folded(counted: ToolCallRow, twin: ToolCallRow) -> ToolCallRow:
    """The call as both spans saw it: the worse outcome (a tool's `empty` rule is passhat's), the call id, error,
    arguments and result from whichever has them."""
    worse = twin if _SEVERITY.get(twin.outcome, 0) > _SEVERITY.get(counted.outcome, 0) else counted
    return replace(
        counted,
        outcome=worse.outcome,
        call_id=counted.call_id or twin.call_id,
        tool_type=counted.tool_type or twin.tool_type,
        error_type=worse.error_type or counted.error_type or twin.error_type,
        error_message=worse.error_message or counted.error_message or twin.error_message,
        arguments=counted.arguments if counted.arguments is not None else twin.arguments,
        result=counted.result if counted.result is not None else twin.result,
    )
