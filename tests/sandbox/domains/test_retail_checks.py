"""Retail's checks grade what the backend holds: regressions found against an independent grader."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp import Client

from passhat.checks import CheckContext, Verdict
from passhat.sandbox import FlawConfig, ReferenceAgent, Sandbox, Scenario, TrialDatabase, run_trial
from passhat.sandbox.domains.retail import orders, returns
from passhat.sandbox.domains.retail.data import alternatives, data_for


@asynccontextmanager
async def open_trial(retail: Sandbox) -> AsyncIterator[tuple[Client, TrialDatabase]]:
    database = retail.memory_copy()
    try:
        async with Client(retail.domain.build_server(database.engine)) as client:
            yield client, database
    finally:
        database.close()


async def call(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    text = "".join(getattr(block, "text", "") for block in result.content)
    assert not result.is_error, text
    payload: dict[str, Any] = json.loads(text)
    return payload


def grade(retail: Sandbox, database: TrialDatabase, check: Any) -> Verdict:
    diff = database.diff(retail.initial, retail.domain.metadata, retail.rowids)
    verdict: Verdict = check(CheckContext(diff=diff))
    return verdict


def collateral(verdict: Verdict) -> list[tuple[str, str | None]]:
    return [(d.table or "", d.field) for d in verdict.failures() if d.check == "no_other_writes"]


NEW_ADDRESS = {
    "address1": "12 Granite Avenue",
    "address2": "",
    "city": "Tucson",
    "state": "AZ",
    "country": "USA",
    "zip": "85711",
}
SHIP_COLUMNS = ["ship_address1", "ship_address2", "ship_city", "ship_zip"]


async def test_a_cancel_with_an_unrequested_address_change_on_the_same_order_fails(retail: Sandbox) -> None:
    intent = retail.scenarios("cancel_pending_order", 1)[0].intent
    async with open_trial(retail) as (client, database):
        await call(client, "find_customer_by_email", email=intent["email"])
        await call(client, "modify_pending_order_address", order_id=intent["order_id"], **NEW_ADDRESS)
        await call(client, "cancel_pending_order", order_id=intent["order_id"], reason=intent["reason"])
        verdict = grade(retail, database, orders.cancel_check(intent))
    assert not verdict.passed
    changed = {field for table, field in collateral(verdict) if table == "orders"}
    assert changed and changed <= {f"ship_{name}" for name in NEW_ADDRESS}
    assert all(d.key == {"order_id": intent["order_id"]} for d in verdict.failures() if d.check == "no_other_writes")


async def test_an_item_change_with_an_unrequested_address_change_fails(retail: Sandbox) -> None:
    intent = retail.scenarios("change_pending_items", 1)[0].intent
    async with open_trial(retail) as (client, database):
        await call(client, "find_customer_by_email", email=intent["email"])
        await call(client, "modify_pending_order_address", order_id=intent["order_id"], **NEW_ADDRESS)
        await call(
            client,
            "modify_pending_order_items",
            order_id=intent["order_id"],
            item_ids=[intent["item_id"]],
            new_variant_ids=[intent["new_variant_id"]],
            payment_method_id=intent["payment_method_id"],
        )
        verdict = grade(retail, database, orders.items_check(intent))
    assert not verdict.passed
    assert {table for table, _ in collateral(verdict)} == {"orders"}
    assert "collateral write: orders order_id=" in verdict.explanation


async def test_the_same_item_change_alone_passes(retail: Sandbox) -> None:
    intent = retail.scenarios("change_pending_items", 1)[0].intent
    async with open_trial(retail) as (client, database):
        await call(client, "find_customer_by_email", email=intent["email"])
        await call(
            client,
            "modify_pending_order_items",
            order_id=intent["order_id"],
            item_ids=[intent["item_id"]],
            new_variant_ids=[intent["new_variant_id"]],
            payment_method_id=intent["payment_method_id"],
        )
        verdict = grade(retail, database, orders.items_check(intent))
    assert verdict.passed, verdict.explanation


async def test_a_cancellation_for_a_reason_the_customer_did_not_give_fails(retail: Sandbox) -> None:
    intent = retail.scenarios("cancel_pending_order", 1)[0].intent
    other = next(reason for reason in ("no longer needed", "ordered by mistake") if reason != intent["reason"])
    async with open_trial(retail) as (client, database):
        await call(client, "find_customer_by_email", email=intent["email"])
        stored = await call(client, "cancel_pending_order", order_id=intent["order_id"], reason=other)
        assert stored["status"] == "cancelled"
        verdict = grade(retail, database, orders.cancel_check(intent))
    assert not verdict.passed
    [wrong] = [d for d in verdict.failures() if d.check == "updated"]
    assert (wrong.table, wrong.field, wrong.expected, wrong.actual) == (
        "orders",
        "cancel_reason",
        intent["reason"],
        other,
    )


async def test_a_payment_switch_to_a_gift_card_that_covers_the_order_passes(retail: Sandbox) -> None:
    # The gift card's balance debit is the switch's own bookkeeping, not an unexpected write.
    with retail.template.connect() as connection:
        intent = orders.payment_candidates(connection, to_gift_card=True)[0]
    task = retail.domain.task_type("change_pending_payment")
    scenario = Scenario("retail", task.name, "retail/pay_with_gift_card/0", intent, orders.payment_script(intent))
    result = await run_trial(retail, scenario, 0, ReferenceAgent.factory(FlawConfig.off()))
    assert result.passed, result.record.verdict.explanation
    card = result.record.diff.find("payment_methods", {"payment_method_id": intent["payment_method_id"]})
    assert card is not None and card.before is not None and card.after is not None
    assert round(card.before["balance"] - card.after["balance"], 2) == intent["amount"]


async def test_a_two_item_exchange_listed_unsorted_passes(retail: Sandbox) -> None:
    with retail.template.connect() as connection:
        data = data_for(connection)
    order_id, items = next(
        (order_id, options)
        for order_id in sorted(data.orders)
        if data.returnable(order_id)
        and data.method(data.orders[order_id]["payment_method_id"])["kind"] != "gift_card"
        and len(options := [i for i in data.items[order_id] if alternatives(data, i)]) >= 2
    )
    chosen = sorted(items, key=lambda i: i["item_id"], reverse=True)[:2]  # the customer lists them backwards
    variants = [alternatives(data, item)[0] for item in chosen]
    order = data.orders[order_id]
    intent = {
        "order_id": order_id,
        "item_ids": [item["item_id"] for item in chosen],
        "new_variant_ids": [variant["variant_id"] for variant in variants],
        "payment_method_id": order["payment_method_id"],
        "price_difference": round(sum(v["price"] for v in variants) - sum(i["price"] for i in chosen), 2),
    }
    customer = data.customers[order["customer_id"]]
    async with open_trial(retail) as (client, database):
        await call(client, "find_customer_by_email", email=customer["email"])
        await call(
            client,
            "exchange_delivered_items",
            order_id=order_id,
            item_ids=intent["item_ids"],
            new_variant_ids=intent["new_variant_ids"],
            payment_method_id=intent["payment_method_id"],
        )
        verdict = grade(retail, database, returns.exchange_check(intent))
    assert verdict.passed, verdict.explanation
    swapped = {**intent, "new_variant_ids": list(reversed(intent["new_variant_ids"]))}
    async with open_trial(retail) as (client, database):
        await call(client, "find_customer_by_email", email=customer["email"])
        await call(
            client,
            "exchange_delivered_items",
            order_id=order_id,
            item_ids=intent["item_ids"],
            new_variant_ids=intent["new_variant_ids"],
            payment_method_id=intent["payment_method_id"],
        )
        # Which item gets which variant still matters.
        assert not grade(retail, database, returns.exchange_check(swapped)).passed
