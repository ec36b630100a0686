"""The collector running inside another program (the demo, the scheduler's tests): uvicorn in a thread."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import uvicorn
from fastapi import APIRouter, FastAPI

from passhat.collector.ingest._app import create_app
from passhat.collector.ingest._settings import CollectorSettings
from passhat.collector.store import Store


@dataclass
class RunningCollector:
    """A collector serving OTLP/HTTP on ``url`` (127.0.0.1, a free port) in front of ``store``."""

    url: str
    store: Store
    app: FastAPI


@contextmanager
def running_collector(
    store: Store,
    settings: CollectorSettings | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    routers: Sequence[APIRouter] = (),
) -> Iterator[RunningCollector]:
    """Serve the collector app on a free local port (or ``port``) in a background thread until the block ends."""
    app = create_app(settings or CollectorSettings(), store=store, routers=routers)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="passhat-collector")
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            sock.close()
            raise RuntimeError("the collector did not start within 20 seconds")
        time.sleep(0.01)
    try:
        yield RunningCollector(f"http://{host}:{bound}", store, app)
    finally:
        server.should_exit = True
        thread.join(20)
        sock.close()
