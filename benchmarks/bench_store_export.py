"""Benchmark: a trial's spans made into the store's rows (`prepare_spans`), directly vs by the OTLP round trip.

`StoreSpanExporter` (which `passhat replay` and the collector's cycle trace every trial into) gives spans the rows
the collector's ingest would. It used to encode them as OTLP with OpenTelemetry's encoder, then decode and
normalise that request; plain spans are now converted directly (docs/loop.md, "Traced trials"). This times both
on the spans of real reference trials (``--domain``, ``--trials`` of them, traced by the SDK as a replay traces
them), in batches of ``--batch`` spans, alternately, ``--repeats`` times, with the process's CPU clock, and
prints one JSON line: CPU microseconds a span for each (medians) and their ratio, and the part of both that is
`normalize_span` (shared: what a span means for passhat).

Run: .venv/bin/python benchmarks/bench_store_export.py [--domain retail] [--trials 200] [--batch 512] [--repeats 7]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import passhat
from passhat.collector.ingest import _store_export
from passhat.collector.ingest._otlp import decode_traces
from passhat.collector.ingest._store_export import prepare_spans
from passhat.sandbox import FlawConfig, ReferenceAgent, Sandbox, run_trial

LIMIT = 64 * 1024


async def trial_spans(domain: str, trials: int) -> list[ReadableSpan]:
    """The finished spans of ``trials`` reference trials, traced as a replay's runtime traces them."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"service.name": "passhat replay"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    runtime = passhat.configure(
        tracer_provider=provider, source="sandbox", make_global=False, send=False, redact_mode="blank"
    )
    with tempfile.TemporaryDirectory() as folder, Sandbox(domain, seed=0, workdir=Path(folder)) as sandbox:
        scenarios = sandbox.scenarios(count=trials)
        for index in range(trials):
            scenario = scenarios[index % len(scenarios)]
            await run_trial(sandbox, scenario, index, ReferenceAgent.factory(FlawConfig.default()), runtime=runtime)
    return list(exporter.get_finished_spans())


def round_trip(spans: Sequence[ReadableSpan]) -> object:
    return decode_traces(encode_spans(spans), max_attribute_bytes=LIMIT)


def direct(spans: Sequence[ReadableSpan]) -> object:
    return prepare_spans(spans, max_attribute_bytes=LIMIT)


def per_span(run: Callable[[Sequence[ReadableSpan]], object], batches: list[list[ReadableSpan]]) -> float:
    """CPU microseconds a span for one pass over every batch."""
    began = time.process_time()
    for batch in batches:
        run(batch)
    return (time.process_time() - began) * 1e6 / sum(len(batch) for batch in batches)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--domain", default="retail")
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--batch", type=int, default=512, help="spans an export gets at once (the SDK's default)")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    spans = asyncio.run(trial_spans(args.domain, args.trials))
    batches = [spans[at : at + args.batch] for at in range(0, len(spans), args.batch)]
    if any(direct(batch) != round_trip(batch) for batch in batches):
        raise SystemExit(
            "the direct conversion and the round trip disagree: see tests/collector/ingest/test_store_export.py"
        )
    for batch in batches:  # every batch must have taken the direct path, or the figure is the round trip's twice
        _store_export._direct(batch, LIMIT)
    figures: dict[str, list[float]] = {"round_trip": [], "direct": [], "normalize": []}
    shared = _store_export.normalize_span
    for _ in range(args.repeats):
        figures["round_trip"].append(per_span(round_trip, batches))
        figures["direct"].append(per_span(direct, batches))
        _store_export.normalize_span = lambda **fields: None  # type: ignore[assignment,return-value]
        try:
            figures["normalize"].append(figures["direct"][-1] - per_span(direct, batches))
        finally:
            _store_export.normalize_span = shared
    medians = {name: round(statistics.median(values), 2) for name, values in figures.items()}
    print(
        json.dumps(
            {
                "domain": args.domain,
                "spans": len(spans),
                "spans_per_trial": round(len(spans) / args.trials, 2),
                "round_trip_us_per_span": medians["round_trip"],
                "direct_us_per_span": medians["direct"],
                "normalize_us_per_span": medians["normalize"],
                "direct_vs_round_trip": round(medians["direct"] / medians["round_trip"], 3),
                "repeats": args.repeats,
            }
        )
    )


if __name__ == "__main__":
    main()
