"""Benchmark: the CPU of one span on a passhat provider, as a framework makes it and as `@passhat.tool` makes it.

passhat's processors sit behind its trial routing (`passhat._trial_routing`): each span's start checks whether it
is inside another instance's ticket (a replay's trial). This times the two shapes of span on a provider whose only
exporter does nothing, so the routing's share is not hidden by an export: a framework's bare span
(`start_as_current_span` on the provider, as pydantic-ai or an instrumentor makes one) and a `@passhat.tool`
call inside a ticket. CPU time (`time.process_time`), 3,000 spans a round, 7 rounds, the median; prints one JSON
line in microseconds a span. Side by side with an earlier commit:

    .venv/bin/python benchmarks/bench_vs_commit.py --commit REV --rounds 7 \\
        --figure framework_span_us,tool_call_us -- benchmarks/bench_span_routing.py

Run: .venv/bin/python benchmarks/bench_span_routing.py
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

import passhat

SPANS, ROUNDS = 3000, 7


class _Nothing(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


def main() -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    runtime = passhat.configure(send=False, service_name="agent", span_processors=[SimpleSpanProcessor(_Nothing())])
    framework = runtime.tracer_provider.get_tracer("some.framework")

    @passhat.tool
    def lookup(order_id: str) -> dict[str, str]:
        return {"order_id": order_id, "status": "pending"}

    def framework_spans(count: int) -> None:
        for _ in range(count):
            with framework.start_as_current_span("chat model"):
                pass

    def tool_calls(count: int) -> None:
        with passhat.ticket("T-1", task_type="refund"):
            for _ in range(count):
                lookup("O-1")

    shapes: dict[str, Callable[[int], None]] = {"framework_span_us": framework_spans, "tool_call_us": tool_calls}
    figures: dict[str, float] = {}
    for name, shape in shapes.items():
        shape(300)  # warm
        rounds = []
        for _ in range(ROUNDS):
            began = time.process_time()
            shape(SPANS)
            rounds.append((time.process_time() - began) / SPANS * 1e6)
        figures[name] = round(statistics.median(rounds), 2)
    passhat.shutdown()
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
