"""schemathesis over the served OpenAPI: generated requests (authenticated, real HTTP) never get a 5xx."""

from __future__ import annotations

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from passhat.collector import create_app
from tests.collector.ingest.otlp_payloads import passhat_ticket, request
from tests.collector.server import Collector


@schemathesis.serializer("application/x-protobuf")
def _protobuf_bytes(_ctx: object, value: object) -> bytes:
    """Generated 'binary' bodies go out as they are: arbitrary bytes the protobuf decoder must survive."""
    return value if isinstance(value, bytes) else str(value).encode()


# The schema the app serves (building the app opens nothing; the test below checks it is what is served).
schema = schemathesis.openapi.from_dict(create_app().openapi())


def test_the_fuzzed_schema_is_the_served_one(collector: Collector) -> None:
    assert httpx.get(f"{collector.url}/openapi.json").json() == create_app().openapi()


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_generated_request_gets_a_server_error(case: schemathesis.Case, collector: Collector) -> None:
    with collector.client(collector.shop_key) as client:
        if not client.get("/api/tickets").json()["tickets"]:  # some rows for the query endpoints
            body = request(passhat_ticket("T-1") + passhat_ticket("T-2", task_type="exchange"))
            client.post(
                "/v1/traces",
                content=body.SerializeToString(),
                headers={"content-type": "application/x-protobuf"},
            )
    case.call_and_validate(
        base_url=collector.url,
        headers={"Authorization": f"Bearer {collector.shop_key}"},
        checks=[not_a_server_error],
    )
