"""Authentication: one key names one project on every route, and one cache remembers it for all of them."""

from __future__ import annotations

import httpx

from passhat.collector import CollectorSettings
from passhat.collector.ingest._keys import key_prefix
from passhat.collector.store import Store
from tests.collector.ingest.otlp_payloads import passhat_ticket, request
from tests.collector.server import Collector, new_key, running_collector

PROTOBUF = {"content-type": "application/x-protobuf"}


def test_a_key_in_x_api_key_works_like_a_bearer_key(collector: Collector) -> None:
    headers = {"x-api-key": collector.shop_key}
    with httpx.Client(base_url=collector.url, headers=headers, timeout=30.0) as client:
        body = request(passhat_ticket("T-x")).SerializeToString()
        assert client.post("/v1/traces", content=body, headers=PROTOBUF).status_code == 200
        assert [t["ticket_id"] for t in client.get("/api/tickets").json()["tickets"]] == ["T-x"]


def test_a_refused_export_is_counted_in_the_request_metrics(collector: Collector) -> None:
    with collector.client("phk_deadbeef_forged") as client:
        assert client.post("/v1/traces", content=b"x", headers=PROTOBUF).status_code == 401
        metrics = client.get("/metrics").text
    assert 'passhat_requests_total{route="/v1/traces",status="401"} 1.0' in metrics


def test_a_key_revoked_after_use_is_honoured_by_every_route_until_the_cache_expires(sql_store: Store) -> None:
    key = new_key(sql_store, "shop")
    headers = {"authorization": f"Bearer {key}"}
    with (
        running_collector(sql_store, CollectorSettings(key_cache_s=600.0)) as running,
        httpx.Client(base_url=running.url, headers=headers, timeout=30.0) as client,
    ):
        body = request(passhat_ticket("T-1")).SerializeToString()
        assert client.post("/v1/traces", content=body, headers=PROTOBUF).status_code == 200
        assert sql_store.revoke_api_key(key_prefix(key))
        # The export looked the key up; the query finds it in the same cache instead of the keys table.
        assert client.get("/api/tickets").status_code == 200
