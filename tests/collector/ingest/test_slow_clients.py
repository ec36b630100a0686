"""Slow clients cannot hold connections: headers must arrive within `header_timeout_s`, a body within
`body_timeout_s`; past that the collector answers 408 and closes the connection."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from passhat.collector import CollectorSettings
from passhat.collector.store import Store
from tests.collector.ingest.otlp_payloads import passhat_ticket, request
from tests.collector.server import RunningCollector, new_key, running_collector

TIMEOUT = 0.5


@pytest.fixture
def slow_guarded(sql_store: Store) -> Iterator[tuple[RunningCollector, str]]:
    settings = CollectorSettings(key_cache_s=0.0, header_timeout_s=TIMEOUT, body_timeout_s=TIMEOUT)
    key = new_key(sql_store, "shop")
    with running_collector(sql_store, settings) as running:
        yield running, key


def _connect(running: RunningCollector) -> socket.socket:
    host, port = running.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    return sock


def _until_closed(sock: socket.socket) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and how long that took."""
    started = time.monotonic()
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received, time.monotonic() - started


def test_a_connection_that_sends_nothing_is_closed(slow_guarded: tuple[RunningCollector, str]) -> None:
    with _connect(slow_guarded[0]) as sock:
        received, waited = _until_closed(sock)
    assert received.startswith(b"HTTP/1.1 408")
    assert waited < TIMEOUT + 3


def test_headers_sent_a_byte_at_a_time_are_cut_off(slow_guarded: tuple[RunningCollector, str]) -> None:
    started = time.monotonic()
    with _connect(slow_guarded[0]) as sock:
        sock.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        try:
            for byte in b"X-Slow: 1234567890\r\n":
                time.sleep(0.1)
                sock.sendall(bytes([byte]))  # each byte well inside any idle timeout
        except (BrokenPipeError, ConnectionResetError):
            pass
        received, _ = _until_closed(sock)
    assert received.startswith(b"HTTP/1.1 408")
    assert time.monotonic() - started < TIMEOUT + 3


def test_a_body_that_does_not_arrive_is_a_408(slow_guarded: tuple[RunningCollector, str]) -> None:
    running, key = slow_guarded
    head = (
        f"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
        "Content-Type: application/x-protobuf\r\nContent-Length: 1000\r\n\r\n"
    )
    with _connect(running) as sock:
        sock.sendall(head.encode() + b"\x0a\x00")
        received, waited = _until_closed(sock)
    assert received.startswith(b"HTTP/1.1 408")
    assert b"did not arrive within 0.5 s" in received
    assert waited < TIMEOUT + 3


def test_a_prompt_client_on_a_kept_alive_connection_is_unaffected(slow_guarded: tuple[RunningCollector, str]) -> None:
    running, key = slow_guarded
    body = request(passhat_ticket("T-1", tools=1)).SerializeToString()
    head = (
        f"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
        f"Content-Type: application/x-protobuf\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with _connect(running) as sock:
        for _ in range(3):
            sock.sendall(head + body)
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
            time.sleep(TIMEOUT * 0.6)  # idle between requests: the keep-alive timeout's business, not this one
    assert running.store.count_spans("shop") == 2
