"""A local HTTP server speaking the OpenAI Chat Completions wire format, answering with recorded turns.

Requests whose system message is the simulated customer's get the customer's recorded turns, the others the
agent's, each in order. Every request body is kept so a test can assert what the real client sent. The base
URL to give a client is `api.url` (it ends in `/v1`, as OpenAI-compatible servers do).
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
    return {"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}


def tool_turn(call_id: str, name: str, arguments: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    """A recorded assistant reply asking for one tool call."""
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return {"message": {"role": "assistant", "content": text, "tool_calls": [call]}, "finish_reason": "tool_calls"}


def is_customer(body: dict[str, Any]) -> bool:
    """Whether a request is the simulated customer's (its system message is the customer prompt)."""
    messages = body.get("messages") or []
    first = messages[0] if messages else {}
    system = first.get("content") if first.get("role") in ("system", "developer") else ""
    return "You are a customer talking" in str(system)


class RecordedChatCompletions:
    """The recorded conversation and everything the client sent."""

    def __init__(self, agent_turns: list[dict[str, Any]], customer_turns: list[dict[str, Any]]) -> None:
        self.turns = {"agent": list(agent_turns), "customer": list(customer_turns)}
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.url = ""
        self._lock = threading.Lock()

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(body)
            role = "customer" if is_customer(body) else "agent"
            if not self.turns[role]:
                error = {"message": f"no recorded {role} turn left", "type": "invalid_request_error", "code": None}
                return 400, {"error": error}
            turn = self.turns[role].pop(0)
            number = len(self.requests)
        return 200, {
            "id": f"chatcmpl-{number:04d}",
            "object": "chat.completion",
            "created": 1_700_000_000 + number,
            "model": body["model"],
            "choices": [{"index": 0, "message": turn["message"], "finish_reason": turn["finish_reason"]}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }


@contextmanager
def chat_completions_api(
    agent_turns: list[dict[str, Any]], customer_turns: list[dict[str, Any]] | None = None
) -> Iterator[RecordedChatCompletions]:
    """Serve the recorded turns on a free 127.0.0.1 port for the duration of the block."""
    api = RecordedChatCompletions(agent_turns, customer_turns or [])

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            api.headers.append({key.lower(): value for key, value in self.headers.items()})
            if self.path.rstrip("/") != "/v1/chat/completions":
                status, payload = 404, {"error": {"message": f"no route {self.path}", "type": "not_found"}}
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
        api.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        yield api


@contextmanager
def failing_chat_completions(
    status: int,
    *,
    answer_every: int = 0,
    answer_first: int = 0,
    message: str = "the model is not loaded",
    code: str | None = None,
) -> Iterator[RecordedChatCompletions]:
    """A Chat Completions server answering ``status`` (a 5xx, 401, ...) and ``message`` to every request, its model
    list too; with ``answer_every`` = n, every n-th request is answered properly instead (a flaky server); with
    ``answer_first`` = n, its first n requests are (a server that fails mid-run): the agent's turn ends with a short
    reply. ``code`` is the error's code and type (OpenAI's "insufficient_quota", say). Yields the server's
    `RecordedChatCompletions` (its `requests` and `url`)."""
    api = RecordedChatCompletions([], [])
    error = {"message": message, "type": code or "server_error", "code": code}

    class Handler(BaseHTTPRequestHandler):
        def _reply(self, code: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._reply(status, {"error": error})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
            with api._lock:
                api.requests.append(body)
                number = len(api.requests)
            if (answer_every and number % answer_every == 0) or number <= answer_first:
                turn = text_turn("Sorry, I cannot help with that.")
                self._reply(200, {
                    "id": f"chatcmpl-{number}", "object": "chat.completion", "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "message": turn["message"], "finish_reason": "stop"}],
                })  # fmt: skip
                return
            self._reply(status, {"error": error})

        def log_message(self, format: str, *args: Any) -> None:
            return

    with served(Handler) as server:
        api.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        yield api
