"""A ticket opened inside another open ticket: its own trace (one ticket per trace), said once; never merged."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

import passhat
from passhat.testing import Capture


@passhat.tool
def lookup(order_id: str) -> dict[str, str]:
    return {"order_id": order_id}


def _tickets(spans: Capture) -> dict[str, Any]:
    return {str((span.attributes or {})["passhat.ticket.id"]): span for span in spans.tickets()}


def test_a_ticket_inside_another_is_a_trace_of_its_own(
    passhat_capture: Capture, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="passhat"), passhat.ticket("T-1", task_type="refund") as outer:
        lookup("O-1")
        with passhat.ticket("T-2", task_type="exchange") as inner:
            assert passhat.current_ticket() is inner
            lookup("O-2")
            inner.resolve("resolved")
        assert passhat.current_ticket() is outer
        lookup("O-3")
        outer.resolve("refused")
    tickets = _tickets(passhat_capture)
    assert set(tickets) == {"T-1", "T-2"}
    first, second = tickets["T-1"], tickets["T-2"]
    assert first.parent is None and second.parent is None  # both are roots...
    assert first.context.trace_id != second.context.trace_id  # ...of two traces: two tickets counted
    assert [link.context.span_id for link in second.links] == [first.context.span_id]  # found from one another
    assert (first.attributes or {})["passhat.ticket.outcome"] == "refused"
    assert (second.attributes or {})["passhat.ticket.outcome"] == "resolved"
    calls = {
        str((span.attributes or {})["gen_ai.tool.call.arguments"]): span.context.trace_id
        for span in passhat_capture.tools()
    }
    assert calls == {
        '{"order_id":"O-1"}': first.context.trace_id,
        '{"order_id":"O-2"}': second.context.trace_id,
        '{"order_id":"O-3"}': first.context.trace_id,
    }
    [warning] = [record for record in caplog.records if record.name == "passhat"]
    assert "'T-2'" in warning.getMessage() and "'T-1'" in warning.getMessage()
    assert "separate ticket" in warning.getMessage()


def test_the_warning_is_given_once(passhat_capture: Capture, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="passhat"), passhat.ticket("T-1", task_type="batch"):
        for number in range(3):
            with passhat.ticket(f"T-{number + 2}", task_type="refund"):
                pass
    assert len([record for record in caplog.records if record.name == "passhat"]) == 1
    assert len({span.context.trace_id for span in passhat_capture.tickets()}) == 4


def test_the_same_ticket_opened_again_is_one_ticket(passhat_capture: Capture, caplog: pytest.LogCaptureFixture) -> None:
    """A handler and the code it calls may both open the customer's ticket: that is one ticket, one span."""
    with (
        caplog.at_level(logging.WARNING, logger="passhat"),
        passhat.ticket("T-1", task_type="refund", intent={"order_id": "O-1"}) as outer,
    ):
        with passhat.ticket("T-1", task_type="refund", intent={"amount": 12}) as again:
            assert passhat.current_ticket() is again and again.trace_id == outer.trace_id
            lookup("O-1")
            again.customer_says("Please refund O-1")
            again.set_intent({"reason": "damaged"})
            again.resolve("resolved")
        assert passhat.current_ticket() is outer
    [ticket] = passhat_capture.tickets()
    assert (ticket.attributes or {})["passhat.ticket.outcome"] == "resolved"
    intent = json.loads(str((ticket.attributes or {})["passhat.intent"]))
    assert intent == {"order_id": "O-1", "amount": 12, "reason": "damaged"}
    assert [event.name for event in ticket.events] == ["passhat.customer_message"]
    [tool] = passhat_capture.tools()
    assert tool.parent is not None and tool.parent.span_id == ticket.context.span_id
    assert caplog.records == []


def test_what_raised_in_the_ticket_opened_again_is_on_the_ticket_once(passhat_capture: Capture) -> None:
    """The code a handler calls opens the ticket again and raises. Handled by the handler, the exception is on the
    ticket as an event and the ticket did not fail; not handled, the ticket failed and shows it once."""
    with passhat.ticket("T-1", task_type="refund") as handled:
        try:
            with passhat.ticket("T-1", task_type="refund"):
                raise LookupError("order O-1 not found")
        except LookupError:
            handled.resolve("escalated")
    with (
        pytest.raises(LookupError),
        passhat.ticket("T-2", task_type="refund"),
        passhat.ticket("T-2", task_type="refund"),
        passhat.ticket("T-2", task_type="refund"),
    ):
        raise LookupError("order O-2 not found")
    tickets = _tickets(passhat_capture)
    first, second = tickets["T-1"], tickets["T-2"]
    assert [event.name for event in first.events] == ["exception"]
    assert (first.events[0].attributes or {})["exception.type"] == "builtins.LookupError"
    assert first.status.status_code.name == "UNSET" and "error.type" not in (first.attributes or {})
    assert (first.attributes or {})["passhat.ticket.outcome"] == "escalated"
    assert [event.name for event in second.events] == ["exception"]  # once, through two continuations
    assert second.status.status_code.name == "ERROR" and (second.attributes or {})["error.type"] == "LookupError"


def test_inside_a_sandbox_trial_the_agents_own_ticket_stays_in_the_trial(
    passhat_capture: Capture, caplog: pytest.LogCaptureFixture
) -> None:
    """A replay runs the agent inside the trial's ticket: the ticket the agent's handler opens is part of it."""
    trial = passhat.ticket("T-1#0", task_type="refund", source="sandbox", replay_run_id="R-1", trial_attempt=0)
    with caplog.at_level(logging.WARNING, logger="passhat"), trial, passhat.ticket("PROD-1", task_type="refund"):
        lookup("O-1")
    spans = passhat_capture.spans
    assert len({span.context.trace_id for span in spans}) == 1
    assert caplog.records == []


def test_tickets_opened_by_concurrent_tasks_inside_a_ticket_are_each_their_own(passhat_capture: Capture) -> None:
    async def handle(ticket_id: str) -> str:
        async with passhat.ticket(ticket_id, task_type="refund") as ticket:
            await asyncio.sleep(0)
            lookup(ticket_id)
            await asyncio.sleep(0)
            assert passhat.current_ticket() is ticket
            return ticket.trace_id

    async def batch() -> list[str]:
        async with passhat.ticket("BATCH", task_type="batch"):
            return list(await asyncio.gather(*(handle(f"T-{number}") for number in range(3))))

    traces = asyncio.run(batch())
    assert len(set(traces)) == 3
    for tool in passhat_capture.tools():
        owner = str((tool.attributes or {})["gen_ai.tool.call.arguments"]).split('"')[3]
        assert format(tool.context.trace_id, "032x") == traces[int(owner[2:])]


def test_an_unsampled_outer_ticket_does_not_silence_a_sampled_inner_one() -> None:
    from passhat.testing import capture

    with capture(sample_rate=0.5) as spans:
        unsampled = next(f"U-{n}" for n in range(1000) if not passhat.is_sampled(f"U-{n}", 0.5))
        sampled = next(f"S-{n}" for n in range(1000) if passhat.is_sampled(f"S-{n}", 0.5))
        with passhat.ticket(unsampled, task_type="refund"), passhat.ticket(sampled, task_type="refund"):
            lookup("O-1")
    assert [(span.attributes or {})["passhat.ticket.id"] for span in spans.tickets()] == [sampled]
    assert len(spans.tools()) == 1
