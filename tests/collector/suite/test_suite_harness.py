"""`passhat suite run` with an agent service that is not running: every trial is lost to the harness (never the
agent's failure), and the command says so, exits 1, and does not reuse that run once the agent is up; `suite table`
names the run and why instead of "share no task"."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from passhat.collector.cli import app
from tests.service_stubs import StubServer

pytestmark = pytest.mark.slow


def _closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Declines(http.server.BaseHTTPRequestHandler):
    """An agent service that answers every turn by declining: its trials fail, as the agent's own failures."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"text": "I cannot help with that.", "final": True}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def _agent_service(port: int) -> Iterator[None]:
    server = StubServer(("127.0.0.1", port), _Declines)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_an_unreachable_agent_fails_the_run_which_is_run_again_once_the_agent_is_up(tmp_path: Path) -> None:
    port = _closed_port()
    store = f"sqlite:///{tmp_path / 'suite.db'}"
    args = ["suite", "run", "--agent", f"http://127.0.0.1:{port}/agent", "--k", "2", "--domains", "retail",
            "--task-type", "cancel_pending_order", "--store", store]  # fmt: skip

    broken = CliRunner().invoke(app, args, terminal_width=200)
    assert broken.exit_code == 1, broken.output
    assert "14 trial(s) ended in infra_error" in broken.output and "could not be reached" in broken.output
    assert "is the agent service running" in broken.output  # the fix
    error = next(line for line in broken.output.splitlines() if line.startswith("passhat: error:"))
    assert "all 14 trials of suite run suite-v1-" in error and "were lost to the harness" in error
    assert "could not be reached" in error and "Traceback" not in broken.output
    first = error.split("suite run ", 1)[1].split()[0]

    again = CliRunner().invoke(app, [*args, "--json"])  # the agent is still down: not reused, run again
    assert again.exit_code == 1
    summary = json.loads(again.stdout)
    assert not summary["reused"] and summary["ran"] == 14 and summary["settled"] == 0
    assert summary["run_id"] != first and summary["harness_failures"][0]["trials"] == 14

    table = CliRunner().invoke(app, ["suite", "table", first, "--store", store], terminal_width=300)
    assert table.exit_code == 2
    assert f"all 14 trials of run {first} were lost to the harness" in table.output
    assert "share no task" not in table.output

    with _agent_service(port):  # the agent started: the same command runs the suite, no --fresh needed
        measured = CliRunner().invoke(app, [*args, "--json"])
        assert measured.exit_code == 0, measured.output
        run = json.loads(measured.stdout)
        assert not run["reused"] and run["ran"] == 14 and run["settled"] == 14 and run["harness_failures"] == []
        reused = CliRunner().invoke(app, [*args, "--json"])  # a run that measured the agent is reused
        assert reused.exit_code == 0 and json.loads(reused.stdout)["run_id"] == run["run_id"]
        assert json.loads(reused.stdout)["reused"]
