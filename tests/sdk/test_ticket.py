"""A ticket is the root invoke_agent span; its messages, outcome and errors are recorded on it."""

from __future__ import annotations

import json

import pytest

import passhat
from passhat.testing import Capture


def test_ticket_root_span_carries_the_contract_attributes(passhat_capture: Capture) -> None:
    with passhat.ticket(
        "T-1001",
        task_type="refund",
        intent={"order_id": "O-7", "items": ["sku-1"]},
        domain="retail",
        conversation_id="conv-9",
        agent_name="support",
    ) as t:
        t.resolve("resolved")
    span = passhat_capture.one("invoke_agent support")
    assert span.parent is None
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "support",
        "gen_ai.conversation.id": "conv-9",
        "passhat.ticket.id": "T-1001",
        "passhat.task_type": "refund",
        "passhat.source": "production",
        "passhat.domain": "retail",
        "passhat.intent": json.dumps({"order_id": "O-7", "items": ["sku-1"]}, separators=(",", ":")),
        "passhat.ticket.outcome": "resolved",
    }


def test_ticket_without_agent_name_is_called_invoke_agent(passhat_capture: Capture) -> None:
    with passhat.ticket("T-1", task_type="refund"):
        pass
    assert [s.name for s in passhat_capture.spans] == ["invoke_agent"]


async def test_ticket_works_as_an_async_context_manager(passhat_capture: Capture) -> None:
    async with passhat.ticket("T-2", task_type="exchange") as t:
        assert passhat.current_ticket() is t
    assert passhat.current_ticket() is None
    assert passhat_capture.one("invoke_agent").attributes["passhat.task_type"] == "exchange"  # type: ignore[index]


def test_messages_are_events_with_pseudonymised_content(passhat_capture: Capture) -> None:
    with passhat.ticket("T-3", task_type="refund") as t:
        t.customer_says("I am jane.doe@example.com, refund order O-7")
        t.agent_says("Done.")
    span = passhat_capture.one("invoke_agent")
    pseudonym = passhat.current().redactor.text("jane.doe@example.com")
    assert pseudonym != "jane.doe@example.com"
    assert [(e.name, dict(e.attributes or {})) for e in span.events] == [
        ("passhat.customer_message", {"passhat.message.content": f"I am {pseudonym}, refund order O-7"}),
        ("passhat.agent_message", {"passhat.message.content": "Done."}),
    ]


def test_the_applications_own_attributes_and_conversation_id_are_pseudonymised(passhat_capture: Capture) -> None:
    email, card = "jane.doe@acme-mail.com", "4111 1111 1111 1111"
    with passhat.ticket(
        "T-1",
        task_type="refund",
        conversation_id=f"chat/{email}",
        attributes={"customer.email": email, "customer.cards": [card], "customer.tier": "gold", "visits": 3},
    ):
        pass
    redactor = passhat_capture.passhat.redactor
    attributes = dict(passhat_capture.one("invoke_agent").attributes or {})
    assert attributes["gen_ai.conversation.id"] == f"chat/{redactor.text(email)}"
    assert attributes["customer.email"] == redactor.text(email) != email
    assert attributes["customer.cards"] == (redactor.text(card),)
    assert attributes["customer.tier"] == "gold" and attributes["visits"] == 3
    assert email not in json.dumps(attributes) and card not in json.dumps(attributes)


def test_an_intent_holding_nan_or_an_infinity_is_still_json_the_collector_reads(passhat_capture: Capture) -> None:
    """JSON has no NaN: `json.dumps` wrote the bare token, the collector's parser refused the text, and the intent
    a replay starts from was kept only as raw text. Such a float is written as its name."""
    import orjson

    with passhat.ticket("T-1", task_type="refund", intent={"amount": float("nan"), "cap": [float("inf"), -1e309]}):
        pass
    text = dict(passhat_capture.one("invoke_agent").attributes or {})["passhat.intent"]
    assert orjson.loads(text) == {"amount": "NaN", "cap": ["Infinity", "-Infinity"]}


def test_message_content_is_left_out_without_content_capture() -> None:
    from passhat.testing import capture

    with capture(capture_content=False) as spans, passhat.ticket("T-4", task_type="refund") as t:
        t.customer_says("secret plan")
    (event,) = spans.one("invoke_agent").events
    assert event.name == "passhat.customer_message"
    assert dict(event.attributes or {}) == {}


def test_an_exception_marks_the_ticket_with_error_type_and_propagates(passhat_capture: Capture) -> None:
    class PaymentDeclinedError(Exception):
        pass

    with pytest.raises(PaymentDeclinedError), passhat.ticket("T-5", task_type="refund"):
        raise PaymentDeclinedError("card of bob@example.com declined")
    span = passhat_capture.one("invoke_agent")
    assert span.attributes["error.type"] == "PaymentDeclinedError"  # type: ignore[index]
    assert span.status.status_code.name == "ERROR"
    (event,) = span.events
    assert event.name == "exception"
    assert "bob@example.com" not in json.dumps(dict(event.attributes or {}))


def test_intent_can_be_completed_during_the_ticket(passhat_capture: Capture) -> None:
    with passhat.ticket("T-6", task_type="refund", intent={"order_id": "O-1"}) as t:
        t.set_intent({"items": ["a"]})
    attributes = passhat_capture.one("invoke_agent").attributes or {}
    assert json.loads(str(attributes["passhat.intent"])) == {"order_id": "O-1", "items": ["a"]}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ticket_id": "", "task_type": "refund"}, "ticket_id must be a non-empty str"),
        ({"ticket_id": 7, "task_type": "refund"}, "ticket_id must be a non-empty str"),
        ({"ticket_id": "T", "task_type": ""}, "task_type must be a non-empty str"),
        (
            {"ticket_id": "T", "task_type": "r", "source": "staging"},
            "source must be 'production' or 'sandbox'",
        ),
        ({"ticket_id": "T", "task_type": "r", "intent": ["x"]}, "intent must be a dict"),
    ],
)
def test_bad_ticket_arguments_fail_with_one_clear_message(kwargs: dict[str, object], message: str) -> None:
    ticket_id = kwargs.pop("ticket_id")
    with pytest.raises((TypeError, ValueError), match=message):
        passhat.ticket(ticket_id, **kwargs)  # type: ignore[arg-type]


def test_passhat_works_unconfigured_without_exporting() -> None:
    @passhat.tool
    def ping() -> str:
        return "pong"

    with passhat.ticket("T-7", task_type="refund") as t:
        assert ping() == "pong"
        t.resolve("resolved")


async def test_concurrent_tickets_keep_their_own_spans_and_pending_tool_calls(passhat_capture: Capture) -> None:
    import asyncio

    @passhat.tool
    async def lookup(ticket_id: str) -> str:
        await asyncio.sleep(0.001)
        return ticket_id

    async def handle(index: int) -> None:
        async with passhat.ticket(f"T-{index}", task_type="refund") as t:
            t.expect_tool_calls([("lookup", f"call-{index}")])
            await asyncio.sleep(0.001 * (index % 3))
            await lookup(f"T-{index}")
            await asyncio.to_thread(passhat.record_write, "orders", {"id": index}, after={"n": index})

    await asyncio.gather(*(handle(index) for index in range(20)))
    tickets = {span.context.trace_id: span for span in passhat_capture.tickets()}
    assert len(tickets) == 20
    for tool in passhat_capture.tools():
        ticket = tickets[tool.context.trace_id]
        ticket_id = str((ticket.attributes or {})["passhat.ticket.id"])
        assert (tool.attributes or {})["gen_ai.tool.call.id"] == f"call-{ticket_id[2:]}"
    for ticket in tickets.values():
        (write,) = [e for e in ticket.events if e.name == "passhat.state_write"]
        index = int(str((ticket.attributes or {})["passhat.ticket.id"])[2:])
        assert (write.attributes or {})["passhat.state_write.key"] == f'{{"id":{index}}}'


def test_a_tool_on_a_thread_pool_joins_the_ticket_when_submitted_in_a_copy_of_the_context(
    passhat_capture: Capture,
) -> None:
    """What docs/sdk.md says of thread pools: a bare submit loses the ticket, `copy_context().run` keeps it."""
    import concurrent.futures
    import contextvars

    @passhat.tool
    def lookup(order_id: str) -> str:
        return order_id

    with (
        passhat.ticket("T-42", task_type="order_status") as ticket,
        concurrent.futures.ThreadPoolExecutor() as pool,
    ):
        pool.submit(lookup, "bare").result()
        pool.submit(contextvars.copy_context().run, lookup, "copied").result()
    bare, copied = (format(span.context.trace_id, "032x") for span in passhat_capture.named("execute_tool lookup"))
    assert copied == ticket.trace_id != bare  # the bare submit started a trace of its own
