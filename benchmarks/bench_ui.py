"""Web UI render times on a store of a million spans: each page over real HTTP, cold and warm.

Run:  .venv/bin/python benchmarks/bench_ui.py [--spans 1000000] [--repeats 15] [--store sqlite|chdb] [--json]

Load: the ingest benchmark's requests (56 tickets of 9 spans, 3 state writes each), every ticket renamed to a
unique id, written with `write_batches` into a fresh store; then 8 weekly official runs of 5 task types x 8
sampled tickets x k = 20 trials (with transcripts, tool calls and backend changes, as the replay stores them)
and a few alert notices. The collector app with the UI is served by uvicorn on 127.0.0.1 and each page is
fetched with a Bearer key: once cold (the first request, which also computes the runs' figures) and then
`--repeats` times; the table shows the cold time, the median and the 95th percentile. A page whose median is
above one second fails the run (exit status 1).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import pathlib
import socket
import statistics
import sys
import tempfile
import threading
import time
from typing import Any

import httpx
import uvicorn
from bench_ingest import _Body, _template

from passhat.collector.ingest import CollectorSettings, create_api_key, create_app
from passhat.collector.ingest._otlp import decode_protobuf
from passhat.collector.store import AlertEvent, ReplayRun, SpanBatch, Store, TrialRow, open_store
from passhat.collector.ui import ui_router
from passhat.sandbox import TrialDetails

PROJECT = "bench"
K = 20
PERIODS = 8
SAMPLED = 8


def _fill(store: Store, spans: int) -> tuple[int, float]:
    body = _Body(_template(56, 3), 9)
    written, serial, started = 0, 0, time.perf_counter()
    while written < spans:
        batches = []
        for _ in range(2):
            decoded = decode_protobuf(body.fresh(), max_attribute_bytes=65_536).spans
            for span in decoded:
                if span.ticket is not None:  # a unique id per ticket, as production traffic has
                    serial += 1
                    span.ticket.ticket_id = f"T-{serial:08d}"
                    digest = hashlib.sha256(span.ticket.ticket_id.encode()).digest()[:8]
                    span.ticket.ticket_hash = int.from_bytes(digest, "big")
            batches.append(SpanBatch(PROJECT, decoded))
        store.write_batches(batches)
        written += sum(len(b.spans) for b in batches)
    return written, time.perf_counter() - started


_DIAGNOSTIC = {"message": "orders O-1: status is 'delivered', expected 'refunded'"}


def _trial(run_id: str, task_type: str, ticket_id: str, attempt: int, passed: bool, at: dt.datetime) -> TrialRow:
    return TrialRow(
        run_id=run_id, ticket_id=ticket_id, task_type=task_type, attempt=attempt, passed=passed,
        termination_reason="agent_stop", started_at=at + dt.timedelta(seconds=attempt), duration_s=3.2,
        domain="retail", failure_label=None if passed else "tool_usage.precondition",
        failure_evidence=None if passed else "refund_order rejected: the order was not looked up first",
        verdict={"passed": passed, "check": task_type, "children": [],
                 "diagnostics": [] if passed else [_DIAGNOSTIC]},
        details=TrialDetails.from_json({
            "changes": [{"table": "orders", "key": {"id": "O-1"}, "op": "update", "before": {"status": "delivered"},
                         "after": {"status": "refunded"}}],
            "final_response": "Your refund is on its way.",
            "tool_calls": [{"name": n, "outcome": "ok", "error_type": None, "is_write": n == "refund_order"}
                           for n in ("find_customer", "get_order", "refund_order")],
            "transcript": [["customer", "I would like a refund for my order."] , ["agent", "Let me look it up."]] * 6,
            "simulated": True,
        }),
    )  # fmt: skip


def _runs(store: Store) -> tuple[str, str, str]:
    tickets = store.list_tickets(PROJECT, source="production", limit=5000)
    by_type: dict[str, list[str]] = {}
    for ticket in tickets:
        by_type.setdefault(ticket.task_type, []).append(ticket.ticket_id)
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    run_id = ""
    for week in range(PERIODS):
        period = f"2026-W{40 + week}"
        run_id = f"run-{period}"
        at = now - dt.timedelta(days=7 * (PERIODS - week))
        sampled = {name: ids[week * SAMPLED : (week + 1) * SAMPLED] for name, ids in by_type.items()}
        params = {"period": period, "agent": "bench agent", "agent_version": "1.0", "tickets_per_task_type": SAMPLED,
                  "tickets": [t for ids in sampled.values() for t in ids]}  # fmt: skip
        store.create_replay_run(PROJECT, ReplayRun(run_id, at, k=K, params=params))
        trials = [
            _trial(run_id, name, ticket, a, (a + i + week) % 5 != 0, at)
            for name, ids in sampled.items()
            for i, ticket in enumerate(ids)
            for a in range(K)
        ]
        store.add_trials(PROJECT, trials)
        store.finish_replay_run(PROJECT, run_id, at=at + dt.timedelta(hours=2))
    for n in range(20):
        store.add_alert_event(
            PROJECT,
            AlertEvent(f"alert-{n}", "drop", now - dt.timedelta(hours=n), "refund pass^20 dropped", task_type="refund",
                       payload={"kind": "fired" if n % 2 else "resolved", "details": {"p_value": 0.01}}),
        )  # fmt: skip
    last_ticket = params["tickets"][0]
    return run_id, last_ticket, sorted(by_type)[0]


def _serve(store: Store) -> tuple[uvicorn.Server, threading.Thread, str]:
    app = create_app(CollectorSettings(), store=store, routers=[ui_router()])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    return server, thread, f"http://127.0.0.1:{port}"


def _time(client: httpx.Client, path: str, repeats: int) -> dict[str, Any]:
    def once() -> float:
        started = time.perf_counter()
        response = client.get(path)
        elapsed = time.perf_counter() - started
        if response.status_code != 200:
            raise RuntimeError(f"{path} answered {response.status_code}: {response.text[:300]}")
        return elapsed * 1000

    cold = once()
    warm = sorted(once() for _ in range(repeats))
    p95 = warm[min(len(warm) - 1, round(0.95 * (len(warm) - 1)))]
    return {"path": path, "cold_ms": cold, "median_ms": statistics.median(warm), "p95_ms": p95}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--store", choices=("sqlite", "chdb"), default="sqlite")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="passhat-bench-ui-") as workdir:
        folder = pathlib.Path(workdir)
        url = f"sqlite:///{folder / 'passhat.db'}" if args.store == "sqlite" else f"chdb://{folder / 'chdb'}"
        store = open_store(url)
        key, _ = create_api_key(store, PROJECT)
        written, fill_s = _fill(store, args.spans)
        run_id, ticket_id, task_type = _runs(store)
        server, thread, base = _serve(store)
        pages = [
            "/ui/",
            f"/ui/task-types/{task_type}",
            "/ui/tickets",
            f"/ui/tickets?task_type={task_type}&source=production",
            "/ui/tickets?ticket=T-0004",
            "/ui/tickets?status=error",
            f"/ui/tickets/{ticket_id}",
            "/ui/runs",
            f"/ui/runs/{run_id}",
            f"/ui/runs/{run_id}/tickets/{ticket_id}",
            "/ui/alerts",
        ]
        try:
            with httpx.Client(base_url=base, headers={"authorization": f"Bearer {key}"}, timeout=120) as client:
                results = [_time(client, page, args.repeats) for page in pages]
        finally:
            server.should_exit = True
            thread.join(20)
            store.close()
    summary = {"store": args.store, "spans": written, "fill_s": round(fill_s, 1), "pages": results}
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{written:,} spans in a {args.store} store (filled in {fill_s:.0f} s); page times in ms")
        print(f"{'page':58} {'cold':>8} {'median':>8} {'p95':>8}")
        for r in results:
            print(f"{r['path'][:58]:58} {r['cold_ms']:8.1f} {r['median_ms']:8.1f} {r['p95_ms']:8.1f}")
    slow = [r["path"] for r in results if r["median_ms"] > 1000]
    if slow:
        print(f"slower than 1 s (median): {', '.join(slow)}", file=sys.stderr)
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
