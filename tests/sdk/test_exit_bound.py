"""An agent's whole exit, the interpreter's own shutdown included, stays within `export_timeout` (5 s by default,
docs/sdk.md) when its collector accepts connections and never answers."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

pytestmark = pytest.mark.slow

AGENT = """
import sys, time
import passhat

passhat.configure(endpoint=sys.argv[1], api_key="ph-test-key", service_name="exit-bound"{timeout})
for index in range(int(sys.argv[2])):
    with passhat.ticket(f"T-{{index}}", task_type="refund"):
        pass
time.sleep(float(sys.argv[3]))  # with a pause, the worker is inside an export to the hanging collector
print(time.monotonic(), flush=True)  # the agent's last line: from here on the exit is passhat's and Python's
"""


@pytest.fixture
def hanging_collector() -> Iterator[str]:
    """Accepts every connection, reads nothing, answers nothing."""
    server = socket.create_server(("127.0.0.1", 0), backlog=64)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()
        for connection in held:
            connection.close()


@pytest.fixture
def trickling_collector() -> Iterator[str]:
    """Accepts every connection and answers one byte of a status line every 0.2 s, for 30 s: each byte starts
    the client's read timeout again."""
    server = socket.create_server(("127.0.0.1", 0), backlog=64)
    stop = threading.Event()
    held: list[socket.socket] = []

    def trickle(connection: socket.socket) -> None:
        for byte in (b"HTTP/1.1 200 OK\r\n" * 10)[:150]:
            if stop.wait(0.2):
                return
            try:
                connection.sendall(bytes([byte]))
            except OSError:
                return

    def accept() -> None:
        while True:
            try:
                connection = server.accept()[0]
            except OSError:
                return
            held.append(connection)
            threading.Thread(target=trickle, args=(connection,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        server.shutdown(socket.SHUT_RDWR)
        server.close()
        for connection in held:
            connection.close()


def _exit_seconds(endpoint: str, *, tickets: int, pause: float, export_timeout: float | None = None) -> float:
    timeout = "" if export_timeout is None else f", export_timeout={export_timeout}"
    command = [sys.executable, "-c", AGENT.format(timeout=timeout), endpoint, str(tickets), str(pause)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as process:
        assert process.stdout is not None
        last_line = process.stdout.readline()
        process.wait(60)
        exited = time.monotonic()  # CLOCK_MONOTONIC is one clock for every process of the machine
    assert process.returncode == 0 and last_line, "the agent did not finish"
    return exited - float(last_line)


@pytest.mark.parametrize(
    ("tickets", "pause"), [(1, 1.5), (600, 0.0)], ids=["export-in-flight", "more-than-a-batch-queued"]
)
def test_the_agents_exit_stays_within_the_documented_five_seconds(
    hanging_collector: str, tickets: int, pause: float
) -> None:
    assert _exit_seconds(hanging_collector, tickets=tickets, pause=pause) <= 5.0


def test_a_shorter_export_timeout_bounds_the_exit_too(hanging_collector: str) -> None:
    assert _exit_seconds(hanging_collector, tickets=1, pause=1.5, export_timeout=2.0) <= 2.0


def test_an_answer_trickling_in_byte_by_byte_holds_neither_a_flush_nor_a_shutdown(trickling_collector: str) -> None:
    """A read timeout is per byte received, so no timeout given to a request bounds it against such an answer:
    flush(timeout=...) and shutdown() used to wait for all of it (30 s here). They wait on another thread now."""
    import passhat

    instance = passhat.configure(
        endpoint=trickling_collector, export_timeout=1.0, export_interval=60, make_global=False
    )
    with instance.ticket("T-1", task_type="refund"):
        pass
    started = time.monotonic()
    flushed = instance.flush(timeout=1.0)
    flush_took = time.monotonic() - started
    with instance.ticket("T-2", task_type="refund"):
        pass
    started = time.monotonic()
    instance.shutdown()
    shutdown_took = time.monotonic() - started
    assert not flushed
    assert flush_took < 1.0 + 1.5, flush_took  # the noise allowed as in test_export.py
    assert shutdown_took < 1.0 + 1.5, shutdown_took
