"""The collector's HTTP connections: a request's headers must arrive within a bound, or the connection is closed.

uvicorn times out idle keep-alive connections only: a client that opens a connection and sends a header byte
every few seconds (slowloris) held its file descriptor for as long as it liked. The bound is the app's
(`CollectorSettings.header_timeout_s`), handed to the connections through the ASGI lifespan state, so the
same protocol class serves a single process and `--workers N` alike. The body's bound is the app's own
(`body_timeout_s`, in the ingest route), where it can be answered with a 408.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

HEADER_TIMEOUT_STATE = "passhat.header_timeout_s"
"""The lifespan-state key under which the app names its header timeout (seconds)."""

_TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"


class TimedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, closing a connection whose request headers take too long.

    The clock starts when the connection opens and again at the first byte of each further request on it;
    it stops when the request's headers are complete."""

    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._header_timer is None:
            self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        timeout = self.app_state.get(HEADER_TIMEOUT_STATE)
        if isinstance(timeout, (int, float)) and timeout > 0:
            self._header_timer = self.loop.call_later(timeout, self._headers_timed_out)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_timed_out(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.write(_TIMED_OUT)
            self.transport.close()
