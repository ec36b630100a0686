"""Every API call is scoped to its key's project: one project's key can neither read nor write another's."""

from __future__ import annotations

from tests.collector.ingest.otlp_payloads import passhat_ticket, request
from tests.collector.server import Collector

PROTOBUF = {"content-type": "application/x-protobuf"}


def test_a_project_key_reads_and_writes_only_its_project(collector: Collector) -> None:
    shop_spans = passhat_ticket("T-shared", task_type="refund")
    body = request(shop_spans).SerializeToString()
    with collector.client(collector.shop_key) as shop, collector.client(collector.bank_key) as bank:
        assert shop.post("/v1/traces", content=body, headers=PROTOBUF).status_code == 200
        # bank sees nothing of shop's ticket, through every read endpoint
        assert bank.get("/api/tickets").json() == {"tickets": []}
        assert bank.get("/api/tickets", params={"task_type": "refund"}).json() == {"tickets": []}
        assert bank.get("/api/tickets/T-shared").status_code == 404
        assert bank.get("/api/traffic", params={"days": 30}).json()["traffic"] == []
        # bank sending the very same spans writes into bank only (no de-duplication across projects)
        assert bank.post("/v1/traces", content=body, headers=PROTOBUF).status_code == 200
        assert collector.store.count_spans("bank") == 9
        assert collector.store.count_spans("shop") == 9
        bank_only = request(passhat_ticket("T-bank", task_type="dispute")).SerializeToString()
        assert bank.post("/v1/traces", content=bank_only, headers=PROTOBUF).status_code == 200
        assert {t["ticket_id"] for t in shop.get("/api/tickets").json()["tickets"]} == {"T-shared"}
        assert shop.get("/api/tickets/T-bank").status_code == 404
        assert [t["task_type"] for t in shop.get("/api/traffic").json()["traffic"]] == ["refund"]
        assert {t["task_type"] for t in bank.get("/api/traffic").json()["traffic"]} == {"refund", "dispute"}


def test_every_api_route_requires_a_key(collector: Collector) -> None:
    with collector.client(None) as anonymous, collector.client("phk_deadbeef_forged") as forged:
        for client in (anonymous, forged):
            for path in ("/api/tickets", "/api/tickets/T-1", "/api/traffic"):
                response = client.get(path)
                assert response.status_code == 401, path
                assert response.headers["www-authenticate"] == "Bearer"
            assert client.post("/v1/traces", content=b"", headers=PROTOBUF).status_code == 401
