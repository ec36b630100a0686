"""One clock per trace: a trial's tool spans are stamped by the ticket's own clock (a simulated one included) and
span the time each call took; the ticket page's waterfall clips a child that falls outside its parent and says so."""

from __future__ import annotations

import asyncio
import time

from passhat import semconv
from passhat.collector.store import NormalizedSpan, SpanEvent
from passhat.collector.ui._trace import conversation, intent_rows, outside_note, waterfall
from passhat.sandbox import FlawConfig, ReferenceAgent, Sandbox, run_trial
from passhat.sandbox.domains.mock import domain as mock
from passhat.testing import capture
from tests.collector.store.store_contract import NS, ticket_span, tool_span

DAYS_AGO = 4 * 86_400 * NS


def test_a_trials_tool_spans_are_children_on_the_tickets_own_simulated_clock() -> None:
    started = time.monotonic_ns()
    arrival = time.time_ns() - DAYS_AGO  # the demo's simulated calendar: days before the wall clock

    def simulated() -> int:
        return arrival + (time.monotonic_ns() - started)

    with capture(deterministic=False, clock=simulated, source="sandbox") as spans:

        async def run() -> None:
            with Sandbox(mock, size="default") as sandbox:
                scenario = sandbox.scenarios("renew_loan", 1)[0]
                result = await run_trial(
                    sandbox, scenario, 0, ReferenceAgent.factory(FlawConfig.off()), runtime=spans.passhat
                )
                assert result.passed

        asyncio.run(run())
    (root,) = spans.tickets()
    tools = spans.tools()
    assert [t.attributes[semconv.TOOL_NAME] for t in tools] == ["find_member_by_email", "get_loans", "renew_loan"]
    assert root.start_time is not None and root.end_time is not None
    assert root.start_time < time.time_ns() - DAYS_AGO // 2  # the root is on the simulated clock
    for tool in tools:
        assert tool.parent is not None and tool.parent.span_id == root.context.span_id
        assert tool.start_time is not None and tool.end_time is not None
        assert root.start_time <= tool.start_time < tool.end_time <= root.end_time  # inside, and it took time
    # Drawn on the ticket page: no child outside its parent, so nothing clipped.
    assert [r.clipped for r in waterfall(_normalized(spans.spans))] == [None] * 4


def _normalized(spans: list) -> list[NormalizedSpan]:  # type: ignore[type-arg]
    found = []
    for s in spans:
        found.append(
            NormalizedSpan(
                trace_id=f"{s.context.trace_id:032x}",
                span_id=f"{s.context.span_id:016x}",
                parent_span_id=f"{s.parent.span_id:016x}" if s.parent else None,
                name=s.name,
                start_time_ns=s.start_time,
                end_time_ns=s.end_time,
                operation=str(s.attributes.get(semconv.OPERATION_NAME, "")),
                status="ok",
                attributes=dict(s.attributes),
            )
        )
    return found


def test_a_child_on_another_clock_is_clipped_to_its_parent_with_a_note_and_the_scale_is_the_roots() -> None:
    root = ticket_span("T-1", start_ns=1_000 * NS)
    root.end_time_ns = root.start_time_ns + 413 * 1_000_000  # a 413 ms ticket
    inside = tool_span(root, "get_order", offset_ns=100 * 1_000_000)
    inside.end_time_ns = inside.start_time_ns + 50 * 1_000_000
    late = tool_span(root, "refund_order", offset_ns=370_243_496 * 1_000_000)  # the wall clock, days later
    late.end_time_ns = late.start_time_ns
    rows = {r.name: r for r in waterfall([root, inside, late])}
    top, ok, clipped = rows[root.name], rows[inside.name], rows[late.name]
    assert top.clipped is None and (top.bar_start, top.bar_width) == (0, 1000)
    # The scale is the root's 413 ms: the child inside is drawn where it ran, not squashed to nothing.
    assert ok.clipped is None and ok.bar_start == 100 * 1000 // 413 and ok.bar_width == 50 * 1000 // 413
    assert (
        clipped.clipped is not None
        and "after its parent ended" in clipped.clipped
        and "370,243,083 ms" in clipped.clipped
    )
    assert clipped.bar_start + clipped.bar_width <= 1000 and clipped.bar_start >= 998
    assert clipped.offset_ms == 370_243_496  # its own times stay as recorded
    early = tool_span(root, "lookup", offset_ns=-5 * 1_000_000)
    assert "starts 5.0 ms before its parent" in (waterfall([root, early])[1].clipped or "")
    assert outside_note(10, 20, (0, 30), "its parent") is None
    assert "ends 5.0 ms after its parent" in (outside_note(0, 35_000_000, (0, 30_000_000), "its parent") or "")


def test_messages_without_content_are_marked_not_captured_and_the_intent_is_rows_with_evidence() -> None:
    root = ticket_span("T-1", start_ns=1_000 * NS)
    root.events = [
        SpanEvent(semconv.EVENT_CUSTOMER_MESSAGE, root.start_time_ns + 1, {}),
        SpanEvent(semconv.EVENT_AGENT_MESSAGE, root.start_time_ns + 2, {semconv.MESSAGE_CONTENT: "Done."}),
    ]
    messages = conversation([root])
    assert [(m.role, m.captured, m.text) for m in messages] == [("customer", False, ""), ("agent", True, "Done.")]
    assert intent_rows({"order_id": "O-1", "items": ["a"]}, None) == (
        "recorded",
        [intent_rows({"items": ["a"]}, None)[1][0], intent_rows({"order_id": "O-1"}, None)[1][0]],
    )
    label, rows = intent_rows(
        None,
        {
            "source": "inferred:rules",
            "intent": {"order_id": "O-1", "reason": "x"},
            "evidence": {"order_id": "said 'O-1'"},
        },
    )
    assert label == "inferred:rules"
    assert [(r.field, r.value, r.evidence) for r in rows] == [
        ("order_id", "O-1", "said 'O-1'"),
        ("reason", "x", "no evidence stored"),
    ]
    assert intent_rows(None, None) == ("", [])
