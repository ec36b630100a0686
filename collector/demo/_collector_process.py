"""The demo's collector: `passhat serve` in a child process on a free local port, stopped when the block ends.

A separate process, as in a real deployment: ingest decodes on the other core while the demo's agent runs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def collector_process(store_url: str, log_path: Path) -> Iterator[str]:
    """Run `passhat serve --store URL` on 127.0.0.1 and yield its base URL once /healthz answers."""
    port = _free_port()
    command = [
        sys.executable, "-c", "from passhat.collector.cli import main; main()",
        "serve", "--host", "127.0.0.1", "--port", str(port), "--store", store_url,
    ]  # fmt: skip
    with log_path.open("ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the collector exited with status {process.returncode}; see {log_path}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/healthz", timeout=1.0).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the collector did not answer /healthz within 60 s; see {log_path}")
            time.sleep(0.1)
        yield url
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
