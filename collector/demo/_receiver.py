"""A local webhook receiver: the demo's stand-in for a team's alert endpoint (127.0.0.1, a free port)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class WebhookReceiver:
    """Collects JSON bodies POSTed to it; use as a context manager."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                try:
                    received.append(json.loads(body or b"{}"))
                except json.JSONDecodeError:
                    received.append({"raw": body.decode("utf-8", "replace")})
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/passhat-alerts"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True, name="demo-webhook")

    def __enter__(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()
