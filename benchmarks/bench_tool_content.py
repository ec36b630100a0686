"""Benchmark: the CPU of recording a tool call's content (`capture_content`): its arguments and result made
redacted JSON on the agent's thread, and the whole `@passhat.tool` call with content capture on.

Personal data may sit anywhere in a tool's arguments and result, dict keys included (a result keyed by email),
so every string, key and long integer passes the redactor. This times, per call, on a provider whose only
exporter does nothing (so no export is counted): `to_json` of a typical tool result (a dict of six fields, one
nested list of two line items) without personal data and with an email and a phone in it, and a `@passhat.tool`
call returning that result inside a ticket; `to_json_capped_us` is the second with the cap a tool call applies
(`max_content_length`). CPU time (`time.process_time`), 2,000 calls a round, 7 rounds, the median; prints one
JSON line in microseconds. `--huge` adds `huge_argument_ms`: a `@passhat.tool` call whose argument is
`list(range(1_000_000))` (its recorded text is capped at 4,096 characters), the median of 3 calls, in
milliseconds. Side by side with an earlier commit:

    .venv/bin/python benchmarks/bench_vs_commit.py --commit REV --rounds 5 \\
        --figure to_json_us,to_json_pii_us,to_json_capped_us,tool_call_us -- benchmarks/bench_tool_content.py

Run: .venv/bin/python benchmarks/bench_tool_content.py [--huge]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

import passhat
from passhat._content import to_json

CALLS, ROUNDS = 2000, 7

RESULT: dict[str, Any] = {
    "order_id": "#W2718423",
    "status": "pending",
    "total": 296.0,
    "payment_method_id": "gift_card_0048",
    "items": [{"item_id": "6469567736", "price": 148.0}, {"item_id": "8124970213", "price": 148.0}],
    "address": {"city": "Denver", "zip": "80202"},
}
WITH_PII: dict[str, Any] = {**RESULT, "email": "ada.lovelace@example.com", "phone": "+1 415 555 0134"}


class _Nothing(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


def _per_call_us(run: Callable[[], object]) -> float:
    began = time.process_time()
    for _ in range(CALLS):
        run()
    return (time.process_time() - began) * 1e6 / CALLS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--huge", action="store_true", help="also time a call whose argument is a million integers")
    args = parser.parse_args()
    runtime = passhat.configure(
        send=False, service_name="agent", capture_content=True, span_processors=[SimpleSpanProcessor(_Nothing())]
    )
    redactor = runtime.redactor

    @passhat.tool
    def get_order(order_id: str) -> dict[str, Any]:
        return WITH_PII

    @passhat.tool
    def count(ids: list[int]) -> int:
        return len(ids)

    limit = runtime.max_content_length
    figures: dict[str, list[float]] = {
        "to_json_us": [],
        "to_json_pii_us": [],
        "to_json_capped_us": [],
        "tool_call_us": [],
    }
    with passhat.ticket("T-bench", task_type="bench"):
        for _ in range(ROUNDS):
            figures["to_json_us"].append(_per_call_us(lambda: to_json(RESULT, redactor)))
            figures["to_json_pii_us"].append(_per_call_us(lambda: to_json(WITH_PII, redactor)))
            figures["to_json_capped_us"].append(_per_call_us(lambda: to_json(WITH_PII, redactor, limit)))
            figures["tool_call_us"].append(_per_call_us(lambda: get_order("#W2718423")))
        if args.huge:
            huge = list(range(1_000_000))
            figures["huge_argument_ms"] = []
            for _ in range(3):
                began = time.process_time()
                count(huge)
                figures["huge_argument_ms"].append((time.process_time() - began) * 1e3)
    runtime.shutdown()
    print(json.dumps({name: round(statistics.median(values), 2) for name, values in figures.items()}))


if __name__ == "__main__":
    main()
