"""Framework agents are private by default: the frameworks' own instrumentation (pydantic-ai, the OpenAI Agents SDK
and LangGraph through OpenInference, OpenLLMetry on the `openai` client) writes what the customer said, the tool
arguments and the tool results into its spans in clear; with passhat's default settings none of the planted
personal values reaches the collector's data directory (the raw bytes of every file, every SQLite cell), and
their keyed pseudonyms, the ones the SDK puts in a ticket's intent, do.

Models are offline: pydantic-ai's FunctionModel, langchain-core's fake chat model, and a local Chat Completions
server the real `openai` client talks to."""

from __future__ import annotations

import asyncio
import os
import pathlib
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

import passhat
from passhat.collector.store import Store
from tests.collector.ingest.chat_completions_server import chat_completions_server
from tests.collector.server import Collector, new_key, running_collector

EMAIL = "ada.lovelace@clinic-mail.org"
PHONE = "+44 20 7946 0958"
OTHER_EMAIL = "grace.hopper@navy-mail.org"
PLANTED = (EMAIL, PHONE, OTHER_EMAIL)

# Its module defines a pydantic model with a class-based Config, which pydantic 2 warns about on import.
_OPENLLMETRY_IMPORT = pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20")


@pytest.fixture
def data_dir(tmp_path: pathlib.Path) -> pathlib.Path:
    folder = tmp_path / "collector-data"
    folder.mkdir()
    return folder


@pytest.fixture
def sqlite_url(data_dir: pathlib.Path) -> str:
    return f"sqlite:///{data_dir / 'passhat.db'}"


@pytest.fixture
def sdk(collector: Collector) -> Iterator[passhat.Passhat]:
    """passhat with its default settings (content capture off, redaction on), exporting to the collector."""
    instance = passhat.configure(endpoint=collector.url, api_key=collector.shop_key, make_global=False)
    yield instance
    instance.shutdown()


def pseudonyms() -> list[str]:
    redactor = passhat.Redactor(key=passhat.PseudonymKey(os.environ["PASSHAT_PSEUDONYM_KEY"]))
    return [redactor.text(value) for value in PLANTED]


def clear_values_in(folder: pathlib.Path) -> list[str]:
    """Where a planted value is found in clear: each file's raw bytes, then each cell of each SQLite table."""
    found: list[str] = []
    files = [path for path in folder.rglob("*") if path.is_file()]
    assert files, "the collector wrote nothing"
    for path in files:
        raw = path.read_bytes()
        found += [f"{path.name}: {value}" for value in PLANTED if value.encode() in raw]
    with sqlite3.connect(folder / "passhat.db") as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                for cell in row:
                    text = cell.decode("utf-8", "replace") if isinstance(cell, bytes) else str(cell)
                    found += [f"{table}: {value}" for value in PLANTED if value in text]
    return found


def all_stored_text(folder: pathlib.Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in folder.rglob("*") if p.is_file())


def assert_private(collector: Collector, data_dir: pathlib.Path, *, expected: int = 2) -> None:
    """No planted value in clear; at least `expected` of their pseudonyms stored (so the spans did arrive)."""
    with collector.client(collector.shop_key) as client:
        assert client.get("/api/tickets").json()["tickets"], "no ticket arrived"
    assert clear_values_in(data_dir) == []
    stored = all_stored_text(data_dir)
    assert sum(pseudonym in stored for pseudonym in pseudonyms()) >= expected


def _flushed(sdk: passhat.Passhat) -> None:
    assert sdk.flush(30)


# --- pydantic-ai: its own OpenTelemetry instrumentation, content included (its default) ------------------------


def _scripted_model() -> Any:
    """A FunctionModel that calls `find_patient` with the planted email, then answers quoting the phone."""
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    def respond(messages: list[Any], info: Any) -> ModelResponse:
        returned = [p for m in messages for p in getattr(m, "parts", ()) if isinstance(p, ToolReturnPart)]
        if not returned:
            return ModelResponse(parts=[ToolCallPart("find_patient", {"email": EMAIL}, tool_call_id="call_1")])
        return ModelResponse(parts=[TextPart(f"We will call you at {PHONE}.")])

    return FunctionModel(respond)


def test_pydantic_ai_messages_tool_arguments_and_results_are_pseudonymised(
    collector: Collector, sdk: passhat.Passhat, data_dir: pathlib.Path
) -> None:
    from pydantic_ai import Agent, InstrumentationSettings
    from pydantic_ai.capabilities.instrumentation import Instrumentation

    settings = InstrumentationSettings(tracer_provider=sdk.tracer_provider)  # content included by default
    agent = Agent(_scripted_model(), name="front_desk", capabilities=[Instrumentation(settings=settings)])

    @agent.tool_plain
    def find_patient(email: str) -> dict[str, str]:
        """Find a patient by email."""
        return {"email": email, "phone": PHONE, "referred_by": OTHER_EMAIL}

    result = asyncio.run(agent.run(f"Hi, I am {EMAIL}, my phone is {PHONE}."))
    assert PHONE in result.output  # the agent itself sees and says the clear values
    _flushed(sdk)
    assert_private(collector, data_dir, expected=3)


def test_set_global_with_instrument_all_keeps_personal_data_out(data_dir: pathlib.Path, sql_store: Store) -> None:
    """The path docs/sdk.md shows: `configure(set_global=True)` and pydantic-ai's `Agent.instrument_all()`."""
    key = new_key(sql_store, "shop")
    script = textwrap.dedent(
        """
        import asyncio
        import passhat
        from pydantic_ai import Agent
        from tests.collector.ingest.test_framework_privacy import EMAIL, OTHER_EMAIL, PHONE, _scripted_model

        passhat.configure(set_global=True)
        Agent.instrument_all()
        agent = Agent(_scripted_model(), name="front_desk")

        @agent.tool_plain
        def find_patient(email: str) -> dict[str, str]:
            return {"email": email, "phone": PHONE, "referred_by": OTHER_EMAIL}

        asyncio.run(agent.run(f"Hi, I am {EMAIL}, my phone is {PHONE}."))
        assert passhat.flush(30)
        """
    )
    with running_collector(sql_store) as running:
        env = {**os.environ, "PASSHAT_ENDPOINT": running.url, "PASSHAT_API_KEY": key}
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 0, done.stderr
        assert_private(Collector(running.url, sql_store, key, key), data_dir, expected=3)


def test_a_tracer_provider_of_the_app_with_send_true_is_redacted_too(
    collector: Collector, data_dir: pathlib.Path
) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from pydantic_ai import Agent, InstrumentationSettings
    from pydantic_ai.capabilities.instrumentation import Instrumentation

    provider = TracerProvider()
    sdk = passhat.configure(
        endpoint=collector.url, api_key=collector.shop_key, tracer_provider=provider, send=True, make_global=False
    )
    try:
        settings = InstrumentationSettings(tracer_provider=provider)
        agent = Agent(_scripted_model(), name="front_desk", capabilities=[Instrumentation(settings=settings)])

        @agent.tool_plain
        def find_patient(email: str) -> str:
            return f"patient {email}, phone {PHONE}, referred by {OTHER_EMAIL}"

        asyncio.run(agent.run(f"I am {EMAIL}"))
        _flushed(sdk)
    finally:
        sdk.shutdown()
        provider.shutdown()
    assert_private(collector, data_dir, expected=3)


# --- the OpenAI Agents SDK, through OpenInference's tracing processor ------------------------------------------


def test_openai_agents_sdk_through_openinference_is_pseudonymised(
    collector: Collector, sdk: passhat.Passhat, data_dir: pathlib.Path
) -> None:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_trace_processors
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    set_trace_processors([])  # only OpenInference's processor: OpenTelemetry spans, to passhat
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=sdk.tracer_provider)
    try:

        @function_tool
        def find_patient(email: str) -> str:
            """Find a patient by email."""
            return f"patient {email}, phone {PHONE}, referred by {OTHER_EMAIL}"

        with chat_completions_server({"email": EMAIL}) as (url, _):
            client = AsyncOpenAI(base_url=url, api_key="x")
            model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client)
            agent = Agent(name="Front desk", instructions="Help.", tools=[find_patient], model=model)
            asyncio.run(Runner.run(agent, f"I am {EMAIL}, phone {PHONE}"))
        _flushed(sdk)
    finally:
        instrumentor.uninstrument()
    assert_private(collector, data_dir, expected=3)


# --- LangGraph, through OpenInference's LangChain instrumentor ------------------------------------------------


def test_langgraph_through_openinference_is_pseudonymised(
    collector: Collector, sdk: passhat.Passhat, data_dir: pathlib.Path
) -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.tools import tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
    from openinference.instrumentation.langchain import LangChainInstrumentor

    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=sdk.tracer_provider)
    try:

        @tool
        def find_patient(email: str) -> str:
            """Find a patient by email."""
            return f"patient {email}, phone {PHONE}, referred by {OTHER_EMAIL}"

        call = {"name": "find_patient", "args": {"email": EMAIL}, "id": "call_lg_1", "type": "tool_call"}
        model = GenericFakeChatModel(
            messages=iter([AIMessage(content="", tool_calls=[call]), AIMessage(content=f"We will call {PHONE}.")])
        )

        def agent(state: MessagesState) -> dict[str, Any]:
            return {"messages": [model.invoke(state["messages"])]}

        graph = StateGraph(MessagesState)
        graph.add_node("agent", agent)
        graph.add_node("tools", ToolNode([find_patient]))
        graph.add_edge(START, "agent")
        graph.add_conditional_edges("agent", tools_condition)
        graph.add_edge("tools", "agent")
        graph.compile(name="front_desk").invoke({"messages": [HumanMessage(f"I am {EMAIL}")]})
        _flushed(sdk)
    finally:
        instrumentor.uninstrument()
    assert_private(collector, data_dir, expected=3)


# --- OpenLLMetry: opentelemetry-instrumentation-openai on the real client -------------------------------------


@_OPENLLMETRY_IMPORT
def test_openllmetry_prompts_and_completions_are_pseudonymised(
    collector: Collector, sdk: passhat.Passhat, data_dir: pathlib.Path
) -> None:
    from openai import OpenAI
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=sdk.tracer_provider)
    try:
        tools: list[Any] = [
            {
                "type": "function",
                "function": {
                    "name": "find_patient",
                    "description": "Find a patient by email.",
                    "parameters": {"type": "object", "properties": {"email": {"type": "string"}}},
                },
            }
        ]
        with chat_completions_server({"email": EMAIL}) as (url, _), sdk.ticket("T-OLL-PII", task_type="intake"):
            llm = OpenAI(base_url=url, api_key="x")
            messages: list[Any] = [{"role": "user", "content": f"I am {EMAIL}, phone {PHONE}"}]
            first = llm.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools)
            [requested] = first.choices[0].message.tool_calls or []
            messages.append(first.choices[0].message.model_dump(exclude_none=True))
            answer = f"patient {EMAIL}, referred by {OTHER_EMAIL}"
            messages.append({"role": "tool", "tool_call_id": requested.id, "content": answer})
            llm.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools)
        _flushed(sdk)
    finally:
        instrumentor.uninstrument()
    assert_private(collector, data_dir, expected=3)
