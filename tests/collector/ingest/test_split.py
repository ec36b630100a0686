"""A large request is decoded and committed in parts: each span decodes as in the whole request, and small
requests are answered between the parts instead of after the whole. A large JSON body is validated whole (a
malformed one is refused and nothing of it stored), then split like protobuf."""

from __future__ import annotations

import json
import os
import threading
import time

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans

from passhat.collector import CollectorSettings
from passhat.collector.ingest._otlp import DecodedTraces, decode_protobuf
from passhat.collector.ingest._split import split_request
from passhat.collector.store import Store
from tests.collector.ingest.otlp_payloads import attrs, passhat_ticket, request, span, to_otlp_json
from tests.collector.server import new_key, running_collector

PROTOBUF = {"content-type": "application/x-protobuf"}
LIMIT = 1024


def _mixed_request() -> ExportTraceServiceRequest:
    """Two resources (one with an attribute above LIMIT), several scopes each, spans of every size."""
    message = ExportTraceServiceRequest()
    for r_index, service in enumerate(["a", "b"]):
        resource_attrs = {"service.name": service, "big": "x" * (2 * LIMIT if r_index else 1)}
        resource_spans = ResourceSpans(schema_url=f"schema-{service}")
        resource_spans.resource.attributes.extend(attrs(resource_attrs))
        for s_index in range(3):
            scope = ScopeSpans(schema_url="s")
            scope.scope.name = f"scope-{s_index}"
            scope.spans.extend(passhat_ticket(f"T-{service}-{s_index}", tools=s_index * 2))
            if s_index == 1:
                scope.spans.append(span(b"\x00" * 16, os.urandom(8), "invalid trace id", {}))
            resource_spans.scope_spans.append(scope)
        message.resource_spans.append(resource_spans)
    return message


def _decoded(parts: list[bytes]) -> DecodedTraces:
    whole = DecodedTraces()
    for part in parts:
        decoded = decode_protobuf(part, max_attribute_bytes=LIMIT)
        whole.spans += decoded.spans
        whole.rejected += decoded.rejected
    return whole


def test_every_span_decodes_in_its_part_as_in_the_whole_request() -> None:
    body = _mixed_request().SerializeToString()
    for max_spans in (1, 2, 3, 7, 15):
        parts = split_request(body, max_spans)
        assert parts is not None and len(parts) > 1
        assert all(len(decode_protobuf(p, max_attribute_bytes=LIMIT).spans) <= max_spans for p in parts)
        assert _decoded(parts) == decode_protobuf(body, max_attribute_bytes=LIMIT)


def test_a_request_of_fewer_spans_or_malformed_is_not_split() -> None:
    body = _mixed_request().SerializeToString()
    assert split_request(body, 10_000) is None
    assert split_request(body[:-3], 2) is None
    assert split_request(b"\x0b\x00", 2) is None  # a group: not a wire type OTLP uses


def _large_request(tickets: int) -> bytes:
    return request([s for i in range(tickets) for s in passhat_ticket(f"L-{i}", tools=8)]).SerializeToString()


def test_a_small_request_is_answered_between_the_parts_of_a_large_one(sql_store: Store) -> None:
    key = new_key(sql_store, "shop")
    large = _large_request(1200)  # 10,800 spans, ~3 MiB: split in parts of 1,000 spans
    assert len(large) > 2 * 1024 * 1024
    small = request(passhat_ticket("S-1", tools=1)).SerializeToString()
    finished: dict[str, float] = {}
    settings = CollectorSettings(key_cache_s=60.0, max_commit_spans=1000)
    with running_collector(sql_store, settings) as running:

        def send(name: str, body: bytes) -> None:
            with httpx.Client(base_url=running.url, headers={"authorization": f"Bearer {key}"}, timeout=120) as c:
                assert c.post("/v1/traces", content=body, headers=PROTOBUF).status_code == 200
            finished[name] = time.monotonic()

        big = threading.Thread(target=send, args=("large", large))
        big.start()
        while sql_store.count_spans("shop") == 0:  # the large request's first part is committed
            time.sleep(0.01)
        send("small", small)
        big.join(120)
    assert finished["small"] < finished["large"]
    assert sql_store.count_spans("shop") == 1200 * 9 + 2


# --- large JSON bodies: validated whole, then decoded and committed in parts like protobuf --------------------


def _large_json(tickets: int) -> bytes:
    message = request([s for i in range(tickets) for s in passhat_ticket(f"J-{i}", tools=8)])
    return json.dumps(to_otlp_json(message)).encode()


def test_a_large_json_body_is_committed_in_parts_and_answers_a_small_request_between_them(sql_store: Store) -> None:
    key = new_key(sql_store, "shop")
    large = _large_json(500)  # 4,500 spans, ~10 MiB of JSON: parts of 1,000 spans
    assert len(large) > 2 * 1024 * 1024
    small = request(passhat_ticket("S-1", tools=1)).SerializeToString()
    finished: dict[str, float] = {}
    answers: dict[str, httpx.Response] = {}
    settings = CollectorSettings(key_cache_s=60.0, max_commit_spans=1000)
    with running_collector(sql_store, settings) as running:

        def send(name: str, body: bytes, media: str) -> None:
            with httpx.Client(base_url=running.url, headers={"authorization": f"Bearer {key}"}, timeout=120) as c:
                answers[name] = c.post("/v1/traces", content=body, headers={"content-type": media})
            finished[name] = time.monotonic()

        big = threading.Thread(target=send, args=("large", large, "application/json"))
        big.start()
        while sql_store.count_spans("shop") == 0:  # the large request's first part is committed
            time.sleep(0.01)
        send("small", small, PROTOBUF["content-type"])
        big.join(120)
    assert answers["large"].status_code == 200
    assert answers["large"].headers["content-type"] == "application/json"  # answered like it asked
    assert answers["large"].json() == {}  # nothing rejected
    assert finished["small"] < finished["large"]
    assert sql_store.count_spans("shop") == 500 * 9 + 2
    assert len(sql_store.list_tickets("shop", limit=1000)) == 501


def test_a_large_json_body_with_one_malformed_span_is_refused_whole(sql_store: Store) -> None:
    key = new_key(sql_store, "shop")
    document = json.loads(_large_json(300))
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans[-1]["startTimeUnixNano"] = "soon"  # the last span: past every part but the last
    body = json.dumps(document).encode()
    assert len(body) > 2 * 1024 * 1024
    auth = {"authorization": f"Bearer {key}"}
    with (
        running_collector(sql_store, CollectorSettings(max_commit_spans=500)) as running,
        httpx.Client(base_url=running.url, headers=auth, timeout=120) as c,
    ):
        answer = c.post("/v1/traces", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 400
    assert "startTimeUnixNano" in answer.json()["message"]
    assert sql_store.count_spans("shop") == 0
