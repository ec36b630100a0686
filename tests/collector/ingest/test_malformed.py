"""No 5xx for a client's mistake: every malformed body is a 400 naming the problem (or a partial success naming
the spans at fault); a 503 means the store failed, and says nothing of its internals."""

from __future__ import annotations

import json
import sqlite3

import pytest
from google.rpc.status_pb2 import Status

from tests.collector.ingest.otlp_payloads import passhat_ticket, request, to_otlp_json
from tests.collector.server import Collector

JSON = {"content-type": "application/json"}
PROTOBUF = {"content-type": "application/x-protobuf"}
TRACE, SPAN = "ab" * 16, "cd" * 8


def _span_document(**fields: object) -> bytes:
    span = {"traceId": TRACE, "spanId": SPAN, "name": "s", **fields}
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()


def _nested_value(depth: int) -> bytes:
    """An AnyValue of `depth` nested kvlists, as JSON text (too deep for json.dumps itself)."""
    head = b'{"kvlistValue": {"values": [{"key": "k", "value": '
    return head * depth + b'{"stringValue": "leaf"}' + b"}]}}" * depth


def _with_nested_attribute(document: bytes, depth: int) -> bytes:
    return document.replace(b'"@nested"', _nested_value(depth))


REFUSED = {
    "arrays nested 100,000 deep": (b'{"resourceSpans": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "too deeply"),
    "a kind of 1e999": (_span_document(kind=1e999).replace(b"Infinity", b"1e999"), "out of range"),
    "a start time of 5,000 digits": (_span_document(startTimeUnixNano=0).replace(b": 0", b": " + b"7" * 5000), "JSON"),
    "an intValue of 70 digits": (
        _span_document(attributes=[{"key": "k", "value": {"intValue": "9" * 70}}]),
        "not an OTLP",
    ),
    "an attribute value nested 400 deep": (
        _with_nested_attribute(_span_document(attributes=[{"key": "k", "value": "@nested"}]), 400),
        "too deeply",
    ),
}


@pytest.mark.parametrize(("body", "named"), REFUSED.values(), ids=REFUSED.keys())
def test_a_malformed_json_body_is_a_400_naming_the_problem(collector: Collector, body: bytes, named: str) -> None:
    with collector.client(collector.shop_key) as client:
        response = client.post("/v1/traces", content=body, headers=JSON)
    assert response.status_code == 400, response.text
    assert named in response.json()["message"]


def test_an_attribute_nested_past_the_parsers_depth_is_a_400(collector: Collector) -> None:
    document = to_otlp_json(request(passhat_ticket("T-deep", tools=1)))
    document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"].append({"key": "k", "value": "@nested"})
    body = _with_nested_attribute(json.dumps(document).encode(), 70)
    with collector.client(collector.shop_key) as client:
        response = client.post("/v1/traces", content=body, headers=JSON)
    assert response.status_code == 400
    assert "too deep" in response.json()["message"]


def test_a_store_failure_is_a_503_that_names_no_internals(collector: Collector, sqlite_url: str) -> None:
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as db:
        db.execute("DROP TABLE state_writes")
    with collector.client(collector.shop_key) as client:
        body = request(passhat_ticket("T-1", tools=1)).SerializeToString()
        response = client.post("/v1/traces", content=body, headers=PROTOBUF)
    assert response.status_code == 503
    assert response.headers["retry-after"] == "1"
    message = Status.FromString(response.content).message
    assert message == "the store could not commit the spans, none were kept: retry later"


def test_an_unavailable_store_is_a_503_health_check_that_names_no_internals(
    collector: Collector, sqlite_url: str
) -> None:
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as db:
        db.execute("DROP TABLE passhat_schema_versions")  # and a broken one in its place: reading it fails
        db.execute("CREATE TABLE passhat_schema_versions (unrelated INTEGER)")
    with collector.client(None) as client:
        response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"status": "unavailable", "store": "unavailable"}
