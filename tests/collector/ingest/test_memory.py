"""Memory after a burst: a collector that took a burst of large requests (protobuf split in parts, JSON validated
whole then split) hands the memory back: its resident size returns near where it was before the burst.

The collector runs as `passhat serve` in its own process, so its resident size is its own; the bound is on
sizes, not times (the test waits for the queue to drain, however long that takes on a busy machine)."""

from __future__ import annotations

import json
import os
import pathlib
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from passhat.collector.ingest._keys import create_api_key
from passhat.collector.store import open_store
from tests.collector.ingest.otlp_payloads import passhat_ticket, request, to_otlp_json

PASSHAT = pathlib.Path(sys.executable).with_name("passhat")
MIB = 1024 * 1024


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _status_mib(pid: int, field: str) -> float:
    """VmRSS (resident now) or VmHWM (the resident peak) of a process, in MiB."""
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def _copies(template: ExportTraceServiceRequest, count: int) -> list[ExportTraceServiceRequest]:
    """`count` requests like `template`, each with trace ids of its own (so none is a re-delivery)."""
    out = []
    for _ in range(count):
        copy = ExportTraceServiceRequest()
        copy.CopyFrom(template)
        renamed: dict[bytes, bytes] = {}
        for span in copy.resource_spans[0].scope_spans[0].spans:
            span.trace_id = renamed.setdefault(span.trace_id, os.urandom(16))
        out.append(copy)
    return out


@pytest.mark.slow
def test_memory_returns_near_its_baseline_after_a_burst_of_large_requests(tmp_path: pathlib.Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'passhat.db'}") as store:
        key, _ = create_api_key(store, "shop")
    # 1,200 tickets = 10,800 spans, ~3 MiB of protobuf; JSON of 300 tickets, ~7 MiB (under the 16 MiB limit),
    # validated whole then re-encoded as protobuf. Both are large: the heap is trimmed after each.
    big = request([s for i in range(1200) for s in passhat_ticket(f"B-{i}", tools=8)])
    json_template = request([s for i in range(300) for s in passhat_ticket(f"J-{i}", tools=8)])
    protobuf_bodies = [m.SerializeToString() for m in _copies(big, 5)]
    json_bodies = [json.dumps(to_otlp_json(m)).encode() for m in _copies(json_template, 3)]
    assert all(len(b) > 2 * MIB for b in protobuf_bodies) and all(2 * MIB < len(b) < 16 * MIB for b in json_bodies)

    port = _free_port()
    server = subprocess.Popen(
        [str(PASSHAT), "serve", "--port", str(port), "--data-dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    headers = {"authorization": f"Bearer {key}"}
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline and server.poll() is None, "passhat serve did not start"
            time.sleep(0.2)

        def send(body: bytes, media: str) -> None:
            with httpx.Client(base_url=url, headers=headers, timeout=300) as client:
                answer = client.post("/v1/traces", content=body, headers={"content-type": media})
                assert answer.status_code == 200, answer.text

        # Warm up with large requests of both kinds, so imports and caches count in the baseline, SQLite's page
        # cache (64 MiB per connection) among them: the store is then past 64 MiB.
        send(protobuf_bodies[0], "application/x-protobuf")
        send(protobuf_bodies[1], "application/x-protobuf")
        send(json_bodies[0], "application/json")
        baseline = _status_mib(server.pid, "VmRSS")

        threads = [threading.Thread(target=send, args=(b, "application/x-protobuf")) for b in protobuf_bodies[2:]]
        threads += [threading.Thread(target=send, args=(b, "application/json")) for b in json_bodies[1:]]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(600)
        assert not any(thread.is_alive() for thread in threads)
        health = httpx.get(f"{url}/healthz", timeout=10).json()
        assert (health["queued_bytes"], health["queued_spans"]) == (0, 0)
        peak = _status_mib(server.pid, "VmHWM")
        # The collector trims its heap once idle (0.5 s after the last large request): watch it come down.
        bound = baseline + 0.85 * (peak - baseline)
        deadline = time.monotonic() + 30
        after = _status_mib(server.pid, "VmRSS")
        while after > bound and time.monotonic() < deadline:
            time.sleep(0.25)
            after = _status_mib(server.pid, "VmRSS")
    finally:
        server.terminate()
        server.wait(60)

    with open_store(f"sqlite:///{tmp_path / 'passhat.db'}") as store:
        assert store.count_spans("shop") == 5 * 10_800 + 3 * 2_700
    burst = sum(len(b) for b in protobuf_bodies[2:] + json_bodies[1:]) / MIB
    print(f"baseline {baseline:.0f} MiB, peak {peak:.0f} MiB, after {after:.0f} MiB; burst of {burst:.0f} MiB")
    # The burst took memory (so the test measures something), and a good part of it came back: what stays
    # (allocator fragmentation, SQLite's page cache still filling) varies from run to run: between 34% and 61%
    # of the rise in four runs on 2 cores, so at least 15% must come back. Before the heap trim, all of it stayed.
    assert peak - baseline > burst, (baseline, peak, after)
    assert after <= bound, (baseline, peak, after)
