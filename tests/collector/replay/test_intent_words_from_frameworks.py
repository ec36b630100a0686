"""The customer's words intent inference reads, from the spans of a framework instrumented through OpenInference
(LangGraph, the OpenAI Agents SDK) with passhat's default settings (content capture off): its LLM spans carry the
user messages as flattened attributes (``llm.input_messages.N.message.content``), which inference did not read,
so every such ticket without a recorded intent was "not replayable: no customer message was captured"."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any

import pytest

import passhat
from passhat.collector.replay._intent import customer_messages
from passhat.collector.store import TicketDetail
from tests.collector.ingest.chat_completions_server import chat_completions_server
from tests.collector.server import Collector

EMAIL = "ada.lovelace@clinic-mail.org"
SAID = f"Hi, I'm {EMAIL}; please move my appointment A-17 to Friday."


@pytest.fixture
def sdk(collector: Collector) -> Iterator[passhat.Passhat]:
    """passhat as a new user configures it: content capture off, redaction on."""
    instance = passhat.configure(endpoint=collector.url, api_key=collector.shop_key, make_global=False)
    yield instance
    instance.shutdown()


def _words_of(collector: Collector, sdk: passhat.Passhat, ticket_id: str) -> list[str]:
    assert sdk.flush(30)
    detail = collector.store.get_ticket("shop", ticket_id)
    assert isinstance(detail, TicketDetail), f"ticket {ticket_id} was not stored"
    return customer_messages(detail)


def _pseudonymised(text: str) -> str:
    return passhat.Redactor(key=passhat.PseudonymKey(os.environ["PASSHAT_PSEUDONYM_KEY"])).text(text)


def test_langgraph_user_messages_are_the_customers_words(collector: Collector, sdk: passhat.Passhat) -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.graph import START, MessagesState, StateGraph
    from openinference.instrumentation.langchain import LangChainInstrumentor

    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=sdk.tracer_provider)
    try:
        model = GenericFakeChatModel(messages=iter([AIMessage(content="Moved to Friday.")]))

        def agent(state: MessagesState) -> dict[str, Any]:
            return {"messages": [model.invoke(state["messages"])]}

        graph = StateGraph(MessagesState)
        graph.add_node("agent", agent)
        graph.add_edge(START, "agent")
        with sdk.ticket("LG-1", task_type="move_appointment") as ticket:  # no intent: inference's job
            ticket.customer_says(SAID)  # content capture off: an event without the text
            graph.compile(name="desk").invoke({"messages": [HumanMessage(SAID)]})
    finally:
        instrumentor.uninstrument()
    words = _words_of(collector, sdk, "LG-1")
    assert words == [_pseudonymised(SAID)] and EMAIL not in words[0]


def test_openai_agents_sdk_user_messages_are_the_customers_words(collector: Collector, sdk: passhat.Passhat) -> None:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, set_trace_processors
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    set_trace_processors([])
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=sdk.tracer_provider)
    try:
        with chat_completions_server({}) as (url, _):
            model = OpenAIChatCompletionsModel(
                model="gpt-4o-mini", openai_client=AsyncOpenAI(base_url=url, api_key="x")
            )
            agent = Agent(name="Front desk", instructions="Help the patient.", model=model)
            with sdk.ticket("OA-1", task_type="move_appointment"):
                asyncio.run(Runner.run(agent, SAID))
    finally:
        instrumentor.uninstrument()
    # The system instructions and the model's reply are not the customer's; each user message is said once,
    # though every model call repeats the conversation so far.
    assert _words_of(collector, sdk, "OA-1") == [_pseudonymised(SAID)]


def test_openllmetry_and_openinference_parts_are_read_in_their_messages_order() -> None:
    from passhat.collector.replay._intent import _flattened_user_texts

    attributes = {
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "You are a desk agent.",
        "llm.input_messages.10.message.role": "user",
        "llm.input_messages.10.message.contents.1.message_content.text": "second part",
        "llm.input_messages.10.message.contents.0.message_content.text": "first part",
        "llm.input_messages.2.message.role": "user",
        "llm.input_messages.2.message.content": "earlier",
        "llm.input_messages.3.message.role": "assistant",
        "llm.input_messages.3.message.content": "not the customer",
    }
    assert _flattened_user_texts(attributes) == ["earlier", "first part", "second part"]
    openllmetry = {"gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": "rules",
                   "gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": "cancel order 7"}  # fmt: skip
    assert _flattened_user_texts(openllmetry) == ["cancel order 7"]
