"""Fuzzing the export route: a few thousand seeded, mutated protobuf and JSON bodies, some gzipped, sent to a
real collector. None may get a 5xx or hang, and what was stored before is unchanged afterwards."""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from passhat.collector.store import NormalizedSpan
from tests.collector.ingest.otlp_payloads import passhat_ticket, request, to_otlp_json
from tests.collector.server import Collector

PROTOBUF = "application/x-protobuf"
JSON = "application/json"

# Values that broke, or could break, some decode path: out-of-range and non-finite numbers, digit strings
# that are not ASCII or not 64-bit, wrong types, deep nesting, long and invalid strings.
HOSTILE_JSON = [
    "1e999",
    "-1e999",
    "NaN",
    "-1",
    str(2**64),
    str(2**63),
    "9" * 5000,
    '"²"',
    '"' + "9" * 70 + '"',
    '"\\ud800"',
    "null",
    "true",
    "[]",
    "{}",
    '"' + "x" * 70_000 + '"',
    "[" * 2000 + "]" * 2000,
    '{"kvlistValue": ' * 300 + "{}" + "}" * 300,
    '"zz"',
    '""',
]


def _seed_body() -> tuple[bytes, dict[str, Any], str]:
    spans = passhat_ticket("FUZZ-SEED", tools=3, writes_per_tool=2)
    message = request(spans)
    return message.SerializeToString(), to_otlp_json(message), spans[0].trace_id.hex()


def _mutate_bytes(rng: random.Random, body: bytes) -> bytes:
    data = bytearray(body)
    for _ in range(rng.randint(1, 4)):
        choice = rng.random()
        at = rng.randrange(len(data) + 1)
        if choice < 0.35 and data:
            data[min(at, len(data) - 1)] = rng.randrange(256)
        elif choice < 0.5:
            del data[at:]
        elif choice < 0.7:
            data[at:at] = rng.randbytes(rng.randint(1, 16))
        elif choice < 0.85:
            data[at:at] = b"\xff" * 9 + b"\x01"  # a varint of 64 bits set
        else:
            start = rng.randrange(len(data) + 1)
            data[at:at] = data[start : start + rng.randint(1, 64)] * rng.randint(1, 50)
        if not data:
            break
    return bytes(data)


def _mutate_protobuf(rng: random.Random, seed: bytes) -> bytes:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    if rng.random() < 0.6:
        return _mutate_bytes(rng, seed)
    message = ExportTraceServiceRequest.FromString(seed)
    spans = message.resource_spans[0].scope_spans[0].spans
    span = spans[rng.randrange(len(spans))]
    field = rng.choice(["start", "end", "event", "attempt", "rowcount", "id", "int", "nest", "name"])
    extreme = rng.choice([0, 2**63 - 1, 2**63, 2**64 - 1])
    if field == "start":
        span.start_time_unix_nano = extreme
    elif field == "end":
        span.end_time_unix_nano = extreme
    elif field == "event" and span.events:
        span.events[0].time_unix_nano = extreme
    elif field == "attempt":
        span.attributes.add(key="passhat.trial.attempt").value.string_value = rng.choice(["²", "9" * 5000, "-0", " 7 "])
    elif field == "rowcount" and span.events:
        kv = span.events[0].attributes.add(key="passhat.state_write.rowcount")
        kv.value.string_value = rng.choice(["1" * 40, "١٢", "-" + "9" * 19])
    elif field == "id":
        span.span_id = rng.randbytes(rng.choice([0, 7, 9, 8]))
    elif field == "int":
        span.attributes.add(key="n").value.int_value = rng.choice([-(2**63), 2**63 - 1])
    elif field == "nest":
        value = span.attributes.add(key="deep").value
        for _ in range(rng.randint(10, 60)):
            value = value.array_value.values.add()
        value.string_value = "leaf"
    else:
        span.name = "n" * rng.choice([0, 1, 300_000])
    return message.SerializeToString()


def _paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*path, index))


def _mutate_json(rng: random.Random, seed: dict[str, Any]) -> bytes:
    text = json.dumps(seed)
    if rng.random() < 0.3:
        return _mutate_bytes(rng, text.encode())
    document = json.loads(text)
    paths = [p for p in _paths(document) if p]
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(paths)
        parent = document
        try:  # an earlier replacement may have cut this path short
            for step in path[:-1]:
                parent = parent[step]
            parent[path[-1]] = "@HOSTILE@"
        except (IndexError, KeyError, TypeError):
            continue
    encoded = json.dumps(document)
    while '"@HOSTILE@"' in encoded:
        encoded = encoded.replace('"@HOSTILE@"', rng.choice(HOSTILE_JSON), 1)
    return encoded.encode()


def _fuzz(collector: Collector, seed_text: int, count: int, media: str, make: Callable[[random.Random], bytes]) -> None:
    rng = random.Random(seed_text)
    statuses: dict[int, int] = {}
    # A hang fails the test: no request may take longer than this, whatever its body.
    with collector.client(collector.bank_key) as client:
        client.timeout = httpx.Timeout(20.0)
        for index in range(count):
            body = make(rng)
            headers = {"content-type": media}
            if index % 7 == 0:
                body = gzip.compress(body)
                headers["content-encoding"] = "gzip"
                if index % 14 == 0:
                    body = _mutate_bytes(rng, body)  # a corrupt or truncated gzip stream
            response = client.post("/v1/traces", content=body, headers=headers)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            assert response.status_code < 500, (index, response.status_code, response.content[:300])
    assert statuses.get(200, 0) > count // 10, statuses  # the fuzzer reached the store, not just the parser


@pytest.fixture
def seeded(collector: Collector) -> Iterator[tuple[Collector, bytes, dict[str, Any]]]:
    """The seed stored in `bank` (the fuzzed project) and a ticket in `shop`; both must come out unchanged."""
    body, document, trace_id = _seed_body()
    shop_body = request(passhat_ticket("SHOP-1")).SerializeToString()
    with collector.client(collector.shop_key) as shop, collector.client(collector.bank_key) as bank:
        assert shop.post("/v1/traces", content=shop_body, headers={"content-type": PROTOBUF}).status_code == 200
        assert bank.post("/v1/traces", content=body, headers={"content-type": PROTOBUF}).status_code == 200
        before_shop = shop.get("/api/ticket", params={"id": "SHOP-1"}).json()
    before_bank: list[NormalizedSpan] = collector.store.get_trace("bank", trace_id)
    assert len(before_bank) == 4
    yield collector, body, document
    with collector.client(collector.shop_key) as shop:
        assert shop.get("/api/ticket", params={"id": "SHOP-1"}).json() == before_shop
        assert shop.get("/api/tickets").json()["tickets"] == [before_shop["attempts"][0]]
    # A mutated body may add spans to the seed's trace (a flipped span id): the seed's own are unchanged.
    seed_ids = {s.span_id for s in before_bank}
    assert [s for s in collector.store.get_trace("bank", trace_id) if s.span_id in seed_ids] == before_bank
    assert collector.store.count_spans("shop") == 9


def test_mutated_protobuf_bodies_never_get_a_5xx(seeded: tuple[Collector, bytes, dict[str, Any]]) -> None:
    collector, body, _ = seeded
    _fuzz(collector, 16_001, 1500, PROTOBUF, lambda rng: _mutate_protobuf(rng, body))


def test_mutated_json_bodies_never_get_a_5xx(seeded: tuple[Collector, bytes, dict[str, Any]]) -> None:
    collector, _, document = seeded
    _fuzz(collector, 16_002, 1000, JSON, lambda rng: _mutate_json(rng, document))
