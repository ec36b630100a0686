"""The collector's Prometheus metrics, in a registry of its own (one per app)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram


class CollectorMetrics:
    """Spans accepted / rejected / de-duplicated, request latency, write-queue depth, store write latency."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.spans_accepted = Counter("passhat_spans_accepted", "Spans committed to the store.", registry=self.registry)
        self.spans_rejected = Counter(
            "passhat_spans_rejected",
            "Spans refused (invalid, or in a refused request).",
            registry=self.registry,
        )
        self.spans_duplicate = Counter(
            "passhat_spans_deduplicated", "Spans already stored, acknowledged again.", registry=self.registry
        )
        self.requests = Counter(
            "passhat_requests",
            "HTTP requests by route and status.",
            ["route", "status"],
            registry=self.registry,
        )
        self.request_seconds = Histogram(
            "passhat_request_seconds", "HTTP request latency.", ["route"], registry=self.registry
        )
        self.queue_bytes = Gauge(
            "passhat_ingest_queue_bytes", "Request bytes waiting to be decoded and written.", registry=self.registry
        )
        self.queue_spans = Gauge(
            "passhat_write_queue_spans", "Decoded spans waiting for their group commit.", registry=self.registry
        )
        self.store_write_seconds = Histogram(
            "passhat_store_write_seconds", "Latency of one group commit.", registry=self.registry
        )
        self.commit_spans = Histogram(
            "passhat_commit_spans",
            "Spans per group commit.",
            buckets=(1, 10, 100, 500, 1000, 2000, 5000, 10000, 20000, 50000),
            registry=self.registry,
        )
