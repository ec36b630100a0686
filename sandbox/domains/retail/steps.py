"""Steps the retail reference plans share: fetch an order or the account, find a sibling row, pick a variant,
make a write (with the invalid argument its `error_not_retried` flaw sends).

The reference plans (how the offline ReferenceAgent, a simulation, handles each task type by the policy) live
beside their task family (`returns`, `orders`, `account`, `inquiries`). A plan reads only what the customer said
(`run.facts`) and what the tools return, never the scenario's intent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from passhat.sandbox.agents import ReferenceRun, ToolResult, lookup, perform_write
from passhat.sandbox.domain import DomainError
from passhat.sandbox.domains.retail import models as m
from passhat.sandbox.domains.retail.systems import days_since

Order = dict[str, Any]


def rejected(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The same retail write with one argument the backend rejects as invalid (not a missing row: that is a
    lookup): an item listed twice, a cancellation reason outside the policy's two, an empty zip or payment
    method. What the `error_not_retried` flaw sends, twice."""
    broken = dict(arguments)
    if isinstance(broken.get("item_ids"), list) and broken["item_ids"]:
        broken["item_ids"] = [broken["item_ids"][0], broken["item_ids"][0]]
    elif "reason" in broken:
        broken["reason"] = "changed my mind"
    elif "zip" in broken:
        broken["zip"] = ""
    elif "payment_method_id" in broken:
        broken["payment_method_id"] = ""
    else:
        raise DomainError(f"no retail argument to make invalid among {sorted(broken)}")
    return broken


async def write(
    run: ReferenceRun,
    tool: str,
    arguments: Mapping[str, Any],
    *,
    summary: str,
    sibling: Mapping[str, Any] | None = None,
) -> ToolResult:
    """`perform_write` with the retail argument its `error_not_retried` flaw breaks (`rejected`)."""
    return await perform_write(run, tool, arguments, summary=summary, sibling=sibling, broken=rejected(arguments))


def names_of(values: Any) -> list[str]:
    return [str(v) for v in values] if isinstance(values, list | tuple) else [str(values)]


def outside_chain(chain: frozenset[str], order: Order) -> bool:
    """A returnable order that is not part of the customer's request."""
    return returnable(order) and order["order_id"] not in chain


def returnable(order: Order) -> bool:
    delivered = [f["delivered_at"] for f in order.get("fulfilments", []) if f.get("delivered_at")]
    return order["status"] == "delivered" and bool(delivered) and days_since(delivered[0]) <= m.RETURN_WINDOW_DAYS


async def fetch_order(run: ReferenceRun, customer_id: str | None, order_id: str, *, told: bool = True) -> Order:
    """The order, checked to be the caller's. `told`: the customer gave this order number, so the lookup is one
    chance of the `empty_lookup` flaw (a mistyped number); an order found in the account (`told=False`) is not."""
    missing = f"I'm sorry, I could not find order {order_id}. Please check the order number."
    if told:
        found = await lookup(run, "get_order", {"order_id": order_id}, typed="order_id", missing=missing)
    else:
        found = await run.call("get_order", {"order_id": order_id})
        if not found.ok:
            await run.finish(missing)
    order: Order = found.data
    if customer_id is not None and order["customer_id"] != customer_id:
        await run.finish(f"I'm sorry, order {order_id} is not on your account, so I cannot share or change it.")
    return order


async def fetch_customer(run: ReferenceRun, customer_id: str | None) -> dict[str, Any]:
    if customer_id is None:
        return {"payment_methods": [], "orders": [], "addresses": []}
    found = await run.call("get_customer", {"customer_id": customer_id})
    if not found.ok:
        await run.finish("I'm sorry, I could not open your account.")
    data: dict[str, Any] = found.data
    return data


async def sibling_order(
    run: ReferenceRun, customer_id: str | None, order_id: str, status: str, test: Callable[[Order], bool]
) -> Order | None:
    """Another order of the same customer in the same state: what a wrong-entity agent acts on."""
    if customer_id is None or not run.has_flaw("wrong_entity"):
        return None
    profile = await fetch_customer(run, customer_id)
    for entry in profile["orders"]:
        if entry["order_id"] != order_id and entry["status"] == status:
            other = await fetch_order(run, customer_id, entry["order_id"], told=False)
            if test(other):
                return other
    return None


def items_named(order: Order, names: list[str]) -> list[dict[str, Any]]:
    return [item for item in order["items"] if item["name"] in names]


def gift_card_id(profile: Mapping[str, Any]) -> str | None:
    cards = [p["payment_method_id"] for p in profile["payment_methods"] if p["kind"] == "gift_card"]
    return cards[0] if cards else None


def method_of_kind(profile: Mapping[str, Any], kind: str) -> dict[str, Any] | None:
    for method in profile["payment_methods"]:
        if method["kind"] == kind:
            return dict(method)
    return None


async def variant_for(run: ReferenceRun, item: Mapping[str, Any], options: Mapping[str, Any]) -> str:
    product = await run.call("get_product", {"product_id": item["product_id"]})
    for variant in product.data["variants"] if product.ok else []:
        if variant["options"] == dict(options):
            if not variant["available"]:
                await run.finish("I'm sorry, that option is not available right now, so I cannot make the swap.")
            return str(variant["variant_id"])
    await run.finish("I'm sorry, I could not find that option for this product.")
    raise AssertionError("unreachable")


async def other_variant(run: ReferenceRun, item: Mapping[str, Any]) -> str | None:
    product = await run.call("get_product", {"product_id": item["product_id"]})
    for variant in product.data["variants"] if product.ok else []:
        if variant["available"] and variant["variant_id"] != item["variant_id"]:
            return str(variant["variant_id"])
    return None


async def variant_swap(
    run: ReferenceRun,
    customer_id: str | None,
    order: Order,
    facts: Mapping[str, Any],
    sibling_status: str,
    sibling_test: Callable[[Order], bool],
) -> tuple[dict[str, Any], dict[str, Any] | None, str]:
    """An item of `order` for the variant the customer chose (an exchange, or a pending order's item change):
    the write's arguments, the same swap on a sibling order (what a wrong-entity agent sends), the new variant."""
    item = items_named(order, names_of(facts["items"]))[0]
    new_variant = await variant_for(run, item, facts["new_options"][item["name"]])
    arguments = {
        "order_id": order["order_id"],
        "item_ids": [item["item_id"]],
        "new_variant_ids": [new_variant],
        "payment_method_id": order["payment_method_id"],
    }
    sibling = await sibling_order(run, customer_id, order["order_id"], sibling_status, sibling_test)
    wrong = None
    if sibling is not None:
        other = await other_variant(run, sibling["items"][0])
        if other is not None:
            wrong = {
                "order_id": sibling["order_id"],
                "item_ids": [sibling["items"][0]["item_id"]],
                "new_variant_ids": [other],
                "payment_method_id": sibling["payment_method_id"],
            }
    return arguments, wrong, new_variant
