"""Benchmark of redacting every span passhat exports: the export cost of real pydantic-ai spans with and without it.

A pydantic-ai agent (its own OpenTelemetry instrumentation, content included, a FunctionModel that calls two tools
and answers) runs ``--tickets`` conversations whose messages, tool arguments and results hold emails and phone
numbers; its finished spans are kept in memory. Then, in interleaved rounds, the same batch is exported by passhat's
OTLP exporter to a local receiver (decoding off), once as it is and once through ``RedactingSpanExporter`` (what
``passhat.configure()`` sends through); also the CPU work alone (OTLP encoding and gzip, without the HTTP request).
Reported: the median CPU time per span of the exporting thread (the SDK's export worker) and their ratio.

Run: ``.venv/bin/python benchmarks/bench_redaction.py`` (``--quick`` for a short run, ``--json`` for JSON).

On a busy machine the CPU times move with the other processes; ``--instructions`` counts instructions instead
(valgrind's callgrind, the same count whatever else runs): the spans are written to a file, then read back by
three runs under callgrind (read only; read and encode; read, redact and encode, each twice with a fresh
redaction) and the differences give the instructions of the encoding and of the redaction alone.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import passhat
from passhat._export import OtlpHttpExporter
from passhat._span_redaction import RedactingSpanExporter
from passhat.testing import OtlpReceiver


def pydantic_ai_spans(tickets: int) -> list[ReadableSpan]:
    """The spans of ``tickets`` pydantic-ai runs, each with two tool calls and personal data throughout."""
    from pydantic_ai import Agent, InstrumentationSettings
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))

    current = {"number": 0}

    def respond(messages: list[Any], info: Any) -> ModelResponse:
        number = current["number"]
        returned = [p for m in messages for p in getattr(m, "parts", ()) if isinstance(p, ToolReturnPart)]
        if not returned:
            return ModelResponse(parts=[ToolCallPart("find_patient", {"email": f"patient{number}@clinic-mail.org"})])
        if len(returned) == 1:
            return ModelResponse(parts=[ToolCallPart("book_visit", {"patient_id": f"P-{number}", "day": "2026-12-09"})])
        text = f"Booked for Wednesday; we will text +44 20 7946 {number:04d} the day before."
        return ModelResponse(parts=[TextPart(text)])

    settings = InstrumentationSettings(tracer_provider=provider)
    agent = Agent(FunctionModel(respond), name="front_desk", capabilities=[Instrumentation(settings=settings)])

    @agent.tool_plain
    def find_patient(email: str) -> dict[str, Any]:
        """Find a patient by email."""
        return {"patient_id": f"P-{current['number']}", "email": email, "phone": f"+44 20 7946 {current['number']:04d}"}

    @agent.tool_plain
    def book_visit(patient_id: str, day: str) -> dict[str, Any]:
        """Book a visit."""
        return {"patient_id": patient_id, "day": day, "slot": "09:30", "doctor": "Dr. Reyes"}

    async def run_all() -> None:
        for number in range(tickets):  # a customer of their own per run: no redaction is met twice across runs
            current["number"] = number
            await agent.run(f"Hi, this is patient{number}@clinic-mail.org, I need a visit next week.")

    asyncio.run(run_all())
    provider.shutdown()
    return list(memory.get_finished_spans())


class EncodeOnly(SpanExporter):
    """The exporter's CPU work without the request: OTLP protobuf encoding and gzip."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        gzip.compress(encode_spans(spans).SerializeToString(), compresslevel=1)
        return SpanExportResult.SUCCESS


def timed(export: Callable[[Sequence[ReadableSpan]], Any], batches: list[list[ReadableSpan]]) -> float:
    """CPU seconds of the exporting thread to export every batch once (each batch a fresh list, as the queue
    hands them over). CPU time, not wall time: on a busy machine the wall clock measures the other processes."""
    start = time.thread_time()
    for batch in batches:
        export(list(batch))
    return time.thread_time() - start


def _dump(spans: list[ReadableSpan], path: Path) -> None:
    rows = [
        {
            "name": span.name,
            "trace": span.context.trace_id if span.context else 0,
            "span": span.context.span_id if span.context else 0,
            "parent": span.parent.span_id if span.parent else None,
            "attributes": dict(span.attributes or {}),
            "events": [[event.name, dict(event.attributes or {}), event.timestamp] for event in span.events],
            "start": span.start_time,
            "end": span.end_time,
            "scope": span.instrumentation_scope.name if span.instrumentation_scope else "framework",
        }
        for span in spans
    ]
    path.write_text(json.dumps(rows))


def _load(path: Path) -> list[ReadableSpan]:
    from opentelemetry.sdk.trace import Event
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, TraceFlags

    spans = []
    for row in json.loads(path.read_text()):
        context = SpanContext(row["trace"], row["span"], False, TraceFlags(1))
        parent = SpanContext(row["trace"], row["parent"], False, TraceFlags(1)) if row["parent"] else None
        attributes = {key: tuple(v) if isinstance(v, list) else v for key, v in row["attributes"].items()}
        spans.append(
            ReadableSpan(
                name=row["name"],
                context=context,
                parent=parent,
                attributes=attributes,
                events=[Event(name, attrs, stamp) for name, attrs, stamp in row["events"]],
                start_time=row["start"],
                end_time=row["end"],
                instrumentation_scope=InstrumentationScope(row["scope"]),
            )
        )
    return spans


def _callgrind_part(mode: str, path: Path, batch: int) -> None:
    """One of the three runs ``--instructions`` counts (see the module's docstring)."""
    from passhat._span_redaction import SpanRedaction

    spans = _load(path)
    key = passhat.PseudonymKey("benchmark-pseudonym-key")
    for _ in range(2):
        sent = spans
        if mode == "redact":  # a fresh redactor each time: nothing it found or computed helps the next
            redaction = SpanRedaction(passhat.Redactor(key=key))
            sent = [redaction.span(span) for span in spans]
        if mode != "read":
            for start in range(0, len(sent), batch):
                EncodeOnly().export(sent[start : start + batch])


def instructions(spans: list[ReadableSpan], batch: int) -> dict[str, Any]:
    """Instructions per span of encoding and of redaction, counted by callgrind (deterministic)."""
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "spans.json"
        _dump(spans, path)
        for mode in ("read", "encode", "redact"):
            done = subprocess.run(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={folder}/out.{mode}", sys.executable,
                 __file__, "--callgrind-part", mode, "--spans-file", str(path), "--batch", str(batch)],
                capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "0"},
            )  # fmt: skip
            found = re.search(r"Collected : (\d+)", done.stderr)
            if found is None:
                raise SystemExit(f"callgrind printed no count: {done.stderr[-400:]}")
            counts[mode] = int(found.group(1))
    encode = (counts["encode"] - counts["read"]) / (2 * len(spans))
    redact = (counts["redact"] - counts["encode"]) / (2 * len(spans))
    return {
        "spans": len(spans),
        "instructions_per_span": {"encode": round(encode), "redaction": round(redact)},
        "ratio_encode": round((encode + redact) / encode, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tickets", type=int, default=200, help="pydantic-ai runs whose spans are exported")
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds per variant")
    parser.add_argument("--batch", type=int, default=512, help="spans per export (passhat's default batch size)")
    parser.add_argument("--quick", action="store_true", help="40 tickets, 5 rounds")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--instructions", action="store_true", help="count instructions with callgrind instead")
    parser.add_argument("--callgrind-part", choices=("read", "encode", "redact"), help=argparse.SUPPRESS)
    parser.add_argument("--spans-file", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.callgrind_part:
        _callgrind_part(options.callgrind_part, options.spans_file, options.batch)
        return
    if options.quick:
        options.tickets, options.rounds = 40, 5
    spans = pydantic_ai_spans(options.tickets)
    if options.instructions:
        counted = instructions(spans, options.batch)
        if options.json:
            print(json.dumps(counted, indent=2))
            return
        per_span = counted["instructions_per_span"]
        print(f"{counted['spans']} pydantic-ai spans ({options.tickets} runs), instructions counted by callgrind")
        print(f"  encode + gzip        {per_span['encode']:>10,} instructions per span")
        print(f"  redaction            {per_span['redaction']:>10,} instructions per span")
        print(f"  CPU work alone (encode + gzip), with / without: {counted['ratio_encode']}×")
        return
    batches = [spans[i : i + options.batch] for i in range(0, len(spans), options.batch)]
    key = passhat.PseudonymKey("benchmark-pseudonym-key")
    with OtlpReceiver(decode=False) as receiver:
        http = OtlpHttpExporter(receiver.url, api_key=None, timeout=10.0)
        # A fresh redacting exporter and redactor each round: what they remember of one round's strings, values
        # and pseudonyms must not help the next (in a process, each new customer's values are new).
        variants: dict[str, Callable[[], Callable[[Sequence[ReadableSpan]], Any]]] = {
            "http": lambda: http.export,
            "http+redaction": lambda: RedactingSpanExporter(http, passhat.Redactor(key=key)).export,
            "encode": lambda: EncodeOnly().export,
            "encode+redaction": lambda: RedactingSpanExporter(EncodeOnly(), passhat.Redactor(key=key)).export,
        }
        for make in variants.values():  # warm up: connections, imports
            timed(make(), batches[:1])
        seconds: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(options.rounds):
            for name, make in variants.items():
                seconds[name].append(timed(make(), batches))
        http.shutdown()
    per_span_us = {name: statistics.median(values) / len(spans) * 1e6 for name, values in seconds.items()}
    result = {
        "spans": len(spans),
        "tickets": options.tickets,
        "rounds": options.rounds,
        "median_us_per_span": {name: round(value, 2) for name, value in per_span_us.items()},
        "ratio_http": round(per_span_us["http+redaction"] / per_span_us["http"], 3),
        "ratio_encode": round(per_span_us["encode+redaction"] / per_span_us["encode"], 3),
    }
    if options.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{len(spans)} pydantic-ai spans ({options.tickets} runs), {options.rounds} interleaved rounds, medians")
    for name, value in per_span_us.items():
        print(f"  {name:<18} {value:8.2f} µs per span")
    print(f"  export to a collector, with / without redaction: {result['ratio_http']}×")
    print(f"  CPU work alone (encode + gzip), with / without:   {result['ratio_encode']}×")


if __name__ == "__main__":
    main()
