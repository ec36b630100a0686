"""The retail MCP tools, through a real in-memory MCP client: preconditions, typed errors, and the writes."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp import Client
from sqlalchemy import select

from passhat.sandbox import Sandbox, TrialDatabase
from passhat.sandbox.domains.retail import models as m
from passhat.sandbox.domains.retail.data import data_for


@asynccontextmanager
async def open_trial(retail: Sandbox) -> AsyncIterator[tuple[Client, TrialDatabase]]:
    """A fresh database copy and tool server, connected (a context manager: anyio scopes stay in one task)."""
    database = retail.memory_copy()
    try:
        async with Client(retail.domain.build_server(database.engine)) as client:
            yield client, database
    finally:
        database.close()


async def call(client: Client, name: str, **arguments: Any) -> tuple[bool, Any]:
    result = await client.call_tool(name, arguments)
    text = "".join(getattr(block, "text", "") for block in result.content)
    return (not result.is_error), json.loads(text)


def pick(retail: Sandbox, status: str) -> dict[str, Any]:
    with retail.template.connect() as connection:
        data = data_for(connection)
    order = next(o for o in sorted(data.orders.values(), key=lambda o: o["order_id"]) if o["status"] == status)
    return {"order": order, "customer": data.customers[order["customer_id"]], "data": data}


async def test_writes_need_the_customer_identified_first(retail: Sandbox) -> None:
    async with open_trial(retail) as (client, database):
        picked = pick(retail, "pending")
        order_id = picked["order"]["order_id"]
        success, payload = await call(client, "cancel_pending_order", order_id=order_id, reason="no longer needed")
        assert not success and payload["error"] == "precondition_failed"
        success, payload = await call(client, "find_customer_by_email", email=picked["customer"]["email"])
        assert success and payload == {"customer_id": picked["customer"]["customer_id"]}
        success, payload = await call(client, "cancel_pending_order", order_id=order_id, reason="no longer needed")
        assert success and payload["status"] == "cancelled"
        with database.engine.connect() as connection:
            status = connection.execute(select(m.orders.c.status).where(m.orders.c.order_id == order_id)).scalar()
        assert status == "cancelled"


async def test_identification_by_name_and_zip(retail: Sandbox) -> None:
    async with open_trial(retail) as (client, _):
        picked = pick(retail, "pending")
        customer = picked["customer"]
        zip_code = picked["data"].addresses[customer["customer_id"]][0]["zip"]
        success, payload = await call(
            client,
            "find_customer_by_name_zip",
            first_name=customer["first_name"],
            last_name=customer["last_name"],
            zip="00000",
        )
        assert not success and payload["error"] == "not_found"
        success, payload = await call(
            client,
            "find_customer_by_name_zip",
            first_name=customer["first_name"],
            last_name=customer["last_name"],
            zip=zip_code,
        )
        assert success or payload["error"] == "invalid_argument"  # two customers may share name and zip


async def test_shipped_orders_cannot_be_cancelled(retail: Sandbox) -> None:
    async with open_trial(retail) as (client, _):
        picked = pick(retail, "shipped")
        await call(client, "find_customer_by_email", email=picked["customer"]["email"])
        success, payload = await call(
            client, "cancel_pending_order", order_id=picked["order"]["order_id"], reason="no longer needed"
        )
        assert not success and payload["error"] == "not_allowed"


async def test_a_gift_card_must_cover_the_order(retail: Sandbox) -> None:
    async with open_trial(retail) as (client, _):
        scenario = retail.scenarios("gift_card_insufficient", 1)[0]
        intent = scenario.intent
        await call(client, "find_customer_by_email", email=intent["email"])
        success, profile = await call(client, "get_customer", customer_id=intent["customer_id"])
        card = next(p for p in profile["payment_methods"] if p["kind"] == "gift_card")
        success, payload = await call(
            client,
            "modify_pending_order_payment",
            order_id=intent["order_id"],
            payment_method_id=card["payment_method_id"],
        )
        assert not success and payload["error"] == "insufficient_funds"


async def test_returns_close_thirty_days_after_delivery(retail: Sandbox) -> None:
    async with open_trial(retail) as (client, _):
        intent = retail.scenarios("return_after_window", 1)[0].intent
        await call(client, "find_customer_by_email", email=intent["email"])
        _, order = await call(client, "get_order", order_id=intent["order_id"])
        success, payload = await call(
            client,
            "return_delivered_items",
            order_id=intent["order_id"],
            item_ids=[order["items"][0]["item_id"]],
            payment_method_id=order["payment_method_id"],
        )
        assert not success and payload["error"] == "not_allowed" and "30 days" in payload["message"]


async def test_unknown_order_and_bad_arguments_are_errors_not_exceptions(retail: Sandbox) -> None:
    async with open_trial(retail) as (client, _):
        success, payload = await call(client, "get_order", order_id="#W0000000")
        assert not success and payload["error"] == "not_found"
        result = await client.call_tool("get_order", {"order_id": 42})
        assert result.is_error


async def test_the_calculator_evaluates_arithmetic_only(retail: Sandbox) -> None:
    async with open_trial(retail) as (client, _):
        assert await call(client, "calculate", expression="(19.99 + 5) * 2") == (True, {"result": 49.98})
        success, payload = await call(client, "calculate", expression="__import__('os')")
        assert not success and payload["error"] == "invalid_argument"


async def test_the_calculator_never_answers_a_number_json_cannot_hold(retail: Sandbox) -> None:
    async with open_trial(retail) as (client, _):
        result = await client.call_tool("calculate", {"expression": "1e308*1e308"})
        assert result.is_error
        text = result.content[0].text  # type: ignore[union-attr]
        assert "Infinity" not in text and json.loads(text)["error"] == "invalid_argument"


async def test_each_server_has_its_own_session_state(retail: Sandbox) -> None:
    picked = pick(retail, "pending")
    database = retail.memory_copy()
    try:
        async with Client(retail.domain.build_server(database.engine)) as first:
            await call(first, "find_customer_by_email", email=picked["customer"]["email"])
        async with Client(retail.domain.build_server(database.engine)) as second:
            success, payload = await call(second, "get_customer", customer_id=picked["customer"]["customer_id"])
        assert not success and payload["error"] == "precondition_failed"
    finally:
        database.close()
