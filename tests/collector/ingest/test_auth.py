"""Authentication: one key names one project on every route, and one cache remembers it for all of them."""

from __future__ import annotations

import datetime as dt
import time

import httpx

from passhat.collector import CollectorSettings
from passhat.collector.ingest._keys import hash_api_key, key_prefix
from passhat.collector.ingest._state import KeyCache
from passhat.collector.store import ApiKey, Store
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


def test_a_flood_of_unknown_keys_does_not_push_valid_keys_out_of_the_cache(sql_store: Store) -> None:
    key = new_key(sql_store, "shop")
    cache = KeyCache(sql_store, ttl=600.0)
    assert cache.project_for(key) == "shop"
    assert sql_store.revoke_api_key(key_prefix(key))  # from now on only the cache can still answer "shop"
    for index in range(10_100):
        assert cache.project_for(f"phk_{index:08x}_forged") is None
    assert cache.project_for(key) == "shop"


def test_a_refused_key_is_remembered_for_a_second_at_most(sql_store: Store) -> None:
    key = "phk_0badcafe_created-after-its-first-use"
    cache = KeyCache(sql_store, ttl=600.0)
    assert cache.project_for(key) is None
    sql_store.ensure_project("shop")
    created = dt.datetime.now(dt.UTC).replace(microsecond=0)
    sql_store.add_api_key(ApiKey(key_prefix(key), "shop", hash_api_key(key), created))
    assert cache.project_for(key) is None  # still the cached refusal
    time.sleep(KeyCache.UNKNOWN_TTL + 0.05)
    assert cache.project_for(key) == "shop"


def test_an_address_refused_too_often_is_answered_429_until_the_minute_is_over(sql_store: Store) -> None:
    key = new_key(sql_store, "shop")
    settings = CollectorSettings(key_cache_s=600.0, auth_failures_per_minute=5)
    forged_key = {"authorization": "Bearer phk_00000000_x"}
    with (
        running_collector(sql_store, settings) as running,
        httpx.Client(base_url=running.url, headers={"authorization": f"Bearer {key}"}) as valid,
        httpx.Client(base_url=running.url, headers=forged_key) as forged,
    ):
        assert valid.get("/api/tickets").status_code == 200  # now in the cache
        assert [forged.get("/api/tickets").status_code for _ in range(5)] == [401] * 5
        refused = forged.get("/api/tickets")
        assert refused.status_code == 429 and 0 < int(refused.headers["retry-after"]) <= 60
        exported = forged.post("/v1/traces", content=b"x", headers=PROTOBUF)
        assert exported.status_code == 429 and "retry-after" in exported.headers
        # the same address with a key the cache knows is still served
        assert valid.get("/api/tickets").status_code == 200
