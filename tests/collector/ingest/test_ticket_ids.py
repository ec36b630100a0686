"""A ticket id of any characters can be fetched by its owner: by query string, or percent-encoded in the path."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.collector.ingest.otlp_payloads import passhat_ticket, request
from tests.collector.server import Collector

PROTOBUF = {"content-type": "application/x-protobuf"}
IDS = ["a/b", "../x", "..", "what?#&=%", "тикет/1", " spaced ", "a//b/"]


@pytest.fixture
def stored(collector: Collector) -> Collector:
    spans = [s for ticket_id in IDS for s in passhat_ticket(ticket_id, tools=0)]
    with collector.client(collector.shop_key) as client:
        assert (
            client.post("/v1/traces", content=request(spans).SerializeToString(), headers=PROTOBUF).status_code == 200
        )
    return collector


@pytest.mark.parametrize("ticket_id", IDS)
def test_any_ticket_id_is_reachable_by_query_string(stored: Collector, ticket_id: str) -> None:
    with stored.client(stored.shop_key) as client:
        response = client.get("/api/ticket", params={"id": ticket_id})
    assert response.status_code == 200
    assert response.json()["ticket_id"] == ticket_id


@pytest.mark.parametrize("ticket_id", IDS)
def test_any_ticket_id_is_reachable_percent_encoded_in_the_path(stored: Collector, ticket_id: str) -> None:
    with stored.client(stored.shop_key) as client:
        response = client.get("/api/tickets/" + quote(ticket_id, safe="").replace(".", "%2E"))
    assert response.status_code == 200
    assert response.json()["ticket_id"] == ticket_id


def test_another_project_still_cannot_see_them(stored: Collector) -> None:
    with stored.client(stored.bank_key) as client:
        assert client.get("/api/ticket", params={"id": "a/b"}).status_code == 404
        assert client.get("/api/tickets/a%2Fb").status_code == 404
