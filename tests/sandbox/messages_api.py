"""A local HTTP server speaking the Anthropic Messages API wire format, answering with recorded turns.

Requests whose system prompt is the simulated customer's get the customer's recorded turns, the others the
agent's, each in order. Every request body is kept so a test can assert what the real client sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.service_stubs import served


def text_turn(text: str) -> dict[str, Any]:
    """A recorded assistant reply ending its turn."""
    return {"content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}


def tool_turn(call_id: str, name: str, arguments: dict[str, Any], text: str = "") -> dict[str, Any]:
    """A recorded assistant reply asking for one tool call."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content.append({"type": "tool_use", "id": call_id, "name": name, "input": arguments})
    return {"content": content, "stop_reason": "tool_use"}


class RecordedMessagesApi:
    """The recorded conversation and everything the client sent."""

    def __init__(self, agent_turns: list[dict[str, Any]], customer_turns: list[dict[str, Any]]) -> None:
        self.turns = {"agent": list(agent_turns), "customer": list(customer_turns)}
        self.requests: list[dict[str, Any]] = []
        self.url = ""
        self._lock = threading.Lock()

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(body)
            role = "customer" if "You are a customer talking" in str(body.get("system", "")) else "agent"
            if not self.turns[role]:
                return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": f"no {role} turn"}}
            turn = self.turns[role].pop(0)
        return 200, {
            "id": f"msg_{len(self.requests):04d}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": turn["content"],
            "stop_reason": turn["stop_reason"],
            "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 20},
        }


@contextmanager
def messages_api(
    agent_turns: list[dict[str, Any]], customer_turns: list[dict[str, Any]]
) -> Iterator[RecordedMessagesApi]:
    """Serve the recorded turns on a free 127.0.0.1 port for the duration of the block."""
    api = RecordedMessagesApi(agent_turns, customer_turns)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path.rstrip("/") != "/v1/messages":
                status, payload = 404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}}
            else:
                status, payload = api.answer(body)
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    with served(Handler) as server:
        api.url = f"http://127.0.0.1:{server.server_address[1]}"
        yield api
