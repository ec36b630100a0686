"""SIGKILL mid-load: every span whose request got a 2xx survives; re-sending adds nothing twice.

The collector runs as `passhat serve` in its own process, on a SQLite file, and is killed with SIGKILL (no
shutdown hook runs) while several clients are sending.
"""

from __future__ import annotations

import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest

from passhat.collector.ingest._keys import create_api_key
from passhat.collector.store import open_store
from tests.collector.ingest.otlp_payloads import passhat_ticket, request

PASSHAT = pathlib.Path(sys.executable).with_name("passhat")
HEADERS = {"content-type": "application/x-protobuf"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(data_dir: pathlib.Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    process = subprocess.Popen(
        [str(PASSHAT), "serve", "--port", str(port), "--data-dir", str(data_dir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline or process.poll() is not None:
            process.kill()
            raise RuntimeError("passhat serve did not start")
        time.sleep(0.1)


@pytest.mark.slow
def test_sigkill_mid_load_loses_no_acknowledged_span(tmp_path: pathlib.Path) -> None:
    url_of_store = f"sqlite:///{tmp_path / 'passhat.db'}"
    with open_store(url_of_store) as store:
        key, _ = create_api_key(store, "shop")
    auth = {**HEADERS, "authorization": f"Bearer {key}"}
    batches = [
        [span for t in range(4) for span in passhat_ticket(f"T-{b}-{t}", tools=4, writes_per_tool=2)]
        for b in range(240)
    ]
    bodies = [request(batch).SerializeToString() for batch in batches]
    ids = [{(s.trace_id.hex(), s.span_id.hex()) for s in batch} for batch in batches]

    server, url = _serve(tmp_path)
    acked: set[int] = set()
    lock = threading.Lock()

    def client(worker: int) -> None:
        with httpx.Client(base_url=url, headers=auth, timeout=10) as http:
            for index in range(worker, len(bodies), 4):
                try:
                    response = http.post("/v1/traces", content=bodies[index])
                except httpx.HTTPError:
                    return  # the collector is gone
                if response.status_code == 200:
                    with lock:
                        acked.add(index)

    threads = [threading.Thread(target=client, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 60
    while len(acked) < 30 and time.monotonic() < deadline:
        time.sleep(0.005)
    os.kill(server.pid, signal.SIGKILL)
    server.wait(10)
    for thread in threads:
        thread.join(30)
    assert 30 <= len(acked) < len(bodies), "the kill must land in the middle of the load"

    with open_store(url_of_store) as store:
        stored = {(s.trace_id, s.span_id) for b in acked for s in _trace_spans(store, batches[b])}
        for index in acked:
            assert ids[index] <= stored, f"batch {index} was acknowledged but is not all in the store"
        before = store.count_spans("shop")

    server, url = _serve(tmp_path)  # restart on the same data
    try:
        with httpx.Client(base_url=url, headers=auth, timeout=30) as http:
            for body in bodies:  # every batch again, acknowledged or not
                assert http.post("/v1/traces", content=body).status_code == 200
            metrics = http.get("/metrics").text
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)
    unique = len(set().union(*ids))
    with open_store(url_of_store) as store:
        assert store.count_spans("shop") == unique
        # each ticket counted once in the daily traffic, whatever was re-sent
        assert sum(t.tickets for t in store.traffic("shop", days=1)) == len(bodies) * 4
    deduplicated = float(re.search(r"^passhat_spans_deduplicated_total (\S+)$", metrics, re.M)[1])  # type: ignore[index]
    assert deduplicated == before  # exactly the spans stored before the kill came back as duplicates


def _trace_spans(store: object, batch: list[object]) -> list[object]:
    from passhat.collector.store import Store

    assert isinstance(store, Store)
    traces = {s.trace_id.hex() for s in batch}  # type: ignore[attr-defined]
    return [span for trace in traces for span in store.get_trace("shop", trace)]
