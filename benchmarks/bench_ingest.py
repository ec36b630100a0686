"""Ingest benchmark: sustained spans/s with zero loss into the passhat collector, side by side with Phoenix.

A load generator in a separate process sends OTLP/HTTP protobuf batches of realistic agent traces (a ticket
root span, 8 tool spans, 3 state-write events per ticket by default; 56 tickets = 504 spans per request, like an
OpenTelemetry BatchSpanProcessor's 512) from several connections for a fixed time, retrying on 429/503 after
Retry-After. Then the spans in the store are counted: every acknowledged span must be there.

    .venv/bin/python benchmarks/bench_ingest.py                      # passhat on SQLite only
    .venv/bin/python benchmarks/bench_ingest.py --state-writes 24    # 3 state writes on every tool span
    .venv/bin/python benchmarks/bench_ingest.py --phoenix /tmp/phoenix-venv/bin/phoenix

Phoenix is not a passhat dependency: install it in a throwaway venv outside the repo
(`python3 -m venv /tmp/phoenix-venv && /tmp/phoenix-venv/bin/pip install arize-phoenix`). Both collectors get
the same load in the same run, one after the other, and the ratio of their end-to-end rates is printed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import pathlib
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parent.parent
PASSHAT = pathlib.Path(sys.executable).with_name("passhat")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- the load generator (runs in its own process) ---------------------------------------------------------


def _template(tickets: int, state_writes: int = 3) -> Any:
    """One request's worth of agent traces, as a protobuf message whose ids are rewritten per send.

    Each ticket: a root agent span, 8 tool spans, and `state_writes` row changes recorded as events on its tool
    spans, spread over them (3: one on each of three tools; 24: three on every tool).
    """
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

    def kv(key: str, value: Any) -> KeyValue:
        if isinstance(value, list):
            return KeyValue(
                key=key,
                value=AnyValue(array_value=ArrayValue(values=[AnyValue(string_value=v) for v in value])),
            )
        if isinstance(value, int):
            return KeyValue(key=key, value=AnyValue(int_value=value))
        return KeyValue(key=key, value=AnyValue(string_value=value))

    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.extend(
        [kv("service.name", "bench-agent"), kv("deployment.environment", "bench")]
    )
    scope = resource_spans.scope_spans.add()
    scope.scope.name = "passhat"
    now = time.time_ns()
    task_types = ["refund", "exchange", "cancel_order", "address_change", "order_status"]
    for t in range(tickets):
        start = now + t * 1_000_000
        root = Span(
            name="invoke_agent support",
            kind=Span.SPAN_KIND_INTERNAL,
            start_time_unix_nano=start,
            end_time_unix_nano=start + 9_000_000,
            attributes=[
                kv("gen_ai.operation.name", "invoke_agent"),
                kv("gen_ai.agent.name", "support"),
                kv("gen_ai.conversation.id", f"conv-{t}"),
                kv("passhat.ticket.id", f"ticket-{t}"),
                kv("passhat.task_type", task_types[t % len(task_types)]),
                kv("passhat.source", "production"),
                kv("passhat.intent", json.dumps({"order_id": f"O-{t}", "reason": "damaged"})),
            ],
        )
        for i in range(8):
            tool = scope.spans.add()
            tool.name = f"execute_tool tool_{i}"
            tool.kind = Span.SPAN_KIND_INTERNAL
            tool.start_time_unix_nano = start + (i + 1) * 1_000_000
            tool.end_time_unix_nano = start + (i + 1) * 1_000_000 + 500_000
            tool.attributes.extend(
                [
                    kv("gen_ai.operation.name", "execute_tool"),
                    kv("gen_ai.tool.name", f"tool_{i}"),
                    kv("gen_ai.tool.call.id", f"toolu_{t}_{i}"),
                    kv("gen_ai.tool.type", "function"),
                    kv("passhat.tool.outcome", "ok"),
                ]
            )
            for j in range(state_writes // 8 + (1 if i < state_writes % 8 else 0)):
                event = tool.events.add()
                event.name = "passhat.state_write"
                event.time_unix_nano = tool.start_time_unix_nano + j
                event.attributes.extend(
                    [
                        kv("passhat.state_write.table", "orders"),
                        kv("passhat.state_write.key", json.dumps({"id": f"O-{t}-{j}"})),
                        kv("passhat.state_write.op", "update"),
                        kv("passhat.state_write.before", json.dumps({"status": "delivered", "refund": 0})),
                        kv("passhat.state_write.after", json.dumps({"status": "refunded", "refund": 42.5})),
                        kv("passhat.state_write.changed", ["status", "refund"]),
                    ]
                )
        scope.spans.append(root)
    return request


class _Body:
    """The template request serialised once, with the byte offsets of every trace, span and parent id in it.

    Each send writes fresh random ids at those offsets (ids have fixed lengths in the protobuf encoding), so
    the generator spends well under a millisecond per request, not the milliseconds re-serialising 500 spans
    costs, and stays out of the way of the collector it measures on the same cores.
    """

    def __init__(self, request: Any, spans_per_ticket: int) -> None:
        spans = request.resource_spans[0].scope_spans[0].spans
        self.spans = len(spans)
        planted: list[tuple[bytes, list[bytes], bytes]] = []  # per ticket: trace id, child ids, root id
        for first in range(0, len(spans), spans_per_ticket):
            group = spans[first : first + spans_per_ticket]
            trace_id, root_id = os.urandom(16), os.urandom(8)
            children = [os.urandom(8) for _ in group[:-1]]
            for span, span_id in zip(group[:-1], children, strict=True):
                span.trace_id, span.span_id, span.parent_span_id = trace_id, span_id, root_id
            group[-1].trace_id, group[-1].span_id = trace_id, root_id
            planted.append((trace_id, children, root_id))
        self.template = request.SerializeToString()
        # Per ticket: the offsets of its trace id, of each child's span id, and of its root id (the root's own
        # id and every child's parent id).
        self.tickets = [
            (self._offsets(trace_id), [self._offsets(c) for c in children], self._offsets(root_id))
            for trace_id, children, root_id in planted
        ]

    def _offsets(self, needle: bytes) -> list[int]:
        found, at = [], self.template.find(needle)
        while at >= 0:
            found.append(at)
            at = self.template.find(needle, at + 1)
        if not found:
            raise RuntimeError("an id is missing from the serialised template")
        return found

    def fresh(self) -> bytes:
        """The template with new ids: every ticket gets a new trace id, root id and child span ids."""
        body = bytearray(self.template)
        randomness = os.urandom(24 * len(self.tickets) + 8 * self.spans)
        at = 0
        for trace_offsets, child_offsets, root_offsets in self.tickets:
            for size, groups in ((16, [trace_offsets]), (8, child_offsets), (8, [root_offsets])):
                for offsets in groups:
                    value = randomness[at : at + size]
                    at += size
                    for offset in offsets:
                        body[offset : offset + size] = value
        return bytes(body)


def load_generator(
    url: str,
    headers: dict[str, str],
    duration: float,
    connections: int,
    tickets: int,
    out: Any,
    state_writes: int = 3,
) -> None:
    """Send requests from `connections` threads for `duration` seconds; report what was acknowledged."""
    import httpx

    source = _Body(_template(tickets, state_writes), 9)
    spans_per_request = source.spans
    lock = threading.Lock()
    totals = {"acked_spans": 0, "requests": 0, "retries_429": 0, "retries_503": 0, "errors": 0, "other": {}}
    stop_at = time.monotonic() + duration

    def worker() -> None:
        with httpx.Client(timeout=60.0, headers={"content-type": "application/x-protobuf", **headers}) as client:
            while time.monotonic() < stop_at:
                body = source.fresh()
                while True:  # the same body until it is acknowledged (or time is up)
                    try:
                        response = client.post(url, content=body)
                    except httpx.HTTPError:
                        with lock:
                            totals["errors"] += 1
                        time.sleep(0.1)
                        if time.monotonic() > stop_at + 30:
                            break
                        continue
                    if response.status_code == 200:
                        with lock:
                            totals["acked_spans"] += spans_per_request
                            totals["requests"] += 1
                        break
                    if response.status_code in (429, 503):
                        with lock:
                            totals[f"retries_{response.status_code}"] += 1
                        time.sleep(min(float(response.headers.get("retry-after", "0.2") or 0.2), 2.0))
                        if time.monotonic() > stop_at + 30:
                            break
                        continue
                    with lock:
                        other = totals["other"]
                        other[response.status_code] = other.get(response.status_code, 0) + 1
                    break

    started, cpu_started = time.monotonic(), time.process_time()
    threads = [threading.Thread(target=worker) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    totals["elapsed_s"] = time.monotonic() - started
    totals["generator_cpu_s"] = time.process_time() - cpu_started
    totals["spans_per_request"] = spans_per_request
    out.put(totals)


def run_load(url: str, headers: dict[str, str], args: argparse.Namespace) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    process = ctx.Process(
        target=load_generator,
        args=(url, headers, args.duration, args.connections, args.tickets, queue, args.state_writes),
    )
    process.start()
    result: dict[str, Any] = queue.get(timeout=args.duration + 300)
    process.join()
    return result


# --- the systems under test -------------------------------------------------------------------------------


def tree_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) used so far by a process and its live descendants (Linux /proc)."""
    total = 0.0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            fields = pathlib.Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            for task in pathlib.Path(f"/proc/{current}/task").iterdir():
                pending.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, IndexError, ValueError):
            continue
    return total


def wait_http(url: str, timeout: float = 120.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2.0).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    raise SystemExit(f"{url} did not answer within {timeout:.0f} s")


def bench_passhat(args: argparse.Namespace, workdir: pathlib.Path, store_url: str | None) -> dict[str, Any]:
    data_dir = workdir / "passhat"
    store_args = ["--store", store_url] if store_url else ["--data-dir", str(data_dir)]
    created = subprocess.run(
        [str(PASSHAT), "keys", "create", "--project", "bench", *store_args],
        check=True,
        capture_output=True,
        text=True,
    )
    key = created.stdout.strip().splitlines()[-1]
    port = free_port()
    server = subprocess.Popen([str(PASSHAT), "serve", "--port", str(port), "--workers", str(args.workers), *store_args])
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz")
        cpu_before = tree_cpu_s(server.pid)
        load = run_load(f"http://127.0.0.1:{port}/v1/traces", {"authorization": f"Bearer {key}"}, args)
        cpu = tree_cpu_s(server.pid) - cpu_before
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(60)
    from passhat.collector.store import default_store_url, open_store

    with open_store(store_url or default_store_url(data_dir)) as store:
        stored = store.count_spans("bench")
    return {
        **load,
        "stored_spans": stored,
        "lost_spans": max(load["acked_spans"] - stored, 0),
        "spans_per_s": stored / load["elapsed_s"],
        "server_cpu_s": cpu,
        "spans_per_cpu_s": stored / max(cpu, 1e-9),
    }


def _phoenix_count(db: pathlib.Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
            return int(conn.execute("SELECT count(*) FROM spans").fetchone()[0])
    except sqlite3.Error:  # locked by Phoenix's writer, or not created yet
        return 0


def bench_phoenix(args: argparse.Namespace, workdir: pathlib.Path) -> dict[str, Any]:
    home = workdir / "phoenix"
    home.mkdir()
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(home),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "DO_NOT_TRACK": "1",
    }
    log = (workdir / "phoenix.log").open("w")
    server = subprocess.Popen([args.phoenix, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", timeout=180)
        started = time.monotonic()
        cpu_before = tree_cpu_s(server.pid)
        load = run_load(f"http://127.0.0.1:{port}/v1/traces", {}, args)
        # Phoenix acknowledges before it writes: watch its database until it holds every acknowledged span
        # or `--drain` seconds have passed; the end-to-end rate is what it persisted per second of the run.
        db = home / "phoenix.db"
        persisted, persisted_at = 0, 0.0
        drain_until = time.monotonic() + args.drain
        while time.monotonic() < drain_until:
            count = _phoenix_count(db)
            if count > persisted:
                persisted, persisted_at = count, time.monotonic() - started
            if persisted >= load["acked_spans"]:
                break
            time.sleep(1.0)
        elapsed = time.monotonic() - started
        cpu = tree_cpu_s(server.pid) - cpu_before
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
    return {
        **load,
        "stored_spans": persisted,
        "lost_spans": max(load["acked_spans"] - persisted, 0),  # not persisted by the end of the drain
        "last_write_s": persisted_at,
        "observed_s": elapsed,
        "spans_per_s": persisted / elapsed if persisted < load["acked_spans"] else persisted / persisted_at,
        "server_cpu_s": cpu,
        "spans_per_cpu_s": persisted / max(cpu, 1e-9),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of load per system")
    parser.add_argument("--connections", type=int, default=8, help="concurrent HTTP connections")
    parser.add_argument("--tickets", type=int, default=56, help="tickets per request (9 spans each)")
    parser.add_argument(
        "--state-writes", type=int, default=3, help="state-write events per ticket, spread over its tool spans"
    )
    parser.add_argument("--workers", type=int, default=2, help="passhat serve worker processes")
    parser.add_argument("--store", default=None, help="passhat store URL (default: SQLite in a temp dir)")
    parser.add_argument("--phoenix", default=None, help="path of a `phoenix` executable to compare with")
    parser.add_argument("--drain", type=float, default=60.0, help="seconds to wait for Phoenix's writes")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    results: dict[str, Any] = {"load": vars(args), "cpus": os.cpu_count(), "loadavg_before": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="passhat-bench-") as tmp:
        workdir = pathlib.Path(tmp)
        results["passhat"] = bench_passhat(args, workdir, args.store)
        if args.phoenix:
            results["phoenix"] = bench_phoenix(args, workdir)
            results["ratio_passhat_over_phoenix"] = results["passhat"]["spans_per_s"] / max(
                results["phoenix"]["spans_per_s"], 1e-9
            )
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for name in ("passhat", "phoenix"):
            if name in results:
                r = results[name]
                print(
                    f"{name:8s} {r['spans_per_s']:>9,.0f} spans/s end to end "
                    f"({r['spans_per_cpu_s']:,.0f} per server CPU-second)  acked {r['acked_spans']:,}  "
                    f"stored {r['stored_spans']:,}  acked-not-stored {r['lost_spans']:,}  "
                    f"429s {r['retries_429']}  503s {r['retries_503']}  errors {r['errors']}  "
                    f"other {r['other']}"
                )
        if "ratio_passhat_over_phoenix" in results:
            print(f"ratio passhat / phoenix: {results['ratio_passhat_over_phoenix']:.1f}x")
        print(f"load average before the run: {results['loadavg_before'][0]:.1f} on {results['cpus']} cores")
    return 1 if results["passhat"]["lost_spans"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
