"""The ScriptedCustomer: reveals facts only when asked, confirms, and ends only after a final answer."""

from __future__ import annotations

from passhat.sandbox import CustomerScript, Message, ScriptedCustomer
from passhat.sandbox.agents._customer import infer_asks

SCRIPT = CustomerScript(
    goal="Cancel order #W1.",
    opening="Please cancel my order #W1.",
    facts={"email": "a@example.com", "order_id": "#W1", "reason": "no longer needed"},
    stated=("order_id",),
    unknown=("customer_id",),
    fallback={"payment": "paypal"},
)


async def test_the_opening_states_only_the_stated_facts() -> None:
    opening = await ScriptedCustomer(SCRIPT).opening()
    assert opening.role == "customer" and opening.facts == {"order_id": "#W1"}


async def test_a_fact_is_revealed_only_when_asked() -> None:
    customer = ScriptedCustomer(SCRIPT)
    reply = await customer.respond([Message("agent", "What is your email?", asks=("email",))])
    assert reply.facts == {"email": "a@example.com"} and "a@example.com" in reply.text
    assert "reason" not in reply.facts


async def test_unknown_facts_are_admitted_not_invented() -> None:
    reply = await ScriptedCustomer(SCRIPT).respond([Message("agent", "Your customer id?", asks=("customer_id",))])
    assert reply.facts == {} and "don't know" in reply.text


async def test_a_confirmation_request_is_not_the_end() -> None:
    customer = ScriptedCustomer(SCRIPT)
    reply = await customer.respond([Message("agent", "I will cancel #W1. Shall I go ahead?", asks=("confirm",))])
    assert reply.facts == {"confirm": True} and not reply.stop
    done = await customer.respond([Message("agent", "Order #W1 is cancelled.", final=True)])
    assert done.stop


async def test_the_fallback_is_offered_when_asked() -> None:
    reply = await ScriptedCustomer(SCRIPT).respond([Message("agent", "Another method?", asks=("fallback",))])
    assert reply.facts == {"payment": "paypal"}


async def test_an_agent_that_never_asks_runs_out_the_customers_patience() -> None:
    customer = ScriptedCustomer(SCRIPT, patience=2)
    chatter = [Message("agent", "Hmm, let me think about that?")]
    replies = [await customer.respond(chatter) for _ in range(3)]
    assert [r.stop for r in replies] == [False, False, True]


def test_free_text_questions_are_read_by_keywords() -> None:
    assert infer_asks("Could you give me the email on the account?") == ("email",)
    assert infer_asks("What is your full name and zip code?") == ("first_name", "last_name", "zip")
    assert infer_asks("I will cancel it. Shall I proceed?") == ("confirm",)
    assert infer_asks("Your order is cancelled.") == ()
