"""`customer_says` / `agent_says` take text, a chat message dict or content parts (OpenAI and Anthropic shapes)."""

from __future__ import annotations

from typing import Any

import pytest

import passhat
from passhat.testing import Capture, capture


def _said(spans: Capture) -> list[tuple[str, str]]:
    return [
        (event.name, str((event.attributes or {}).get("passhat.message.content")))
        for span in spans.tickets()
        for event in span.events
    ]


@pytest.mark.parametrize(
    ("message", "text"),
    [
        ("Where is O-1?", "Where is O-1?"),
        ({"role": "user", "content": "Where is O-1?"}, "Where is O-1?"),
        ({"role": "user", "content": [{"type": "text", "text": "Where is O-1?"}]}, "Where is O-1?"),
        ([{"type": "text", "text": "Where is"}, {"type": "text", "text": "O-1?"}], "Where is\nO-1?"),
        (  # Anthropic: an image and a tool result carry no text of the customer's
            {
                "role": "user",
                "content": [
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}},
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "found"},
                    {"type": "text", "text": "Where is O-1?"},
                ],
            },
            "Where is O-1?",
        ),
        ({"role": "user", "content": [{"type": "input_text", "text": "Where is O-1?"}]}, "Where is O-1?"),  # Responses
        ({"type": "text", "text": "Where is O-1?"}, "Where is O-1?"),  # one content part
        (["Where is", "O-1?"], "Where is\nO-1?"),
    ],
)
def test_the_text_of_each_shape_is_recorded(passhat_capture: Capture, message: Any, text: str) -> None:
    with passhat.ticket("T-1", task_type="refund") as ticket:
        ticket.customer_says(message)
    assert _said(passhat_capture) == [("passhat.customer_message", text)]


def test_an_agent_message_dict_is_recorded_and_redacted(passhat_capture: Capture) -> None:
    with passhat.ticket("T-1", task_type="refund") as ticket:
        ticket.agent_says({"role": "assistant", "content": [{"type": "text", "text": "Mailed ada@example.com."}]})
        ticket.agent_says({"role": "assistant", "content": None, "tool_calls": [{"id": "call_1"}]})
    [(event, said), (_, empty)] = _said(passhat_capture)
    assert event == "passhat.agent_message" and "ada@example.com" not in said and said.endswith("@example.com.")
    assert empty == ""


@pytest.mark.parametrize(
    "message",
    [
        42,
        None,
        b"Where is O-1?",
        {"role": "user"},
        {"role": "user", "content": 42},
        [{"type": "text", "text": "Hi"}, 42],
        [{"type": "text", "text": {"value": "Hi"}}],
    ],
)
def test_any_other_shape_is_a_type_error_naming_the_accepted_ones(message: Any) -> None:
    with capture(capture_content=False), passhat.ticket("T-1", task_type="refund") as ticket:
        with pytest.raises(TypeError, match="passhat: a") as raised:
            ticket.customer_says(message)
        with pytest.raises(TypeError):
            ticket.agent_says(message)
    if "'text' must be a str" not in str(raised.value):
        assert "a chat message dict with a 'content'" in str(raised.value)
        assert "[{'type': 'text', 'text': 'Hi'}]" in str(raised.value)
