"""Stand-in agent services on 127.0.0.1 that misbehave the way a real one can: real HTTP servers, pytest-free."""

from __future__ import annotations

import contextlib
import http.server
import sys
import threading
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def misbehaving_service(kind: str) -> Iterator[str]:
    """A service answering each POST by ``kind``: "never" (no answer until the block ends) or "hangs up" (reads the
    turn, then closes the connection without a status line). Yields its turn URL."""
    release = threading.Event()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            if kind == "never":
                release.wait(30)
                return
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self.close_connection = True  # no status line, no body

        def log_message(self, format: str, *args: object) -> None:
            return None

    if kind not in ("never", "hangs up"):
        raise ValueError(f"kind is 'never' or 'hangs up', got {kind!r}")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/turn"
    finally:
        release.set()
        server.shutdown()
        server.server_close()


class StubServer(http.server.ThreadingHTTPServer):
    """A threading HTTP server that lets a client hang up on it: a client that stops a run closes the calls it has
    in flight, and the reply's write then fails (broken pipe, reset). That is the client's right, not a bug of the
    stub, so it is not printed as a traceback into the output a test reads. Any other error still is."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


@contextlib.contextmanager
def served(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[Any]:
    """``handler`` served on a free port of 127.0.0.1 by a thread until the block ends; yields the server (its
    ``server_address[1]`` is the port)."""
    server = StubServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
