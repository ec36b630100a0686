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
