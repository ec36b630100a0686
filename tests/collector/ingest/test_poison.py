"""One tenant's bad span never fails another's request: values no store column holds are refused per span, and
a group commit that fails anyway is retried one request at a time, then around the spans at fault."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import pathlib
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from passhat.collector.ingest._metrics import CollectorMetrics
from passhat.collector.ingest._normalize import normalize_span
from passhat.collector.ingest._otlp import DecodedTraces
from passhat.collector.ingest._writer import GroupCommitWriter, Ingested
from passhat.collector.store import (
    NormalizedSpan,
    SpanBatch,
    Store,
    StoreDataError,
    StoreError,
    WriteResult,
    open_store,
)
from tests.collector.ingest.otlp_payloads import passhat_ticket, request, span
from tests.collector.server import Collector

PROTOBUF = {"content-type": "application/x-protobuf"}
BEYOND_INT64 = 2**63 + 5


def _poisoned_request(ticket_id: str) -> bytes:
    """A valid ticket, plus a span starting past 2262 and counters no 64-bit column holds."""
    spans = passhat_ticket(ticket_id, tools=2)
    late = span(os.urandom(16), os.urandom(8), "from the far future", {"k": "v"}, start_ns=BEYOND_INT64)
    attempt = span(
        os.urandom(16),
        os.urandom(8),
        "invoke_agent support",
        {
            "gen_ai.operation.name": "invoke_agent",
            "passhat.ticket.id": f"{ticket_id}-attempt",
            "passhat.trial.attempt": "9" * 5000,
        },
        events=[("passhat.state_write", {"passhat.state_write.rowcount": "1" * 70, "passhat.state_write.table": "t"})],
    )
    return request([*spans, late, attempt]).SerializeToString()


def test_a_tenant_sending_poison_spans_costs_another_tenant_nothing(collector: Collector) -> None:
    statuses: dict[str, list[int]] = {"shop": [], "bank": []}
    answers: list[ExportTraceServiceResponse] = []

    def send(key: str, project: str, bodies: list[bytes]) -> None:
        with collector.client(key) as client:
            for body in bodies:
                response = client.post("/v1/traces", content=body, headers=PROTOBUF)
                statuses[project].append(response.status_code)
                if project == "shop":
                    answers.append(ExportTraceServiceResponse.FromString(response.content))

    poison = [[_poisoned_request(f"P-{c}-{i}") for i in range(25)] for c in range(2)]
    valid = [request(passhat_ticket(f"B-{i}", tools=2)).SerializeToString() for i in range(60)]
    threads = [threading.Thread(target=send, args=(collector.shop_key, "shop", bodies)) for bodies in poison]
    threads.append(threading.Thread(target=send, args=(collector.bank_key, "bank", valid)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)

    assert statuses["bank"] == [200] * 60
    assert collector.store.count_spans("bank") == 60 * 3
    # The poisoning project's requests are partial successes: its valid spans are kept, the late one refused.
    assert statuses["shop"] == [200] * 50
    assert {a.partial_success.rejected_spans for a in answers} == {1}
    assert all("2^63" in a.partial_success.error_message for a in answers)
    assert collector.store.count_spans("shop") == 50 * 4


def test_counters_beyond_64_bits_read_as_absent(collector: Collector) -> None:
    with collector.client(collector.shop_key) as client:
        assert client.post("/v1/traces", content=_poisoned_request("T-1"), headers=PROTOBUF).status_code == 200
        ticket = client.get("/api/tickets/T-1-attempt").json()
    assert ticket["attempts"][0]["trial_attempt"] is None
    assert ticket["state_writes"][0]["rowcount"] is None


def test_a_digit_that_is_not_ascii_is_not_a_number(collector: Collector) -> None:
    spans = passhat_ticket("T-2", tools=0)
    spans[0].attributes.add(key="passhat.trial.attempt").value.string_value = "²"
    with collector.client(collector.shop_key) as client:
        assert (
            client.post("/v1/traces", content=request(spans).SerializeToString(), headers=PROTOBUF).status_code == 200
        )
        assert client.get("/api/tickets/T-2").json()["attempts"][0]["trial_attempt"] is None


# --- the store refusing a row that passed validation: the writer's own isolation ---------------------------


def _spans(ticket_id: str, start_ns: int = 1_700_000_000_000_000_000) -> list[NormalizedSpan]:
    out = []
    for index in range(5):
        out.append(
            normalize_span(
                trace_id=os.urandom(16).hex(),
                span_id=os.urandom(8).hex(),
                parent_span_id=None,
                name=f"{ticket_id}-{index}",
                start_time_ns=start_ns + index,
                end_time_ns=start_ns + 100 + index,
                attributes={"passhat.ticket.id": f"{ticket_id}-{index}"},
                resource_attributes={},
                events=[],
            )
        )
    return out


def _submit_together(store: Store, requests: dict[str, list[NormalizedSpan]]) -> dict[str, Ingested | Exception]:
    """Queues every request before the ingest thread starts decoding, so they share one group commit."""
    bodies = {project.encode(): spans for project, spans in requests.items()}
    gate = threading.Event()

    def decode(body: bytes, encoding: str | None, media: str) -> DecodedTraces:
        gate.wait(10)
        return DecodedTraces(spans=list(bodies[body]))

    writer = GroupCommitWriter(store, CollectorMetrics(), decode, max_queued_bytes=1 << 20, max_commit_spans=1000)

    async def run() -> list[Ingested | BaseException]:
        futures = [writer.submit(project, project.encode(), None, "x") for project in requests]
        gate.set()
        return await asyncio.gather(*futures, return_exceptions=True)

    try:
        outcomes = asyncio.run(run())
    finally:
        writer.close()
    return {project: outcome for project, outcome in zip(requests, outcomes, strict=True)}  # type: ignore[misc]


def test_a_row_the_store_refuses_fails_only_its_own_span(sql_store: Store) -> None:
    bad = _spans("bad")
    bad[3] = replace(bad[3], start_time_ns=BEYOND_INT64)  # as a collector without validation would pass it on
    outcomes = _submit_together(sql_store, {"shop": bad, "bank": _spans("good"), "web": _spans("other")})

    assert sql_store.count_spans("bank") == 5
    assert sql_store.count_spans("web") == 5
    shop = outcomes["shop"]
    assert isinstance(shop, Ingested)
    assert shop.written.accepted == 4
    assert shop.decoded.rejected == [f"span {bad[3].span_id} ('bad-3'): the store cannot hold one of its values"]
    assert sql_store.count_spans("shop") == 4


def test_a_store_failure_is_still_a_failure_of_every_request(sql_store: Store, sqlite_url: str) -> None:
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as db:
        db.execute("DROP TABLE spans")  # a broken database: no request can be stored, none is reported stored
    outcomes = _submit_together(sql_store, {"shop": _spans("a"), "bank": _spans("b")})
    assert all(isinstance(outcome, StoreError) for outcome in outcomes.values())


# --- ClickHouse: the same isolation, on the embedded engine -------------------------------------------------


_NOW = time.time_ns() - 60 * 10**9  # ClickHouse's retention TTLs drop rows of long ago at their first merge


@pytest.fixture
def chdb_store(chdb_dir: pathlib.Path) -> Iterator[Store]:
    database = f"poison_{uuid.uuid4().hex[:10]}"
    store = open_store(f"chdb://{chdb_dir}?database={database}")
    yield store
    store._conn.command(f"DROP DATABASE IF EXISTS {database} SYNC")  # type: ignore[attr-defined]
    store.close()


def test_clickhouse_refuses_a_value_it_cannot_encode_as_a_data_error_and_stores_nothing_of_it(
    chdb_store: Store,
) -> None:
    chdb_store.ensure_project("shop")
    # Text that is not UTF-8 (a lone surrogate: OTLP's decoders refuse one, a store caller may not).
    bad = _spans("bad", _NOW)[0]
    bad = replace(bad, name="bad\ud800")
    with pytest.raises(StoreDataError, match="nothing was stored"):
        chdb_store.write_batches([SpanBatch("shop", [bad])])
    assert chdb_store.count_spans("shop") == 0
    # Its ticket row went in before the span rows, and was cancelled: no ticket, no traffic for it.
    assert chdb_store.list_tickets("shop") == []
    assert chdb_store.traffic("shop", days=36500, today=dt.date(2030, 1, 1)) == []


def test_clickhouse_a_row_it_refuses_fails_only_its_own_span(chdb_store: Store) -> None:
    for project in ("shop", "bank", "web"):
        chdb_store.ensure_project(project)
    bad = _spans("bad", _NOW)
    bad[3] = replace(bad[3], name="bad\udc00")
    good, other = _spans("good", _NOW), _spans("other", _NOW)
    outcomes = _submit_together(chdb_store, {"shop": bad, "bank": good, "web": other})

    assert chdb_store.count_spans("bank") == 5
    assert chdb_store.count_spans("web") == 5
    shop = outcomes["shop"]
    assert isinstance(shop, Ingested)
    assert shop.written.accepted == 4
    assert shop.decoded.rejected == [f"span {bad[3].span_id} ('bad\\udc00'): the store cannot hold one of its values"]
    assert sorted(t.ticket_id for t in chdb_store.list_tickets("shop")) == ["bad-0", "bad-1", "bad-2", "bad-4"]


def test_clickhouse_stores_otlp_values_beyond_its_narrow_columns(chdb_store: Store) -> None:
    """Legal OTLP that once failed ClickHouse's whole insert (a 503 for every request in the group): a span kind
    past UInt8, a start past Date's last day (2149), a token count no Int64 holds."""
    chdb_store.ensure_project("shop")
    late = 7_258_118_400 * 10**9  # 2200-01-01
    spans = _spans("odd", _NOW)
    spans[0] = replace(spans[0], kind=300)
    spans[1] = normalize_span(
        **{**_fields_of(spans[1]), "start_time_ns": late, "end_time_ns": late + 1},  # the ticket's times too
    )
    spans[2] = replace(spans[2], attributes={**spans[2].attributes, "gen_ai.usage.input_tokens": "9" * 30})
    assert chdb_store.write_batches([SpanBatch("shop", spans)]) == [WriteResult(5, 0)]
    stored = {t.ticket_id: t for t in chdb_store.list_tickets("shop")}
    assert set(stored) == {f"odd-{i}" for i in range(5)}
    assert stored["odd-1"].start_time_ns == late
    [kind] = [s.kind for s in chdb_store.get_trace("shop", spans[0].trace_id)]
    assert kind == 0  # outside OTLP's SpanKind: stored as unspecified


def _fields_of(span: NormalizedSpan) -> dict[str, Any]:
    return {
        "trace_id": span.trace_id,
        "span_id": span.span_id,
        "parent_span_id": span.parent_span_id,
        "name": span.name,
        "start_time_ns": span.start_time_ns,
        "end_time_ns": span.end_time_ns,
        "attributes": dict(span.attributes),
        "resource_attributes": {},
        "events": [],
    }
