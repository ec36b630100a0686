"""A local OpenAI Chat Completions server for framework tests (the real `openai` client talks to it over HTTP).

Scripted like a model that uses one tool: a request whose last message is not a tool result is answered with a
call of the first tool the request offers (arguments from `arguments`); once the tool's result is in the
conversation, with a text answer. Usage figures are returned, so instrumentations record token counts.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.service_stubs import StubServer


def _completion(model: str, message: dict[str, Any], finish: str, number: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {"prompt_tokens": 40 + number, "completion_tokens": 7, "total_tokens": 47 + number},
    }


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if not self.path.endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
            return
        with self.server.lock:
            self.server.requests.append(body)
            number = len(self.server.requests)
        messages = body.get("messages") or []
        tools = body.get("tools") or []
        model = str(body.get("model") or "gpt-4o-mini")
        if tools and not (messages and messages[-1].get("role") == "tool"):
            name = tools[0]["function"]["name"]
            call = {
                "id": f"call_{number}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(self.server.arguments)},
            }
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
            self._send(200, _completion(model, message, "tool_calls", number))
        else:
            message = {"role": "assistant", "content": "Your order has shipped."}
            self._send(200, _completion(model, message, "stop", number))

    def _send(self, status: int, document: dict[str, Any]) -> None:
        payload = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class _Server(StubServer):
    daemon_threads = True

    def __init__(self, arguments: dict[str, Any]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.arguments = arguments


@contextmanager
def chat_completions_server(arguments: dict[str, Any]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(base URL for `openai.OpenAI(base_url=...)`, the requests received), while the block runs."""
    server = _Server(arguments)
    thread = threading.Thread(target=server.serve_forever, daemon=True, name="chat-completions")
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", server.requests
    finally:
        server.shutdown()
        server.server_close()
