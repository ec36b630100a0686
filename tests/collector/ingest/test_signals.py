"""OTLP logs and metrics exports over real HTTP: answered 2xx; GenAI events sent as logs join their trace."""

from __future__ import annotations

import gzip
import json
import os
import time

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest, ExportLogsServiceResponse
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
from opentelemetry.proto.metrics.v1.metrics_pb2 import Gauge, Metric, NumberDataPoint, ResourceMetrics, ScopeMetrics

from tests.collector.ingest.otlp_payloads import any_value, attrs, request, span
from tests.collector.server import Collector

PROTOBUF = {"content-type": "application/x-protobuf"}


def logs(records: list[LogRecord]) -> ExportLogsServiceRequest:
    return ExportLogsServiceRequest(resource_logs=[ResourceLogs(scope_logs=[ScopeLogs(log_records=records)])])


def metrics() -> ExportMetricsServiceRequest:
    point = NumberDataPoint(time_unix_nano=time.time_ns(), as_int=3)
    metric = Metric(name="gen_ai.client.token.usage", gauge=Gauge(data_points=[point]))
    return ExportMetricsServiceRequest(
        resource_metrics=[ResourceMetrics(scope_metrics=[ScopeMetrics(metrics=[metric])])]
    )


def to_json(message: ExportLogsServiceRequest | ExportMetricsServiceRequest) -> bytes:
    document = json_format.MessageToDict(message)
    for resource in document.get("resourceLogs", []):
        for scope in resource.get("scopeLogs", []):
            for record in scope.get("logRecords", []):
                for name in ("traceId", "spanId"):
                    if name in record:
                        import base64

                        record[name] = base64.b64decode(record[name]).hex()
    return json.dumps(document).encode()


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
def test_a_metrics_export_is_acknowledged(collector: Collector, encoding: str) -> None:
    with collector.client(collector.shop_key) as client:
        if encoding == "protobuf":
            response = client.post("/v1/metrics", content=metrics().SerializeToString(), headers=PROTOBUF)
        else:
            response = client.post(
                "/v1/metrics", content=to_json(metrics()), headers={"content-type": "application/json"}
            )
        assert response.status_code == 200
        assert collector.store.count_spans("shop") == 0


def test_a_malformed_metrics_export_is_400_and_an_unauthenticated_one_401(collector: Collector) -> None:
    with collector.client(collector.shop_key) as client:
        assert client.post("/v1/metrics", content=b"\xff\xff\xff", headers=PROTOBUF).status_code == 400
    with collector.client(None) as client:
        assert client.post("/v1/metrics", content=metrics().SerializeToString(), headers=PROTOBUF).status_code == 401


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
def test_genai_events_sent_as_logs_become_event_spans_of_their_span(collector: Collector, encoding: str) -> None:
    trace_id, chat_id = os.urandom(16), os.urandom(8)
    start = time.time_ns() - 5_000_000_000
    chat = span(trace_id, chat_id, "chat gpt-4o", {"gen_ai.operation.name": "chat"}, start_ns=start)
    message = LogRecord(
        time_unix_nano=start + 10,
        event_name="gen_ai.user.message",
        trace_id=trace_id,
        span_id=chat_id,
        attributes=attrs({"gen_ai.provider.name": "openai"}),
        body=any_value({"content": "where is my order?"}),
    )
    unrelated = LogRecord(time_unix_nano=start, body=any_value("GET /health 200"))
    export = logs([message, unrelated])
    with collector.client(collector.shop_key) as client:
        assert (
            client.post("/v1/traces", content=request([chat]).SerializeToString(), headers=PROTOBUF).status_code == 200
        )
        for _ in range(2):  # re-delivered: stored once
            if encoding == "protobuf":
                response = client.post(
                    "/v1/logs",
                    content=gzip.compress(export.SerializeToString()),
                    headers={**PROTOBUF, "content-encoding": "gzip"},
                )
                answer = ExportLogsServiceResponse()
                answer.ParseFromString(response.content)
            else:
                response = client.post(
                    "/v1/logs", content=to_json(export), headers={"content-type": "application/json"}
                )
            assert response.status_code == 200
        tree = client.get(f"/api/traces/{trace_id.hex()}").json()
        [root] = tree["roots"]
        [event_span] = root["children"]
        assert event_span["span"]["name"] == "gen_ai.user.message"
        [event] = event_span["span"]["events"]
        assert event["attributes"]["body"] == {"content": "where is my order?"}
        assert event["attributes"]["gen_ai.provider.name"] == "openai"
        assert tree["span_count"] == 2
