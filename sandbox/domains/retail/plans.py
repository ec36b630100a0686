"""Reference plans: how the offline ReferenceAgent (a simulation) handles each retail task type by the policy.

A plan reads only what the customer said (`run.facts`) and what the tools return, never the scenario's intent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from passhat.sandbox.agents import ReferenceRun, identify_customer, perform_write
from passhat.sandbox.domains.retail import models as m
from passhat.sandbox.domains.retail.systems import days_since

Order = dict[str, Any]


def _names(values: Any) -> list[str]:
    return [str(v) for v in values] if isinstance(values, list | tuple) else [str(values)]


def _outside(chain: frozenset[str], order: Order) -> bool:
    """A returnable order that is not part of the customer's request."""
    return _returnable(order) and order["order_id"] not in chain


def _returnable(order: Order) -> bool:
    delivered = [f["delivered_at"] for f in order.get("fulfilments", []) if f.get("delivered_at")]
    return order["status"] == "delivered" and bool(delivered) and days_since(delivered[0]) <= m.RETURN_WINDOW_DAYS


async def _order(run: ReferenceRun, customer_id: str | None, order_id: str) -> Order:
    found = await run.call("get_order", {"order_id": order_id})
    if not found.ok:
        await run.finish(f"I'm sorry, I could not find order {order_id}. Please check the order number.")
    order: Order = found.data
    if customer_id is not None and order["customer_id"] != customer_id:
        await run.finish(f"I'm sorry, order {order_id} is not on your account, so I cannot share or change it.")
    return order


async def _customer(run: ReferenceRun, customer_id: str | None) -> dict[str, Any]:
    if customer_id is None:
        return {"payment_methods": [], "orders": [], "addresses": []}
    found = await run.call("get_customer", {"customer_id": customer_id})
    if not found.ok:
        await run.finish("I'm sorry, I could not open your account.")
    data: dict[str, Any] = found.data
    return data


async def _sibling(
    run: ReferenceRun, customer_id: str | None, order_id: str, status: str, test: Callable[[Order], bool]
) -> Order | None:
    """Another order of the same customer in the same state: what a wrong-entity agent acts on."""
    if customer_id is None or not run.has_flaw("wrong_entity"):
        return None
    profile = await _customer(run, customer_id)
    for entry in profile["orders"]:
        if entry["order_id"] != order_id and entry["status"] == status:
            other = await _order(run, customer_id, entry["order_id"])
            if test(other):
                return other
    return None


def _items(order: Order, names: list[str]) -> list[dict[str, Any]]:
    return [item for item in order["items"] if item["name"] in names]


def _gift_card(profile: Mapping[str, Any]) -> str | None:
    cards = [p["payment_method_id"] for p in profile["payment_methods"] if p["kind"] == "gift_card"]
    return cards[0] if cards else None


def _method_of_kind(profile: Mapping[str, Any], kind: str) -> dict[str, Any] | None:
    for method in profile["payment_methods"]:
        if method["kind"] == kind:
            return dict(method)
    return None


async def _variant_for(run: ReferenceRun, item: Mapping[str, Any], options: Mapping[str, Any]) -> str:
    product = await run.call("get_product", {"product_id": item["product_id"]})
    for variant in product.data["variants"] if product.ok else []:
        if variant["options"] == dict(options):
            if not variant["available"]:
                await run.finish("I'm sorry, that option is not available right now, so I cannot make the swap.")
            return str(variant["variant_id"])
    await run.finish("I'm sorry, I could not find that option for this product.")
    raise AssertionError("unreachable")


async def _other_variant(run: ReferenceRun, item: Mapping[str, Any]) -> str | None:
    product = await run.call("get_product", {"product_id": item["product_id"]})
    for variant in product.data["variants"] if product.ok else []:
        if variant["available"] and variant["variant_id"] != item["variant_id"]:
            return str(variant["variant_id"])
    return None


# -- returns and exchanges --------------------------------------------------------------------------------


async def return_items(run: ReferenceRun) -> None:
    """Return delivered items, refunding the original payment method or a gift card."""
    customer_id = await identify_customer(run)
    facts = await run.ask("Which order and items, and where should the refund go?", "order_id", "items", "refund_to")
    order = await _order(run, customer_id, str(facts["order_id"]))
    if not _returnable(order):
        await run.finish(
            f"I'm sorry, I cannot accept a return for order {order['order_id']}: returns are possible only "
            f"for delivered orders within 30 days of delivery."
        )
    items = _items(order, _names(facts["items"]))
    method = order["payment_method_id"]
    if "gift" in str(facts.get("refund_to", "")):
        method = _gift_card(await _customer(run, customer_id)) or method
    arguments = {
        "order_id": order["order_id"],
        "item_ids": [i["item_id"] for i in items],
        "payment_method_id": method,
    }
    sibling = await _sibling(run, customer_id, order["order_id"], "delivered", _returnable)
    wrong = None
    if sibling is not None:
        wrong = {
            "order_id": sibling["order_id"],
            "item_ids": [i["item_id"] for i in sibling["items"][: len(items)]],
            "payment_method_id": sibling["payment_method_id"] if method == order["payment_method_id"] else method,
        }
    total = round(sum(i["price"] for i in items), 2)
    names = ", ".join(i["name"] for i in items)
    summary = f"I will return {names} from order {order['order_id']}, refunding ${total} to {method}."
    await perform_write(run, "return_delivered_items", arguments, summary=summary, sibling=wrong)
    await run.finish(f"Done: the return is requested and ${total} will be refunded to {method}.")


async def exchange_items(run: ReferenceRun) -> None:
    """Exchange a delivered item for another available variant of the same product."""
    customer_id = await identify_customer(run)
    facts = await run.ask(
        "Which order and item, and which new option would you like?", "order_id", "items", "new_options"
    )
    order = await _order(run, customer_id, str(facts["order_id"]))
    if not _returnable(order):
        await run.finish("I'm sorry, I cannot exchange items from this order: it is not within 30 days of delivery.")
    item = _items(order, _names(facts["items"]))[0]
    new_variant = await _variant_for(run, item, facts["new_options"][item["name"]])
    arguments = {
        "order_id": order["order_id"],
        "item_ids": [item["item_id"]],
        "new_variant_ids": [new_variant],
        "payment_method_id": order["payment_method_id"],
    }
    sibling = await _sibling(run, customer_id, order["order_id"], "delivered", _returnable)
    wrong = None
    if sibling is not None:
        other = await _other_variant(run, sibling["items"][0])
        if other is not None:
            wrong = {
                "order_id": sibling["order_id"],
                "item_ids": [sibling["items"][0]["item_id"]],
                "new_variant_ids": [other],
                "payment_method_id": sibling["payment_method_id"],
            }
    summary = f"I will exchange {item['name']} in order {order['order_id']} for variant {new_variant}."
    result = await perform_write(run, "exchange_delivered_items", arguments, summary=summary, sibling=wrong)
    await run.finish(f"Done: the exchange is requested (price difference ${result.data['price_difference']}).")


async def multi_order_return(run: ReferenceRun) -> None:
    """A chain: return items from several delivered orders, one return per order."""
    customer_id = await identify_customer(run)
    facts = await run.ask("Which orders and which items from each?", "order_ids", "items_by_order")
    by_order: Mapping[str, Any] = facts["items_by_order"]
    chain = frozenset(_names(facts["order_ids"]))
    done: list[str] = []
    for order_id in _names(facts["order_ids"]):
        order = await _order(run, customer_id, order_id)
        if not _returnable(order):
            await run.finish(f"I'm sorry, order {order_id} can no longer be returned (30-day window).")
        items = _items(order, _names(by_order[order_id]))
        arguments = {
            "order_id": order_id,
            "item_ids": [i["item_id"] for i in items],
            "payment_method_id": order["payment_method_id"],
        }
        sibling = await _sibling(run, customer_id, order_id, "delivered", partial(_outside, chain))
        wrong = None
        if sibling is not None:
            wrong = {
                "order_id": sibling["order_id"],
                "item_ids": [sibling["items"][0]["item_id"]],
                "payment_method_id": sibling["payment_method_id"],
            }
        names = ", ".join(i["name"] for i in items)
        summary = f"I will return {names} from order {order_id} to the original payment method."
        await perform_write(run, "return_delivered_items", arguments, summary=summary, sibling=wrong)
        done.append(order_id)
    await run.finish(f"Done: returns are requested for orders {', '.join(done)}.")


# -- pending orders -----------------------------------------------------------------------------------------


def _pending(order: Order) -> bool:
    return bool(order["status"] == "pending")


async def _pending_order(run: ReferenceRun, customer_id: str | None, order_id: str) -> Order:
    order = await _order(run, customer_id, order_id)
    if order["status"] != "pending":
        await run.finish(
            f"I'm sorry, order {order_id} is {order['status']}, so it can no longer be changed or cancelled. "
            "Once it is delivered you can return items within 30 days."
        )
    return order


async def cancel_order(run: ReferenceRun) -> None:
    """Cancel a pending order (refund to the original payment method)."""
    customer_id = await identify_customer(run)
    facts = await run.ask("Which order, and the reason for cancelling?", "order_id", "reason")
    order = await _pending_order(run, customer_id, str(facts["order_id"]))
    arguments = {"order_id": order["order_id"], "reason": str(facts["reason"])}
    sibling = await _sibling(run, customer_id, order["order_id"], "pending", _pending)
    wrong = {"order_id": sibling["order_id"], "reason": arguments["reason"]} if sibling else None
    summary = f"I will cancel order {order['order_id']} (reason: {arguments['reason']}) and refund it."
    result = await perform_write(run, "cancel_pending_order", arguments, summary=summary, sibling=wrong)
    await run.finish(f"Order {order['order_id']} is cancelled; ${result.data['refunded']} will be refunded.")


async def change_order_address(run: ReferenceRun) -> None:
    """Change the shipping address of a pending order."""
    customer_id = await identify_customer(run)
    facts = await run.ask("Which order, and what is the new address?", "order_id", "address")
    order = await _pending_order(run, customer_id, str(facts["order_id"]))
    address = dict(facts["address"])
    arguments = {"order_id": order["order_id"], **address}
    sibling = await _sibling(run, customer_id, order["order_id"], "pending", _pending)
    wrong = {"order_id": sibling["order_id"], **address} if sibling else None
    summary = f"I will ship order {order['order_id']} to {address['address1']}, {address['city']} {address['zip']}."
    await perform_write(run, "modify_pending_order_address", arguments, summary=summary, sibling=wrong)
    await run.finish(f"Order {order['order_id']} will now ship to the new address.")


async def change_order_items(run: ReferenceRun) -> None:
    """Swap an item of a pending order for another variant of the same product."""
    customer_id = await identify_customer(run)
    facts = await run.ask("Which order and item, and which option instead?", "order_id", "items", "new_options")
    order = await _pending_order(run, customer_id, str(facts["order_id"]))
    if order["items_modified"]:
        await run.finish("I'm sorry, the items of this order were already changed once; they cannot change again.")
    item = _items(order, _names(facts["items"]))[0]
    new_variant = await _variant_for(run, item, facts["new_options"][item["name"]])
    arguments = {
        "order_id": order["order_id"],
        "item_ids": [item["item_id"]],
        "new_variant_ids": [new_variant],
        "payment_method_id": order["payment_method_id"],
    }
    sibling = await _sibling(run, customer_id, order["order_id"], "pending", _pending)
    wrong = None
    if sibling is not None:
        other = await _other_variant(run, sibling["items"][0])
        if other is not None:
            wrong = {
                "order_id": sibling["order_id"],
                "item_ids": [sibling["items"][0]["item_id"]],
                "new_variant_ids": [other],
                "payment_method_id": sibling["payment_method_id"],
            }
    summary = f"I will swap {item['name']} in order {order['order_id']} for variant {new_variant}."
    result = await perform_write(run, "modify_pending_order_items", arguments, summary=summary, sibling=wrong)
    await run.finish(f"Done; the price difference is ${result.data['price_difference']}.")


async def _change_payment(run: ReferenceRun, customer_id: str | None, order: Order, kind: str) -> None:
    profile = await _customer(run, customer_id)
    method = _method_of_kind(profile, kind)
    new_id = method["payment_method_id"] if method else f"{kind}_unknown"
    arguments = {"order_id": order["order_id"], "payment_method_id": new_id}
    sibling = await _sibling(
        run,
        customer_id,
        order["order_id"],
        "pending",
        lambda o: _pending(o) and o["payment_method_id"] != new_id,
    )
    wrong = {"order_id": sibling["order_id"], "payment_method_id": new_id} if sibling else None
    summary = f"I will pay order {order['order_id']} with {new_id} and refund the previous payment method."
    await perform_write(run, "modify_pending_order_payment", arguments, summary=summary, sibling=wrong)
    await run.finish(f"Order {order['order_id']} is now paid with {new_id}.")


async def change_order_payment(run: ReferenceRun) -> None:
    """Pay a pending order with another of the customer's payment methods."""
    customer_id = await identify_customer(run)
    facts = await run.ask("Which order, and which payment method should it use?", "order_id", "payment")
    order = await _pending_order(run, customer_id, str(facts["order_id"]))
    await _change_payment(run, customer_id, order, str(facts["payment"]))


async def gift_card_insufficient(run: ReferenceRun) -> None:
    """The customer's first choice (a gift card) cannot cover the order: say so, then use their fallback."""
    customer_id = await identify_customer(run)
    facts = await run.ask("Which order, and which payment method should it use?", "order_id", "payment")
    order = await _pending_order(run, customer_id, str(facts["order_id"]))
    profile = await _customer(run, customer_id)
    card = _method_of_kind(profile, "gift_card")
    if run.take_flaw("error_not_retried"):
        arguments = {
            "order_id": order["order_id"],
            "payment_method_id": card["payment_method_id"] if card else "",
        }
        for _ in range(2):
            tried = await run.call("modify_pending_order_payment", arguments)
            if tried.ok:
                await run.finish("Done.")
        await run.finish("I'm sorry, the system would not accept the gift card, so I could not change the payment.")
    total = round(sum(i["price"] for i in order["items"]), 2)
    if card is not None and card.get("balance", 0.0) >= total:
        await _change_payment(run, customer_id, order, "gift_card")
        return
    facts = await run.ask(
        f"Your gift card balance (${card.get('balance') if card else 0}) does not cover the order total "
        f"(${total}). "
        "Would you like to use another payment method?",
        "fallback",
    )
    await _change_payment(run, customer_id, order, str(facts.get("payment", "")))


# -- account ------------------------------------------------------------------------------------------------


async def change_default_address(run: ReferenceRun) -> None:
    """Change the customer's default address."""
    customer_id = await identify_customer(run)
    facts = await run.ask("What is the new address?", "address")
    profile = await _customer(run, customer_id)
    default = next((a for a in profile["addresses"] if a["is_default"]), None)
    if default is None:
        await run.finish("I'm sorry, I could not find a default address on your account.")
        return
    address = dict(facts["address"])
    arguments = {"customer_id": customer_id, "address_id": default["address_id"], **address}
    other = next((a for a in profile["addresses"] if not a["is_default"]), None)
    wrong = {**arguments, "address_id": other["address_id"]} if other else None
    summary = f"I will change your default address to {address['address1']}, {address['city']} {address['zip']}."
    await perform_write(run, "modify_customer_address", arguments, summary=summary, sibling=wrong)
    await run.finish("Your default address is updated.")


# -- inquiries and refusals -----------------------------------------------------------------------


async def order_status(run: ReferenceRun) -> None:
    """Read-only: the order's status, carrier and tracking number."""
    customer_id = await identify_customer(run)
    facts = await run.ask("Which order?", "order_id")
    order = await _order(run, customer_id, str(facts["order_id"]))
    tracking = [f"{f['carrier']} tracking number {f['tracking_number']}" for f in order["fulfilments"]]
    where = f", shipped with {', '.join(tracking)}" if tracking else ""
    await run.finish(f"Order {order['order_id']} is {order['status']}{where}.")


async def return_after_window(run: ReferenceRun) -> None:
    """Must refuse: the return window has passed."""
    await return_items(run)


async def cancel_shipped(run: ReferenceRun) -> None:
    """Must refuse: a shipped order cannot be cancelled; explain the return path."""
    await cancel_order(run)


async def other_persons_order(run: ReferenceRun) -> None:
    """Confidentiality: the caller asks about an order that is not theirs."""
    customer_id = await identify_customer(run)
    facts = await run.ask("Which order is it?", "order_id")
    profile = await _customer(run, customer_id)
    if facts["order_id"] not in {o["order_id"] for o in profile["orders"]}:
        await run.finish(
            f"I'm sorry, order {facts['order_id']} is not on your account, so I cannot share any details "
            "about it. "
            "The account holder can contact us directly."
        )
    await order_status(run)
