"""instrument_anthropic through the real anthropic client against a local Messages API server."""

from __future__ import annotations

import importlib.util
import json
import pathlib
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest
from opentelemetry.trace import SpanKind

import passhat
import passhat.testing
from passhat.testing import Capture


def _load_server_class() -> Any:
    """The local Messages API server class, loaded from its file next to this test."""
    path = pathlib.Path(__file__).with_name("messages_api_server.py")
    spec = importlib.util.spec_from_file_location("passhat_test_messages_api_server", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MessagesApiServer


MessagesApiServer = _load_server_class()

MODEL = "claude-local-test"  # any name: the local server echoes it; no deprecation warnings
TOOLS = [
    {
        "name": "find_order",
        "description": "Look up an order",
        "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    }
]


@pytest.fixture
def api() -> Iterator[MessagesApiServer]:
    server = MessagesApiServer().start()
    yield server
    server.stop()


@pytest.fixture
def instrumented() -> Iterator[passhat.Instrumentation]:
    with passhat.instrument_anthropic() as handle:
        yield handle


def _client(api: MessagesApiServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="sk-test", base_url=api.url, max_retries=0)


@passhat.tool
def find_order(order_id: str) -> dict[str, str]:
    return {"order_id": order_id, "status": "delivered"}


def test_a_plain_reply_is_a_chat_span_with_usage_and_stop_reason(
    api: MessagesApiServer, instrumented: passhat.Instrumentation, passhat_capture: Capture
) -> None:
    with passhat.ticket("T-1", task_type="refund"), _client(api) as client:
        reply = client.messages.create(
            model=MODEL, max_tokens=256, messages=[{"role": "user", "content": "Where is my refund?"}]
        )
    assert reply.content[0].type == "text"
    span = passhat_capture.one(f"chat {MODEL}")
    ticket = passhat_capture.one("invoke_agent")
    assert span.kind is SpanKind.CLIENT
    assert span.parent is not None and span.parent.span_id == ticket.context.span_id
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": MODEL,
        "gen_ai.request.max_tokens": 256,
        "gen_ai.response.model": MODEL,
        "gen_ai.response.id": "msg_01XYZ",
        "gen_ai.usage.input_tokens": 321,
        "gen_ai.usage.output_tokens": 42,
        "gen_ai.usage.cache_read.input_tokens": 200,
        "gen_ai.usage.cache_creation.input_tokens": 8,
        "gen_ai.response.finish_reasons": ("end_turn",),
        # passhat_capture records content: the GenAI conventions' message attributes
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": "Where is my refund?"}]}], separators=(",", ":")
        ),
        "gen_ai.output.messages": json.dumps(
            [
                {
                    "role": "assistant",
                    "parts": [{"type": "text", "content": "Your refund is on its way."}],
                    "finish_reason": "end_turn",
                }
            ],
            separators=(",", ":"),
        ),
    }


def test_tool_definitions_system_instructions_and_tool_call_parts_are_recorded_redacted(
    api: MessagesApiServer, instrumented: passhat.Instrumentation, passhat_capture: Capture
) -> None:
    with passhat.ticket("T-5", task_type="refund"), _client(api) as client:
        client.messages.create(
            model=MODEL,
            max_tokens=256,
            tools=TOOLS,
            system="You help jane.doe@example.com's customers",
            messages=[{"role": "user", "content": "Refund O-1, I am jane.doe@example.com"}],
        )
    attributes = passhat_capture.one(f"chat {MODEL}").attributes or {}
    [definition] = json.loads(str(attributes["gen_ai.tool.definitions"]))
    assert (definition["name"], definition["description"]) == ("find_order", "Look up an order")
    assert "jane.doe@example.com" not in str(attributes["gen_ai.input.messages"])
    assert "jane.doe@example.com" not in str(attributes["gen_ai.system_instructions"])
    [output] = json.loads(str(attributes["gen_ai.output.messages"]))
    assert [p["type"] for p in output["parts"]] == ["text", "tool_call"]
    assert (output["parts"][1]["id"], output["parts"][1]["name"]) == ("toolu_01A", "find_order")


def test_messages_are_not_recorded_without_content_capture(api: MessagesApiServer) -> None:
    with (
        passhat.testing.capture(capture_content=False) as captured,
        passhat.instrument_anthropic(),
        passhat.ticket("T-6", task_type="refund"),
        _client(api) as client,
    ):
        client.messages.create(model=MODEL, max_tokens=256, tools=TOOLS, messages=[{"role": "user", "content": "hi"}])
    attributes = captured.one(f"chat {MODEL}").attributes or {}
    assert not {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.definitions"} & set(attributes)


def test_the_ticket_span_names_the_provider_of_its_llm_calls(
    api: MessagesApiServer, instrumented: passhat.Instrumentation, passhat_capture: Capture
) -> None:
    with passhat.ticket("T-7", task_type="refund"), _client(api) as client:
        client.messages.create(model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    assert (passhat_capture.one("invoke_agent").attributes or {})["gen_ai.provider.name"] == "anthropic"


def test_tool_use_ids_link_the_following_tool_spans(
    api: MessagesApiServer, instrumented: passhat.Instrumentation, passhat_capture: Capture
) -> None:
    with passhat.ticket("T-2", task_type="refund"), _client(api) as client:
        reply = client.messages.create(
            model=MODEL, max_tokens=256, tools=TOOLS, messages=[{"role": "user", "content": "Refund O-1"}]
        )
        for block in reply.content:
            if block.type == "tool_use":
                find_order(**block.input)  # type: ignore[arg-type]
    chat = passhat_capture.one(f"chat {MODEL}")
    tool = passhat_capture.one("execute_tool find_order")
    assert (chat.attributes or {})["passhat.chat.tool_call_ids"] == ("toolu_01A",)
    assert (chat.attributes or {})["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert (tool.attributes or {})["gen_ai.tool.call.id"] == "toolu_01A"


def test_a_streamed_reply_ends_its_span_when_the_stream_ends(
    api: MessagesApiServer, instrumented: passhat.Instrumentation, passhat_capture: Capture
) -> None:
    with passhat.ticket("T-3", task_type="refund"), _client(api) as client:
        stream = client.messages.create(
            model=MODEL,
            max_tokens=256,
            tools=TOOLS,
            stream=True,
            messages=[{"role": "user", "content": "Refund O-1"}],
        )
        assert passhat_capture.named(f"chat {MODEL}") == []  # still streaming
        kinds = [event.type for event in stream]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    attributes = passhat_capture.one(f"chat {MODEL}").attributes or {}
    assert attributes["gen_ai.usage.input_tokens"] == 321
    assert attributes["gen_ai.usage.output_tokens"] == 42
    assert attributes["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert attributes["passhat.chat.tool_call_ids"] == ("toolu_01A",)


async def test_async_create_and_async_stream(
    api: MessagesApiServer, instrumented: passhat.Instrumentation, passhat_capture: Capture
) -> None:
    client = anthropic.AsyncAnthropic(api_key="sk-test", base_url=api.url, max_retries=0)
    async with client, passhat.ticket("T-4", task_type="refund"):
        await client.messages.create(model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "hello"}])
        stream = await client.messages.create(
            model=MODEL, max_tokens=64, stream=True, messages=[{"role": "user", "content": "hello"}]
        )
        async for _event in stream:
            pass
    plain, streamed = passhat_capture.named(f"chat {MODEL}")
    for span in (plain, streamed):
        assert (span.attributes or {})["gen_ai.usage.output_tokens"] == 42
        assert (span.attributes or {})["gen_ai.response.finish_reasons"] == ("end_turn",)


def test_an_api_error_is_recorded_with_its_type(
    api: MessagesApiServer, instrumented: passhat.Instrumentation, passhat_capture: Capture
) -> None:
    with _client(api) as client, pytest.raises(anthropic.BadRequestError):
        client.messages.create(
            model=MODEL,
            max_tokens=64,
            messages=[{"role": "user", "content": "hi"}],
            extra_body={"max_tokens": None},
        )
    span = passhat_capture.one(f"chat {MODEL}")
    assert (span.attributes or {})["error.type"] == "BadRequestError"
    assert span.status.status_code.name == "ERROR"


def test_uninstrument_restores_the_client(api: MessagesApiServer, passhat_capture: Capture) -> None:
    passhat.instrument_anthropic().uninstrument()
    with _client(api) as client:
        client.messages.create(model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    assert passhat_capture.spans == []


def test_the_stream_helper_is_a_chat_span_closed_with_the_stream(
    api: Any, instrumented: passhat.Instrumentation, passhat_capture: Capture
) -> None:
    with passhat.ticket("T-5", task_type="refund"), _client(api) as client:
        with client.messages.stream(
            model=MODEL, max_tokens=128, tools=TOOLS, messages=[{"role": "user", "content": "Refund O-1"}]
        ) as stream:
            text = "".join(stream.text_stream)
            assert passhat_capture.named(f"chat {MODEL}") == []
        find_order("O-1")
    assert text == "Let me look that order up."
    attributes = passhat_capture.one(f"chat {MODEL}").attributes or {}
    assert attributes["gen_ai.usage.input_tokens"] == 321
    assert attributes["gen_ai.usage.output_tokens"] == 42
    assert attributes["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert attributes["passhat.chat.tool_call_ids"] == ("toolu_01A",)
    tool = passhat_capture.one("execute_tool find_order")
    assert (tool.attributes or {})["gen_ai.tool.call.id"] == "toolu_01A"


async def test_the_async_stream_helper(
    api: Any, instrumented: passhat.Instrumentation, passhat_capture: Capture
) -> None:
    client = anthropic.AsyncAnthropic(api_key="sk-test", base_url=api.url, max_retries=0)
    async with (
        client,
        client.messages.stream(model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "hi"}]) as stream,
    ):
        message = await stream.get_final_message()
    assert message.stop_reason == "end_turn"
    attributes = passhat_capture.one(f"chat {MODEL}").attributes or {}
    assert attributes["gen_ai.response.finish_reasons"] == ("end_turn",)
    assert attributes["gen_ai.usage.output_tokens"] == 42
