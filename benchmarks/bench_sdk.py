"""Benchmark of the passhat SDK, exporting to a live local OTLP/HTTP receiver in another process.

1. Cost of one tool call: a plain call, the same call in a bare OpenTelemetry span
   (``tracer.start_as_current_span`` with the standard BatchSpanProcessor + OTLP exporter) and the same call
   as a ``@passhat.tool``, measured side by side in one process (interleaved rounds, medians); with content
   capture, once with arguments free of personal data and once with an email and a phone to replace.
2. Collector outage: steady ticket traffic while the receiver is up, then stopped for ``--outage`` seconds,
   then back. Reports the agent's per-ticket latency (median, p99) healthy vs down, peak RSS, spans dropped,
   and how long export takes to resume.

Run: ``.venv/bin/python benchmarks/bench_sdk.py`` (``--quick`` for a short smoke run, ``--json`` for JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

import passhat

RECEIVER_CODE = """
import sys, time
from passhat.testing import OtlpReceiver
receiver = OtlpReceiver(int(sys.argv[1]), decode=False).start()
print(receiver.port, flush=True)
sys.stdin.read()
print(receiver.span_count, flush=True)
"""


class ReceiverProcess:
    """The OTLP receiver in its own process, so decoding does not compete with the measured thread's GIL."""

    def __init__(self, port: int = 0) -> None:
        self.port = port
        self.process: subprocess.Popen[str] | None = None
        self.received = 0

    def start(self) -> ReceiverProcess:
        self.process = subprocess.Popen(
            [sys.executable, "-c", RECEIVER_CODE, str(self.port)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.port = int(self.process.stdout.readline())
        return self

    def stop(self) -> int:
        """Stop it and return how many spans it received."""
        assert self.process is not None and self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        count = int(self.process.stdout.readline() or 0)
        self.process.wait(timeout=10)
        self.received += count
        return count

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def work(order_id: str) -> dict[str, Any]:
    """The tool's own work: a small dict, as a lookup in memory would return."""
    return {"order_id": order_id, "status": "delivered", "total": 42.5}


def work_with_contact(order_id: str, email: str) -> dict[str, Any]:
    """A lookup whose arguments and result carry personal data, so the redactor has something to replace."""
    return {"order_id": order_id, "email": email, "phone": "+1 (415) 555-0132", "status": "delivered"}


def time_block(call: Callable[[], object], calls: int, flush: Callable[[], object]) -> tuple[float, float]:
    """(ns per call on the agent's thread, ns per call including the export of its spans)."""
    started = time.perf_counter_ns()
    for _ in range(calls):
        call()
    called = time.perf_counter_ns()
    flush()  # each variant exports its own spans before the next one runs: no cross-talk on the GIL
    flushed = time.perf_counter_ns()
    return (called - started) / calls, (flushed - started) / calls


def bench_tool_cost(receiver: ReceiverProcess, rounds: int, calls: int) -> dict[str, Any]:
    queue = calls + 1024  # room for a whole block: no variant gets cheaper by dropping spans
    bare_provider = TracerProvider()
    bare_provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{receiver.url}/v1/traces"), max_queue_size=queue)
    )
    bare_tracer = bare_provider.get_tracer("bench")
    main = passhat.configure(service_name="bench", endpoint=receiver.url, max_queue_size=queue)
    traced = passhat.tool(work, name="find_order")
    captured = passhat.configure(
        service_name="bench",
        endpoint=receiver.url,
        capture_content=True,
        max_queue_size=queue,
        make_global=False,
    )
    traced_capture = captured.tool(work, name="find_order")
    traced_pii = captured.tool(work_with_contact, name="find_order")

    def plain() -> object:
        return work("O-1")

    def bare() -> object:
        with bare_tracer.start_as_current_span("execute_tool find_order"):
            return work("O-1")

    def with_passhat() -> object:
        return traced("O-1")

    def with_capture() -> object:
        return traced_capture("O-1")

    def with_capture_pii() -> object:
        return traced_pii("O-1", "jane.doe@example.com")

    variants: dict[str, tuple[Callable[[], object], Callable[[], object]]] = {
        "plain": (plain, lambda: None),
        "bare_otel": (bare, bare_provider.force_flush),
        "passhat": (with_passhat, main.flush),
        "passhat_capture": (with_capture, captured.flush),
        "passhat_capture_pii": (with_capture_pii, captured.flush),
    }
    samples: dict[str, list[float]] = {name: [] for name in variants}
    with_export: dict[str, list[float]] = {name: [] for name in variants}
    for round_index in range(rounds):
        order = list(variants)
        order = order[round_index % len(order) :] + order[: round_index % len(order)]
        for name in order:
            call, flush = variants[name]
            on_thread, total = time_block(call, calls, flush)
            samples[name].append(on_thread)
            with_export[name].append(total)
    medians = {name: statistics.median(values) for name, values in samples.items()}
    medians_export = {name: statistics.median(values) for name, values in with_export.items()}
    bare_provider.shutdown()
    captured.shutdown()
    passhat.shutdown()
    return {
        "rounds": rounds,
        "calls_per_round": calls,
        "ns_per_call": {name: round(value) for name, value in medians.items()},
        "ns_per_call_including_export": {name: round(value) for name, value in medians_export.items()},
        "passhat_vs_bare_otel": round(medians["passhat"] / medians["bare_otel"], 3),
        "passhat_vs_bare_otel_including_export": round(medians_export["passhat"] / medians_export["bare_otel"], 3),
        "passhat_capture_vs_bare_otel": round(medians["passhat_capture"] / medians["bare_otel"], 3),
        "passhat_capture_pii_vs_bare_otel": round(medians["passhat_capture_pii"] / medians["bare_otel"], 3),
    }


class PeakRss:
    """Samples the process's resident set size every 50 ms; ``peak()`` is the highest since ``reset()``."""

    def __init__(self) -> None:
        self._peak = 0
        self._stop = threading.Event()
        self._page = os.sysconf("SC_PAGE_SIZE")
        threading.Thread(target=self._run, daemon=True).start()

    def _rss(self) -> int:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * self._page

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self._peak = max(self._peak, self._rss())

    def reset(self) -> None:
        self._peak = self._rss()

    def peak(self) -> int:
        return max(self._peak, self._rss())

    def close(self) -> None:
        self._stop.set()


def run_load(seconds: float, rate: float, tools: list[Callable[..., Any]], counter: list[int]) -> list[float]:
    """Handle tickets at ``rate`` per second for ``seconds``; each ticket's handling time in microseconds."""
    latencies: list[float] = []
    interval = 1.0 / rate
    next_start = time.perf_counter()
    deadline = next_start + seconds
    while next_start < deadline:
        pause = next_start - time.perf_counter()
        if pause > 0:
            time.sleep(pause)
        index = counter[0]
        counter[0] += 1
        started = time.perf_counter_ns()
        with passhat.ticket(f"T-{index}", task_type="refund", intent={"order_id": f"O-{index}"}) as ticket:
            ticket.customer_says("refund please")
            for tool in tools:
                tool(f"O-{index}")
            passhat.record_write("orders", {"id": index}, before={"status": "delivered"}, after={"status": "refunded"})
            ticket.resolve("resolved")
        latencies.append((time.perf_counter_ns() - started) / 1000)
        next_start += interval
    return latencies


def summary(latencies: list[float]) -> dict[str, float]:
    ordered = sorted(latencies)
    return {
        "tickets": len(ordered),
        "median_us": round(statistics.median(ordered), 1),
        "p99_us": round(ordered[int(0.99 * (len(ordered) - 1))], 1),
    }


def bench_outage(receiver: ReceiverProcess, healthy: float, outage: float, rate: float) -> dict[str, Any]:
    instance = passhat.configure(service_name="bench-outage", endpoint=receiver.url)
    tools = [passhat.tool(work, name=name) for name in ("find_customer", "find_order", "refund_order")]
    spans_per_ticket = 1 + len(tools)
    rss = PeakRss()
    counter = [0]
    rss.reset()
    healthy_latencies = run_load(healthy, rate, tools, counter)
    instance.flush()
    peak_healthy = rss.peak()
    before = instance.stats()
    assert before is not None
    receiver.stop()  # the collector goes away
    rss.reset()
    down_latencies = run_load(outage, rate, tools, counter)
    peak_down = rss.peak()
    during = instance.stats()
    assert during is not None
    receiver.start()  # ... and comes back on the same port
    back_at = time.perf_counter()
    resumed_after = None
    while time.perf_counter() - back_at < 30:
        now = instance.stats()
        assert now is not None
        if not now.failing and now.exported > during.exported:
            resumed_after = time.perf_counter() - back_at
            break
        time.sleep(0.01)
    instance.flush()
    after = instance.stats()
    assert after is not None
    tickets_total = counter[0]
    passhat.shutdown()
    received_after = receiver.stop()
    rss.close()
    return {
        "rate_tickets_per_s": rate,
        "spans_per_ticket": spans_per_ticket,
        "healthy": summary(healthy_latencies) | {"peak_rss_mb": round(peak_healthy / 2**20, 1)},
        "collector_down": summary(down_latencies) | {"seconds": outage, "peak_rss_mb": round(peak_down / 2**20, 1)},
        "spans_created": tickets_total * spans_per_ticket,
        "spans_dropped": after.dropped,
        "spans_queued_at_outage_end": during.queued,
        "spans_exported_total": after.exported,
        "spans_received_after_restart": received_after,
        "export_resumed_after_s": None if resumed_after is None else round(resumed_after, 2),
        "max_queue_size": instance.processor.max_queue_size if instance.processor else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="passhat SDK benchmark")
    parser.add_argument("--quick", action="store_true", help="short run (smoke test of the benchmark itself)")
    parser.add_argument("--outage", type=float, default=30.0, help="seconds the collector is down")
    parser.add_argument("--rate", type=float, default=200.0, help="tickets per second during the outage run")
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args()
    rounds, calls, healthy, outage = (3, 1000, 2.0, 3.0) if args.quick else (10, 5000, args.outage, args.outage)
    receiver = ReceiverProcess().start()
    try:
        cost = bench_tool_cost(receiver, rounds, calls)
        outage_result = bench_outage(receiver, healthy, outage, args.rate)
    finally:
        if receiver.process is not None and receiver.process.poll() is None:
            receiver.stop()
    result = {"tool_cost": cost, "outage": outage_result, "cpus": os.cpu_count()}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    ns, ns_export = cost["ns_per_call"], cost["ns_per_call_including_export"]
    print(f"tool call cost, median of {rounds} interleaved rounds x {calls} calls (ns per call):")
    print(f"  {'variant':<16} {'on the agent thread':>20} {'including export':>18}")
    for name in ("plain", "bare_otel", "passhat", "passhat_capture", "passhat_capture_pii"):
        print(f"  {name:<16} {ns[name]:>20} {ns_export[name]:>18}")
    print(
        f"  passhat / bare OTel span: {cost['passhat_vs_bare_otel']}x (target <= 1.5x); including export: "
        f"{cost['passhat_vs_bare_otel_including_export']}x"
    )
    print(f"  with content capture / bare OTel span: {cost['passhat_capture_vs_bare_otel']}x")
    print(
        f"  with content capture of an email and a phone / bare OTel span: {cost['passhat_capture_pii_vs_bare_otel']}x"
    )
    o = outage_result
    print(f"collector outage at {o['rate_tickets_per_s']:.0f} tickets/s ({o['spans_per_ticket']} spans each):")
    for phase in ("healthy", "collector_down"):
        p = o[phase]
        print(
            f"  {phase:<15} tickets={p['tickets']:>6} median={p['median_us']:>8} us "
            f"p99={p['p99_us']:>8} us peak RSS={p['peak_rss_mb']} MB"
        )
    print(
        f"  dropped={o['spans_dropped']} of {o['spans_created']} spans (queue bound {o['max_queue_size']}); "
        f"queued at outage end={o['spans_queued_at_outage_end']}; "
        f"export resumed {o['export_resumed_after_s']} s after the collector returned; "
        f"received after restart={o['spans_received_after_restart']}"
    )


if __name__ == "__main__":
    main()
