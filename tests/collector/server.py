"""A real collector for the tests: the FastAPI app under uvicorn on a free 127.0.0.1 port, in a thread."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import uvicorn
from fastapi import FastAPI

from passhat.collector import create_app
from passhat.collector._keys import create_api_key
from passhat.collector._settings import CollectorSettings
from passhat.collector.store import Store


@dataclass
class RunningCollector:
    url: str
    store: Store
    app: FastAPI


@contextmanager
def running_collector(store: Store, settings: CollectorSettings | None = None) -> Iterator[RunningCollector]:
    app = create_app(settings or CollectorSettings(), store=store)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the collector did not start")
        time.sleep(0.01)
    try:
        yield RunningCollector(f"http://127.0.0.1:{port}", store, app)
    finally:
        server.should_exit = True
        thread.join(20)
        sock.close()


def new_key(store: Store, project: str) -> str:
    return create_api_key(store, project)[0]


@dataclass
class Collector:
    """A running collector with two projects: `shop` (key `shop_key`) and `bank` (key `bank_key`)."""

    url: str
    store: Store
    shop_key: str
    bank_key: str

    def client(self, key: str | None) -> httpx.Client:
        headers = {"authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30.0)
