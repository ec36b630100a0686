"""A sandbox trial's tool calls: the trace the collector stores and the record signatures read agree."""

from __future__ import annotations

import dataclasses
import pathlib
import shutil
import sqlite3
from collections.abc import Iterator, Sequence

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import passhat
from passhat.collector.ingest._otlp import decode_protobuf
from passhat.sandbox import Message, Sandbox, Scenario, Toolbox, TrialContext, run_trial


class _TwoCalls:
    """Lists the product types (none: the catalogue is empty), then cancels an order that does not exist."""

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        await tools.call("list_product_types", {})
        await tools.call("cancel_pending_order", {"order_id": "#W0000000", "reason": "no longer needed"})
        return Message("agent", "I could not find that order.", final=True, stop=True)


@pytest.fixture
def empty_catalogue(tmp_path: pathlib.Path) -> Iterator[tuple[Sandbox, Scenario]]:
    """Retail with list_product_types declared a lookup and no products (so it returns {}), and a scenario."""
    with Sandbox("retail", seed=0, size="small", workdir=tmp_path / "base") as base:
        template = tmp_path / "empty-catalogue.sqlite"
        shutil.copyfile(base.template_path, template)
        connection = sqlite3.connect(template)  # foreign keys off: the variants may stay
        with connection:
            connection.execute("DELETE FROM products")
        connection.close()
        domain = dataclasses.replace(base.domain, lookup_tools=base.domain.lookup_tools | {"list_product_types"})
        scenario = base.scenarios(count=1)[0]
        with Sandbox(domain, seed=0, size="small", workdir=tmp_path / "empty", template=template) as sandbox:
            yield sandbox, scenario


async def test_an_empty_lookup_and_a_missing_write_target_agree_in_trace_and_record(
    empty_catalogue: tuple[Sandbox, Scenario],
) -> None:
    sandbox, scenario = empty_catalogue
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    runtime = passhat.configure(tracer_provider=provider, source="sandbox", make_global=False)

    def agent(context: TrialContext) -> _TwoCalls:
        return _TwoCalls()

    result = await run_trial(sandbox, scenario, 0, agent, runtime=runtime)

    recorded = [(c.name, c.outcome) for c in result.record.tool_calls]
    decoded = decode_protobuf(
        encode_spans(exporter.get_finished_spans()).SerializeToString(), max_attribute_bytes=1 << 16
    )
    stored = [(s.tool_call.tool_name, s.tool_call.outcome) for s in decoded.spans if s.tool_call is not None]
    assert recorded == [("list_product_types", "empty"), ("cancel_pending_order", "error")]
    assert stored == recorded
