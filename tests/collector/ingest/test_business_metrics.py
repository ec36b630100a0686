"""`/metrics` business gauges: today's tickets per project and task type, and the latest finished run's pass@1 and
pass^k per task type (k as a label), read from a real store through a real collector."""

from __future__ import annotations

import datetime as dt

from passhat.collector.store import ReplayRun, TrialRow
from tests.collector.ingest.otlp_payloads import passhat_ticket, request
from tests.collector.server import Collector


def gauge(text: str, name: str, **labels: str) -> float:
    """The value of one sample of the Prometheus text, whatever order its labels are written in."""
    for line in text.splitlines():
        if not line.startswith(f"{name}{{"):
            continue
        written, value = line[len(name) + 1 :].rsplit("} ", 1)
        pairs = dict(pair.split("=", 1) for pair in written.split(","))
        if {key: raw.strip('"') for key, raw in pairs.items()} == labels:
            return float(value)
    raise AssertionError(f"no {name} sample with labels {labels} in /metrics")


def test_metrics_expose_tickets_today_and_the_latest_runs_pass_rates(collector: Collector) -> None:
    store = collector.store
    now = dt.datetime.now(dt.UTC)
    # ticket A passes both trials, ticket B one of two: pass@1 = 0.75, pass^2 = 0.5
    store.create_replay_run("shop", ReplayRun(run_id="run-1", created_at=now, k=2))
    store.add_trials(
        "shop",
        [
            TrialRow("run-1", ticket, "refund", attempt, passed, "done", now, 1.0)
            for ticket, attempt, passed in [("A", 0, True), ("A", 1, True), ("B", 0, True), ("B", 1, False)]
        ],
    )
    store.finish_replay_run("shop", "run-1", summary={})
    with collector.client(collector.shop_key) as client:
        for ticket in ("T-1", "T-2"):
            body = request(passhat_ticket(ticket, task_type="refund", tools=1)).SerializeToString()
            assert client.post(
                "/v1/traces", content=body, headers={"content-type": "application/x-protobuf"}
            ).is_success
    with collector.client(None) as client:
        text = client.get("/metrics").text
    assert gauge(text, "passhat_tickets_today", project="shop", task_type="refund", source="production") == 2
    assert gauge(text, "passhat_pass_at_1", project="shop", task_type="refund") == 0.75
    assert gauge(text, "passhat_pass_hat_k", project="shop", task_type="refund", k="2") == 0.5
