"""A local HTTP server that answers ``POST /v1/messages`` in the Anthropic Messages API wire format.

Responses are recorded shapes of real API answers: a text reply, a tool_use turn (when the request offers
tools and the last user turn is text), the same as server-sent events when ``"stream": true``, and a 400
error for a request without ``max_tokens``.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.service_stubs import StubServer


def _message(model: str, wants_tool: bool) -> dict[str, Any]:
    if wants_tool:
        content: list[dict[str, Any]] = [
            {"type": "text", "text": "Let me look that order up."},
            {"type": "tool_use", "id": "toolu_01A", "name": "find_order", "input": {"order_id": "O-1"}},
        ]
        stop_reason = "tool_use"
    else:
        content = [{"type": "text", "text": "Your refund is on its way."}]
        stop_reason = "end_turn"
    return {
        "id": "msg_01XYZ",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 321,
            "output_tokens": 42,
            "cache_read_input_tokens": 200,
            "cache_creation_input_tokens": 8,
        },
    }


def _events(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    start = dict(message, content=[], stop_reason=None, usage={"input_tokens": 321, "output_tokens": 1})
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    events.append(("ping", {"type": "ping"}))
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            events.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
            events.append(
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": block["text"]},
                    },
                )
            )
        else:
            events.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": dict(block, input={})},
                )
            )
            events.append(
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
                    },
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": 42},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


class MessagesApiServer:
    """Serves the Messages API on 127.0.0.1 (a free port); ``requests`` keeps every request body."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._server: StubServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> MessagesApiServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                owner.requests.append(body)
                if self.path != "/v1/messages" or not body.get("max_tokens"):
                    self._json(
                        400,
                        {
                            "type": "error",
                            "error": {
                                "type": "invalid_request_error",
                                "message": "max_tokens: Field required",
                            },
                        },
                    )
                    return
                last = body["messages"][-1]
                wants_tool = bool(body.get("tools")) and isinstance(last.get("content"), str)
                message = _message(body["model"], wants_tool)
                if body.get("stream"):
                    payload = "".join(
                        f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in _events(message)
                    ).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                self._json(200, message)

            def _json(self, status: int, data: dict[str, Any]) -> None:
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("request-id", "req_local")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self._server = StubServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
