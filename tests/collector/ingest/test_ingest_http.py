"""OTLP/HTTP ingest over real HTTP: formats, durability, de-duplication, every way a request can be bad."""

from __future__ import annotations

import gzip
import json
import os
import threading
import time

import httpx
import pytest
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from passhat.collector.ingest._keys import key_prefix
from passhat.collector.store.sql._schema import MIGRATIONS
from passhat.collector.store.sql._store import SqlStore
from tests.collector.ingest.otlp_payloads import passhat_ticket, request, span, to_otlp_json
from tests.collector.server import Collector

PROTOBUF = {"content-type": "application/x-protobuf"}
JSON = {"content-type": "application/json"}


def post(client: httpx.Client, body: bytes, headers: dict[str, str] | None = None) -> httpx.Response:
    return client.post("/v1/traces", content=body, headers=headers or PROTOBUF)


def status_message(response: httpx.Response) -> str:
    if response.headers["content-type"].startswith("application/x-protobuf"):
        status = Status()
        status.ParseFromString(response.content)
        return str(status.message)
    return str(response.json()["message"])


def test_protobuf_traces_become_tickets_tool_calls_and_writes(collector: Collector) -> None:
    spans = passhat_ticket("T-1", task_type="refund", tools=8, writes_per_tool=3)
    with collector.client(collector.shop_key) as client:
        response = post(client, request(spans).SerializeToString())
        assert response.status_code == 200
        answer = ExportTraceServiceResponse()
        answer.ParseFromString(response.content)
        assert not answer.HasField("partial_success")
        assert collector.store.count_spans("shop") == 9  # committed before the 200
        tickets = client.get("/api/tickets").json()["tickets"]
        assert [(t["ticket_id"], t["task_type"], t["source"]) for t in tickets] == [("T-1", "refund", "production")]
        assert tickets[0]["intent"] == {"order_id": "O-1"}
        detail = client.get("/api/tickets/T-1").json()
        assert len(detail["spans"]) == 9
        assert [c["tool_name"] for c in detail["tool_calls"]] == [f"tool_{i}" for i in range(8)]
        assert detail["tool_calls"][1]["outcome"] == "empty"
        assert len(detail["state_writes"]) == 24
        assert detail["state_writes"][0]["after"] == {"status": "refunded"}
        traffic = client.get("/api/traffic", params={"days": 1}).json()["traffic"]
        assert [(t["task_type"], t["tickets"]) for t in traffic] == [("refund", 1)]


def test_otlp_json_with_hex_ids_is_accepted(collector: Collector) -> None:
    spans = passhat_ticket("T-json", tools=2)
    document = to_otlp_json(request(spans))
    document["resourceSpans"][0]["someFutureField"] = {"x": 1}  # unknown fields are ignored
    with collector.client(collector.shop_key) as client:
        response = post(client, json.dumps(document).encode(), JSON)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("application/json")
        detail = client.get("/api/tickets/T-json").json()
    assert detail["attempts"][0]["trace_id"] == spans[0].trace_id.hex()
    assert len(detail["tool_calls"]) == 2


def test_gzip_bodies_are_accepted(collector: Collector) -> None:
    body = gzip.compress(request(passhat_ticket("T-gz")).SerializeToString())
    with collector.client(collector.shop_key) as client:
        response = post(client, body, {**PROTOBUF, "content-encoding": "gzip"})
    assert response.status_code == 200
    assert collector.store.count_spans("shop") == 9


def test_redelivered_spans_are_acknowledged_but_stored_once(collector: Collector) -> None:
    body = request(passhat_ticket("T-dup", tools=3)).SerializeToString()
    with collector.client(collector.shop_key) as client:
        for _ in range(3):
            assert post(client, body).status_code == 200
        assert collector.store.count_spans("shop") == 4
        assert client.get("/api/traffic").json()["traffic"][0]["tickets"] == 1
        metrics = client.get("/metrics").text
    assert "passhat_spans_accepted_total 4.0" in metrics
    assert "passhat_spans_deduplicated_total 8.0" in metrics


def test_partial_success_names_the_rejected_spans(collector: Collector) -> None:
    good = passhat_ticket("T-ok", tools=1)
    trace = os.urandom(16)
    bad_trace = span(os.urandom(9), os.urandom(8), "short trace id", {})
    bad_span = span(trace, os.urandom(3), "short span id", {})
    zero = span(bytes(16), os.urandom(8), "zero trace id", {})
    huge = span(trace, os.urandom(8), "huge value", {"input.value": "x" * (65 * 1024)})
    body = request([*good, bad_trace, bad_span, zero, huge]).SerializeToString()
    with collector.client(collector.shop_key) as client:
        response = post(client, body)
    assert response.status_code == 200
    answer = ExportTraceServiceResponse()
    answer.ParseFromString(response.content)
    assert answer.partial_success.rejected_spans == 4
    message = answer.partial_success.error_message
    assert "trace_id must be 16" in message and "span_id must be 8" in message
    assert "'input.value' is 66560 bytes" in message
    assert collector.store.count_spans("shop") == 2


def test_json_ids_that_are_not_hex_are_rejected_per_span(collector: Collector) -> None:
    document = to_otlp_json(request(passhat_ticket("T-x", tools=1)))
    document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["spanId"] = "not-hex!"
    with collector.client(collector.shop_key) as client:
        response = post(client, json.dumps(document).encode(), JSON)
    assert response.status_code == 200
    assert response.json()["partialSuccess"]["rejectedSpans"] == "1"
    assert collector.store.count_spans("shop") == 1
    # It said "span_id must be 8 non-zero bytes (16 hex characters), got 1 bytes" of an id of 8 characters.
    message = response.json()["partialSuccess"]["errorMessage"]
    assert "span_id 'not-hex!' is not hex: OTLP JSON writes it as 16 hex characters" in message, message


def test_a_trace_id_of_32_characters_that_are_not_hex_is_named_as_such(collector: Collector) -> None:
    document = to_otlp_json(request(passhat_ticket("T-x")))
    document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] = "z" * 32
    with collector.client(collector.shop_key) as client:
        response = post(client, json.dumps(document).encode(), JSON)
    assert response.status_code == 200
    message = response.json()["partialSuccess"]["errorMessage"]
    assert f"trace_id {'z' * 32!r} is not hex: OTLP JSON writes it as 32 hex characters" in message, message


@pytest.mark.parametrize(
    ("key", "reason"),
    [(None, "missing"), ("phk_00000000_wrong", "unknown")],
)
def test_ingest_without_a_valid_key_is_401(collector: Collector, key: str | None, reason: str) -> None:
    with collector.client(key) as client:
        response = post(client, request(passhat_ticket("T-1")).SerializeToString())
    assert response.status_code == 401, reason
    assert "API key" in status_message(response)
    assert collector.store.count_spans("shop") == 0


def test_a_revoked_key_is_refused(collector: Collector) -> None:
    assert collector.store.revoke_api_key(key_prefix(collector.shop_key))
    with collector.client(collector.shop_key) as client:
        assert post(client, request(passhat_ticket("T-1")).SerializeToString()).status_code == 401
        assert client.get("/api/tickets").status_code == 401


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"content-type": "text/plain"}, 415),
        ({}, 415),
        ({**PROTOBUF, "content-encoding": "br"}, 415),
    ],
)
def test_unsupported_media_is_415(collector: Collector, headers: dict[str, str], status: int) -> None:
    with collector.client(collector.shop_key) as client:
        response = client.post("/v1/traces", content=b"\x00\x01", headers=headers)
    assert response.status_code == status
    assert status_message(response)


def test_oversized_bodies_are_413(collector: Collector) -> None:
    limit = 4 * 1024 * 1024
    with collector.client(collector.shop_key) as client:
        too_big = post(client, b"\x0a" * (limit + 1))
        assert too_big.status_code == 413
        assert "limit" in status_message(too_big)
        # A small gzip body that inflates beyond the limit (a zip bomb) is refused too.
        bomb = gzip.compress(b"\x00" * (limit + 10))
        inflated = post(client, bomb, {**PROTOBUF, "content-encoding": "gzip"})
        assert inflated.status_code == 413


@pytest.mark.parametrize(
    ("body", "headers", "fragment"),
    [
        (b"", PROTOBUF, "empty"),
        (b"\xff\xff\xff\xff", PROTOBUF, "protobuf"),
        (None, PROTOBUF, "protobuf"),  # truncated: filled in by the test
        (b"not gzip at all", {**PROTOBUF, "content-encoding": "gzip"}, "corrupt"),
        (None, {**PROTOBUF, "content-encoding": "gzip"}, "truncated"),
        (b"{not json", JSON, "not valid JSON"),
        (b"[1, 2]", JSON, "object"),
        (b'{"resourceSpans": 5}', JSON, "OTLP"),
        (
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": 7, "startTimeUnixNano": "x"}]}]}]}',
            JSON,
            "OTLP",
        ),
    ],
    ids=[
        "empty",
        "garbage",
        "truncated",
        "corrupt-gzip",
        "truncated-gzip",
        "bad-json",
        "json-array",
        "wrong-type",
        "wrong-field-types",
    ],
)
def test_malformed_bodies_are_400_with_a_message(
    collector: Collector, body: bytes | None, headers: dict[str, str], fragment: str
) -> None:
    full = request(passhat_ticket("T-trunc")).SerializeToString()
    if body is None:
        body = gzip.compress(full)[:-20] if "content-encoding" in headers else full[: len(full) // 2]
    with collector.client(collector.shop_key) as client:
        response = post(client, body, headers)
    assert response.status_code == 400
    assert fragment in status_message(response)


def test_the_collector_keeps_serving_and_keeps_its_data_after_bad_input(collector: Collector) -> None:
    with collector.client(collector.shop_key) as client:
        assert post(client, request(passhat_ticket("T-before")).SerializeToString()).status_code == 200
        for body, headers in [
            (b"\xff" * 100, PROTOBUF),
            (b"{", JSON),
            (b"junk", {**PROTOBUF, "content-encoding": "gzip"}),
            (b"", JSON),
        ]:
            assert 400 <= post(client, body, headers).status_code < 500
        assert client.get("/healthz").json()["status"] == "ok"
        assert post(client, request(passhat_ticket("T-after")).SerializeToString()).status_code == 200
        ids = {t["ticket_id"] for t in client.get("/api/tickets").json()["tickets"]}
    assert ids == {"T-before", "T-after"}
    assert collector.store.count_spans("shop") == 18


def test_a_full_write_queue_answers_429_with_retry_after(sql_store: SqlStore) -> None:
    from passhat.collector import CollectorSettings
    from tests.collector.server import new_key, running_collector

    key = new_key(sql_store, "shop")
    settings = CollectorSettings(max_queued_bytes=1, key_cache_s=60.0, retry_after_s=3)
    bodies = [request(passhat_ticket(f"T-{n}")).SerializeToString() for n in range(3)]
    with running_collector(sql_store, settings) as running:
        headers = {**PROTOBUF, "authorization": f"Bearer {key}"}
        httpx.get(running.url + "/healthz")
        results: list[int] = []

        def post(body: bytes) -> None:
            results.append(
                httpx.post(running.url + "/v1/traces", content=body, headers=headers, timeout=30).status_code
            )

        def metric(text: str) -> None:
            deadline = time.monotonic() + 10
            while text not in httpx.get(running.url + "/metrics").text:
                assert time.monotonic() < deadline, f"never saw {text!r} in /metrics"
                time.sleep(0.02)

        # Hold the store's writer lock, as a slow disk would: the first request is decoded and waits for its
        # commit; the second waits in the queue (an empty queue takes any request); the third finds it full.
        sql_store._write_lock.acquire()
        try:
            waiting = [threading.Thread(target=post, args=(body,)) for body in bodies[:2]]
            waiting[0].start()
            metric("passhat_write_queue_spans 9.0")
            waiting[1].start()
            metric(f"passhat_ingest_queue_bytes {float(len(bodies[1]))}")
            refused = httpx.post(running.url + "/v1/traces", content=bodies[2], headers=headers, timeout=30)
        finally:
            sql_store._write_lock.release()
        for thread in waiting:
            thread.join(30)
    assert refused.status_code == 429
    assert refused.headers["retry-after"] == "3"
    assert "bytes of requests are waiting" in refused.text
    assert results == [200, 200]
    assert sql_store.count_spans("shop") == 18


def test_healthz_and_metrics(collector: Collector) -> None:
    with collector.client(None) as client:
        health = client.get("/healthz").json()
        metrics = client.get("/metrics")
    assert health == {
        "status": "ok",
        "store": "ok",
        "schema_version": len(MIGRATIONS),
        "queued_bytes": 0,
        "queued_spans": 0,
    }
    assert metrics.headers["content-type"].startswith("text/plain")
    for name in (
        "passhat_spans_accepted_total",
        "passhat_spans_rejected_total",
        "passhat_spans_deduplicated_total",
        "passhat_write_queue_spans",
        "passhat_store_write_seconds",
        "passhat_request_seconds",
    ):
        assert name in metrics.text


def test_the_healthz_example_in_the_docs_is_what_the_collector_answers(collector: Collector) -> None:
    import pathlib
    import re

    from passhat.collector.store.clickhouse._schema import LATEST_VERSION

    docs = (pathlib.Path(__file__).resolve().parents[3] / "docs" / "collector.md").read_text(encoding="utf-8")
    example = re.search(r"`GET /healthz` \(no key\): `(\{.*?\})`", docs)
    assert example is not None
    with httpx.Client(base_url=collector.url) as client:
        answer = client.get("/healthz").json()
    assert json.loads(example[1]) == answer
    assert answer["schema_version"] == len(MIGRATIONS)
    said = f"in this release {len(MIGRATIONS)} on SQLite and PostgreSQL, {LATEST_VERSION} on ClickHouse"
    assert said in " ".join(docs.split())


def test_the_docs_list_every_query_parameter_of_get_api_tickets(collector: Collector) -> None:
    import pathlib
    import re

    docs = (pathlib.Path(__file__).resolve().parents[3] / "docs" / "collector.md").read_text(encoding="utf-8")
    with httpx.Client(base_url=collector.url) as client:
        operation = client.get("/openapi.json").json()["paths"]["/api/tickets"]["get"]
    listed = re.search(r"- `GET /api/tickets\?([^`]*)`(.*?)\n- ", docs, re.DOTALL)
    assert listed is not None
    described = listed[1] + " ".join(re.findall(r"`(\w+=)", listed[2]))
    assert "`?source=sandbox&run=RUN_ID`" in listed[2]
    for parameter in operation["parameters"]:
        assert f"{parameter['name']}=" in described, parameter["name"]
