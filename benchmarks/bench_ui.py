"""Web UI server times at scale: every page over real HTTP on a store of a million spans and a million trials,
and the first overview after a fresh start.

Run:  .venv/bin/python benchmarks/bench_ui.py [--spans 1000000] [--trials 1000000] [--repeats 15] [--starts 3]
                                              [--store sqlite|chdb] [--keep DIR] [--json]

Load: the ingest benchmark's requests (56 tickets of 9 spans, 3 state writes each), every ticket renamed to a
unique id, written with `write_batches` (a million spans: 111,000 production tickets), half of them graded (one
in five failed, with a signature); then the read benchmark's 8 weekly official runs holding `--trials` trials
(15 task types over 3 domains, k = 20, `bench_read.build`: each trial with its verdict and trial record), and a
few alert notices. `--keep DIR` builds the store there once and reuses it.

The collector app with the UI is served by uvicorn on 127.0.0.1, with the garbage collector tuned as `passhat
serve` tunes it (`tune_gc`), and each page is fetched with a Bearer key: once
cold (the first request) and then `--repeats` times; the table shows the cold time, the median and the 95th
percentile (server time as the client sees it on 127.0.0.1). `first overview after a start` opens the store
afresh and starts a new app (nothing cached) `--starts` times and times its first overview: the median is shown.
The run fails (exit status 1) when a page's median is above 200 ms or the first overview's above 1 s.
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

import bench_read
import httpx
import uvicorn
from bench_ingest import _Body, _template

from passhat.collector.cli._serve import tune_gc
from passhat.collector.ingest import CollectorSettings, create_api_key, create_app
from passhat.collector.ingest._otlp import decode_protobuf
from passhat.collector.store import AlertEvent, ProductionVerdict, SpanBatch, Store, open_store
from passhat.collector.ui import ui_router

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


def _grade(store: Store) -> tuple[str, str]:
    """Every second production ticket graded, one in five of them failed; a few report and alert notices.
    Returns a ticket id with spans and a graded failure's signature."""
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    offset, first = 0, ""
    while True:
        rows = store.search_tickets(PROJECT, source="production", limit=20_000, offset=offset)
        if not rows:
            break
        first = first or rows[len(rows) // 2].ticket_id
        verdicts = [
            ProductionVerdict(
                ticket_id=r.ticket_id, trace_id=r.trace_id, task_type=r.task_type, start_time_ns=r.start_time_ns,
                passed=n % 5 != 0, graded_at=now, domain="retail", signature=None if n % 5 else "wrong_entity",
                evidence=None if n % 5 else "refunded order O-2, not O-1", verdict=None, graded_by="run-bench",
            )
            for n, r in enumerate(rows[::2])
        ]  # fmt: skip
        store.put_production_verdicts(PROJECT, verdicts)
        offset += len(rows)
    for n in range(20):
        store.add_alert_event(
            PROJECT,
            AlertEvent(f"alert-{n}", "drop", now - dt.timedelta(hours=n), "type00 pass^20 dropped", task_type="type00",
                       payload={"kind": "fired" if n % 2 else "resolved", "details": {"p_value": 0.01}}),
        )  # fmt: skip
    return first, "wrong_entity"


def _build(url: str, spans: int, trials: int) -> tuple[int, float]:
    started = time.perf_counter()
    store = open_store(url)
    try:
        written, _ = _fill(store, spans)
        _grade(store)
        bench_read.build(store, trials)
    finally:
        store.close()
    return written, time.perf_counter() - started


def _serve(store: Store) -> tuple[uvicorn.Server, threading.Thread, str]:
    tune_gc()  # as `passhat serve` does before it serves
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


def _pages(store: Store) -> list[str]:
    """A URL of every page (and the ticket list's filters and sorts), on the built store."""
    runs = store.list_replay_runs(PROJECT, limit=1)
    run_id = runs[0].run_id
    sampled = store.ticket_tallies(PROJECT, run_id)
    failing = min(sampled, key=lambda t: (t.passes / t.trials if t.trials else 1.0, t.ticket_id))
    graded = store.search_tickets_by_verdict(PROJECT, "failed", limit=1)[0]
    intent = store.search_tickets(PROJECT, source="production", limit=1, offset=1000)[0]
    week = dt.datetime.fromtimestamp(graded.start_time_ns / 1e9, dt.UTC).isocalendar()
    return [
        "/ui/",
        f"/ui/task-types/{failing.task_type}",
        "/ui/tickets",
        "/ui/tickets?sort=verdict",
        "/ui/tickets?sort=task_type",
        "/ui/tickets?verdict=failed",
        "/ui/tickets?signature=wrong_entity&sort=verdict",
        f"/ui/tickets?q={graded.ticket_id[:8]}",
        f"/ui/tickets?q={(intent.intent or {}).get('order_id', 'O-1')}",
        "/ui/tickets?domain=retail",
        f"/ui/tickets?period={week.year}-W{week.week:02d}",
        f"/ui/tickets?task_type={graded.task_type}&source=production",
        "/ui/tickets?status=error",
        "/ui/tickets?offset=5000",
        f"/ui/tickets/{graded.ticket_id}",
        f"/ui/tickets/{failing.ticket_id}",
        "/ui/runs",
        f"/ui/runs/{run_id}",
        f"/ui/runs/{run_id}?offset=3000",
        f"/ui/runs/{run_id}/tickets/{failing.ticket_id}",
        "/ui/alerts",
        "/ui/login",
    ]


def _first_overview(url: str, key: str) -> float:
    """A start: the store opened afresh, a new app (nothing cached), its first overview in ms."""
    store = open_store(url)
    server, thread, base = _serve(store)
    try:
        with httpx.Client(base_url=base, headers={"authorization": f"Bearer {key}"}, timeout=300) as client:
            started = time.perf_counter()
            response = client.get("/ui/")
            elapsed = (time.perf_counter() - started) * 1000
            if response.status_code != 200:
                raise RuntimeError(f"the overview answered {response.status_code}: {response.text[:300]}")
            return elapsed
    finally:
        server.should_exit = True
        thread.join(20)
        store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=1_000_000)
    parser.add_argument("--trials", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--store", choices=("sqlite", "chdb"), default="sqlite")
    parser.add_argument("--keep", type=pathlib.Path, help="build the store here (reused when it exists)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    folder = args.keep or pathlib.Path(tempfile.mkdtemp(prefix="passhat-bench-ui-"))
    folder.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{folder / 'passhat.db'}" if args.store == "sqlite" else f"chdb://{folder / 'chdb'}"
    marker = folder / f"built-{args.store}-{args.spans}-{args.trials}.json"
    if not marker.exists():
        written, build_s = _build(url, args.spans, args.trials)
        marker.write_text(json.dumps({"spans": written, "build_s": build_s}))
    built = json.loads(marker.read_text())
    store = open_store(url)
    key, _ = create_api_key(store, PROJECT)
    pages = _pages(store)
    store.close()
    # Fresh starts first: the page timings below would warm the OS's file cache for them anyway.
    starts = [_first_overview(url, key) for _ in range(args.starts)]
    store = open_store(url)
    server, thread, base = _serve(store)
    try:
        with httpx.Client(base_url=base, headers={"authorization": f"Bearer {key}"}, timeout=300) as client:
            results = [_time(client, page, args.repeats) for page in pages]
    finally:
        server.should_exit = True
        thread.join(20)
        store.close()
    first = statistics.median(starts)
    summary = {
        "store": args.store, "spans": built["spans"], "trials": args.trials, "build_s": round(built["build_s"], 1),
        "first_overview_ms": first, "first_overview_samples_ms": starts, "pages": results,
    }  # fmt: skip
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"{built['spans']:,} spans and {args.trials:,} trials in a {args.store} store "
              f"(built in {built['build_s']:.0f} s); server times in ms, median of {args.repeats}")  # fmt: skip
        print(f"first overview after a start (median of {args.starts} starts): {first:.0f} ms")
        print(f"{'page':64} {'cold':>8} {'median':>8} {'p95':>8}")
        for r in results:
            print(f"{r['path'][:64]:64} {r['cold_ms']:8.1f} {r['median_ms']:8.1f} {r['p95_ms']:8.1f}")
    slow = [r["path"] for r in results if r["median_ms"] > 200]
    if slow:
        print(f"slower than 200 ms (median): {', '.join(slow)}", file=sys.stderr)
    if first > 1000:
        print(f"the first overview after a start took {first:.0f} ms (over 1 s)", file=sys.stderr)
    return 1 if slow or first > 1000 else 0


if __name__ == "__main__":
    sys.exit(main())
