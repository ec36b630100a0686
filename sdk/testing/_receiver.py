"""A local OTLP/HTTP trace receiver for tests and benchmarks: decodes exactly what an exporter sent."""

from __future__ import annotations

import gzip
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return tuple(_value(item) for item in any_value.array_value.values)
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in any_value.kvlist_value.values}
    return getattr(any_value, kind)


def _attributes(key_values: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in key_values}


@dataclass
class ReceivedSpan:
    """One span as it arrived on the wire."""

    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: int
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    resource: dict[str, Any]
    status_code: int
    start_time_unix_nano: int
    end_time_unix_nano: int


@dataclass
class ReceivedRequest:
    """One POST: its headers, the raw (possibly gzipped) body, and the spans decoded from it."""

    path: str
    headers: dict[str, str]
    body: bytes
    spans: list[ReceivedSpan] = field(default_factory=list)


def decode_request(body: bytes, content_encoding: str | None) -> list[ReceivedSpan]:
    """The spans of an OTLP ``ExportTraceServiceRequest`` body (protobuf, optionally gzipped)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    raw = gzip.decompress(body) if content_encoding == "gzip" else body
    request = ExportTraceServiceRequest()
    request.ParseFromString(raw)
    spans: list[ReceivedSpan] = []
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    ReceivedSpan(
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex(),
                        name=span.name,
                        kind=span.kind,
                        attributes=_attributes(span.attributes),
                        events=[(event.name, _attributes(event.attributes)) for event in span.events],
                        resource=resource,
                        status_code=span.status.code,
                        start_time_unix_nano=span.start_time_unix_nano,
                        end_time_unix_nano=span.end_time_unix_nano,
                    )
                )
    return spans


class OtlpReceiver:
    """An HTTP server on 127.0.0.1 accepting ``POST /v1/traces``; stop and start it to simulate an outage.

    ``status`` sets the HTTP status it answers with (e.g. 503 to refuse); ``delay`` makes it answer that many
    seconds late (a slow collector); ``decode=False`` only counts bytes and requests (benchmarks that must not
    spend CPU decoding).
    """

    def __init__(self, port: int = 0, *, decode: bool = True) -> None:
        self.port = port
        self.decode = decode
        self.status = 200
        self.delay = 0.0
        self.requests: list[ReceivedRequest] = []
        self.span_count = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL to configure as passhat's endpoint."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def spans(self) -> list[ReceivedSpan]:
        """Every span received so far."""
        with self._lock:
            return [span for request in self.requests for span in request.spans]

    def start(self) -> OtlpReceiver:
        """Listen (on the same port again after a stop)."""
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if receiver.delay > 0:
                    time.sleep(receiver.delay)
                status = receiver.status
                if status == 200:
                    receiver._record(self.path, dict(self.headers.items()), body)
                self.send_response(status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return None

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, args=(0.05,), name="otlp-receiver", daemon=True)
        self._thread.start()
        return self

    def _record(self, path: str, headers: dict[str, str], body: bytes) -> None:
        spans = decode_request(body, headers.get("Content-Encoding"))
        count = len(spans)
        if not self.decode:  # count only: keep no bodies or spans in memory
            spans, body = [], b""
        with self._lock:
            self.requests.append(ReceivedRequest(path, headers, body, spans))
            self.span_count += count

    def stop(self) -> None:
        """Stop listening: connections are refused until :meth:`start`."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def wait_for_spans(self, count: int, timeout: float = 10.0) -> list[ReceivedSpan]:
        """Wait until at least ``count`` spans arrived; fail with how many did."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.span_count >= count:
                return self.spans
            time.sleep(0.01)
        raise AssertionError(f"expected {count} spans at the receiver within {timeout}s, got {self.span_count}")

    def __enter__(self) -> OtlpReceiver:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
