"""Decode benchmark: one OTLP protobuf request of the ingest benchmark (504 spans), compiled vs upb path.

Two comparisons, each the median of 7 interleaved repeats, in microseconds per span:

- decode only: `_otlpfast.decode` (C, wire bytes to span tuples) vs what it replaces on the upb path,
  `parse_request` + `decode_traces` with `normalize_span` stubbed out (upb parse + the Python attribute walk);
- whole decode: `decode_protobuf` (C + normalize_span) vs `decode_traces(parse_request(...))`, i.e. what the
  collector's request handler runs on each path.

    .venv/bin/python benchmarks/bench_decode.py   # --state-writes 3, --repeats N, --json, --clock cpu

`--clock cpu` times with the process's CPU clock instead of the wall clock: steadier when other processes
share the machine's two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from bench_ingest import _template

from passhat.collector.ingest import _otlp
from passhat.collector.ingest._otlp import PROTOBUF, decode_protobuf, decode_traces, parse_request

TICKETS = 56  # 56 tickets x 9 spans = 504 spans, like the ingest benchmark's requests
LIMIT = 64 * 1024


def _upb_walk_only(body: bytes) -> None:
    real = _otlp.normalize_span
    _otlp.normalize_span = lambda **fields: fields  # type: ignore[assignment,return-value]
    try:
        decode_traces(parse_request(body, PROTOBUF), max_attribute_bytes=LIMIT)
    finally:
        _otlp.normalize_span = real


def _medians(cases: dict[str, Callable[[], object]], repeats: int, clock: Callable[[], float]) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in cases}
    for case in cases.values():
        case()  # warm up
    for _ in range(repeats):
        for name, case in cases.items():
            start = clock()
            case()
            times[name].append(clock() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    parser.add_argument(
        "--state-writes",
        type=int,
        default=24,
        help="state-write events per ticket (24, the default: three on every tool span; bench_ingest's default is 3)",
    )
    args = parser.parse_args()
    if _otlp._otlpfast is None:
        print("passhat.collector.ingest._otlpfast is not built: nothing to compare", file=sys.stderr)
        return 1
    fast = _otlp._otlpfast
    request: Any = _template(TICKETS, args.state_writes)
    spans_of = request.resource_spans[0].scope_spans[0].spans
    for first in range(0, len(spans_of), 9):  # the ids, as the load generator plants them: 8 tools, then the root
        trace_id, root_id = os.urandom(16), os.urandom(8)
        for span in spans_of[first : first + 8]:
            span.trace_id, span.span_id, span.parent_span_id = trace_id, os.urandom(8), root_id
        spans_of[first + 8].trace_id, spans_of[first + 8].span_id = trace_id, root_id
    body = request.SerializeToString()
    spans = len(fast.decode(body, LIMIT) or [])
    assert spans == TICKETS * 9, "the template must take the fast path"
    assert decode_protobuf(body, max_attribute_bytes=LIMIT) == decode_traces(
        parse_request(body, PROTOBUF), max_attribute_bytes=LIMIT
    )
    medians = _medians(
        {
            "decode only, C": lambda: fast.decode(body, LIMIT),
            "decode only, upb + Python walk": lambda: _upb_walk_only(body),
            "whole decode, C + normalize_span": lambda: decode_protobuf(body, max_attribute_bytes=LIMIT),
            "whole decode, upb + normalize_span": lambda: decode_traces(
                parse_request(body, PROTOBUF), max_attribute_bytes=LIMIT
            ),
        },
        args.repeats,
        time.perf_counter if args.clock == "wall" else time.process_time,
    )
    per_span = {name: seconds / spans * 1e6 for name, seconds in medians.items()}
    if args.json:
        print(json.dumps({"spans": spans, "body_bytes": len(body), "us_per_span": per_span}, indent=2))
        return 0
    print(f"one request: {spans} spans, {args.state_writes} state writes per ticket, {len(body)} bytes")
    print(f"us per span, median of {args.repeats} ({args.clock} clock)")
    rows = [("decode only", "decode only, C", "decode only, upb + Python walk")]
    rows.append(("whole decode", "whole decode, C + normalize_span", "whole decode, upb + normalize_span"))
    print(f"{'':14}{'C path':>10}{'upb path':>10}{'upb / C':>10}")
    for label, c, upb in rows:
        print(f"{label:14}{per_span[c]:10.2f}{per_span[upb]:10.2f}{per_span[upb] / per_span[c]:10.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
