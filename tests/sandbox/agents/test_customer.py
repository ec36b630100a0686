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
    assert done.stop and done.text == "Thank you, that's all."  # `stop` ends it: no ###STOP### in the transcript


async def test_the_fallback_is_offered_when_asked() -> None:
    reply = await ScriptedCustomer(SCRIPT).respond([Message("agent", "Another method?", asks=("fallback",))])
    assert reply.facts == {"payment": "paypal"}


async def test_an_agent_that_never_asks_runs_out_the_customers_patience() -> None:
    customer = ScriptedCustomer(SCRIPT, patience=2)
    chatter = [Message("agent", "Hmm, let me think about that?")]
    replies = [await customer.respond(chatter) for _ in range(3)]
    assert [r.stop for r in replies] == [False, False, True]
    assert "###" not in replies[-1].text


RETAIL_WORDS = CustomerScript(
    goal="Cancel order #W1.",
    opening="Please cancel my order #W1.",
    facts={"email": "a@example.com", "first_name": "Ann", "last_name": "Lee", "zip": "10001", "order_id": "#W1"},
    asked_as={"first_name": ("full name",), "last_name": ("full name",), "order_id": ("order number",)},
)

IT_REQUEST = CustomerScript(
    goal="Reset the MFA device of my report Bo Chen.",
    opening="Hi, I manage Bo Chen and he lost his phone; please reset his MFA.",
    facts={"requester_employee_id": "E100", "employee_id": "E207", "card_last_four": "4242"},
    unknown=("ticket_number",),
    asked_as={"requester_employee_id": ("your employee id", "your staff number"), "employee_id": ("his employee id",)},
    subject={"name": "Bo Chen"},
)


def test_free_text_questions_are_read_by_the_scripts_words() -> None:
    assert infer_asks("Could you give me the email on the account?", RETAIL_WORDS) == ("email",)
    assert infer_asks("What is your full name and zip code?", RETAIL_WORDS) == ("first_name", "last_name", "zip")
    assert infer_asks("What is the order number?", RETAIL_WORDS) == ("order_id",)
    assert infer_asks("I will cancel it. Shall I proceed?", RETAIL_WORDS) == ("confirm",)
    assert infer_asks("Your order is cancelled.", RETAIL_WORDS) == ()


def test_a_customer_answers_in_its_own_domains_words() -> None:
    asks = infer_asks("Before I start: what is your staff number, and his employee id?", IT_REQUEST)
    assert asks == ("requester_employee_id", "employee_id")
    # A fact without declared words is asked for by its key's words.
    assert infer_asks("What are the card last four digits?", IT_REQUEST) == ("card_last_four",)
    assert infer_asks("What is your email?", IT_REQUEST) == ()


async def test_a_free_text_question_about_an_unknown_fact_is_admitted() -> None:
    reply = await ScriptedCustomer(IT_REQUEST).respond([Message("agent", "What is the ticket number?")])
    assert reply.facts == {} and "don't know" in reply.text


def test_the_requester_and_the_subject_can_differ() -> None:
    assert IT_REQUEST.subject == {"name": "Bo Chen"}
    assert SCRIPT.subject == {}


async def test_a_yes_to_a_proposed_action_is_recorded_with_the_action() -> None:
    customer = ScriptedCustomer(SCRIPT)
    proposal = Message("agent", "I will cancel #W1. Shall I go ahead?", asks=("confirm",), proposes="cancel_order")
    reply = await customer.respond([proposal])
    assert reply.consent == "cancel_order" and "yes" in reply.text.lower()


async def test_a_yes_to_a_free_text_question_consents_to_whatever_it_proposed() -> None:
    customer = ScriptedCustomer(SCRIPT)
    reply = await customer.respond([Message("agent", "I can cancel order #W1 now. Shall I proceed?")])
    assert reply.consent == "*"
    answer = await customer.respond([Message("agent", "What is your email?", asks=("email",))])
    assert answer.consent is None  # only a yes is a consent
