"""Retail task types on pending orders (cancel, change address, items or payment, a short gift card, the
shipped-order refusal), with the ReferenceAgent's plans for them (a simulation)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection

from passhat.checks import (
    Check,
    all_of,
    no_other_writes,
    response_contains,
    updated,
)
from passhat.sandbox.agents import ReferenceRun, identify
from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.retail.data import (
    REFUSAL,
    Intent,
    alternatives,
    data_for,
    facts_of,
    identity,
    is_pending,
    new_address,
    retail_script,
    sorted_orders,
)
from passhat.sandbox.domains.retail.effects import money_moved, settlement
from passhat.sandbox.domains.retail.steps import (
    Order,
    fetch_customer,
    fetch_order,
    items_named,
    method_of_kind,
    names_of,
    sibling_order,
    variant_swap,
    write,
)

# -- pending orders -----------------------------------------------------------------------------------------


def cancel_candidates(connection: Connection, *, by_name: bool = False) -> list[Intent]:
    data = data_for(connection)
    pending = is_pending(data)
    found: list[Intent] = []
    name_zip_counts: dict[tuple[str, str, str], int] = {}
    for customer_id, addresses in data.addresses.items():
        customer = data.customers[customer_id]
        for zip_code in {a["zip"] for a in addresses}:
            key = (customer["first_name"], customer["last_name"], zip_code)
            name_zip_counts[key] = name_zip_counts.get(key, 0) + 1
    for order_id in sorted_orders(data, pending):
        order = data.orders[order_id]
        if not data.siblings(order_id, pending):
            continue
        intent = identity(data, order["customer_id"])
        if by_name and name_zip_counts[(intent["first_name"], intent["last_name"], intent["zip"])] != 1:
            continue
        method = data.method(order["payment_method_id"])
        amount = data.paid[order_id]
        intent |= {
            "order_id": order_id,
            "reason": random.Random(order_id).choice(("no longer needed", "ordered by mistake")),
            "payment_method_id": method["payment_method_id"],
            "refund_amount": amount,
            "settlements": [settlement(method, "refund", amount)],
        }
        found.append(intent)
    return found


def cancel_script(intent: Mapping[str, Any], *, by_name: bool = False) -> CustomerScript:
    facts = facts_of(intent, "order_id", "reason")
    if by_name:
        facts.pop("email")
    return retail_script(
        goal=f"Cancel order {intent['order_id']} because it is {intent['reason']}.",
        opening=f"Hi, please cancel my order {intent['order_id']}, it's {intent['reason']}.",
        facts=facts,
        stated=("order_id", "reason"),
        unknown=("email",) if by_name else (),
    )


def cancel_check(intent: Mapping[str, Any]) -> Check:
    order_id = intent["order_id"]
    return all_of(
        # The reason is what the customer confirmed; the backend keeps it with the order.
        updated("orders", {"order_id": order_id}, {"status": "cancelled", "cancel_reason": intent["reason"]}),
        *money_moved(order_id, intent["settlements"]),
        no_other_writes(),
    )


def address_candidates(connection: Connection) -> list[Intent]:
    data = data_for(connection)
    pending = is_pending(data)
    return [
        {
            **identity(data, data.orders[o]["customer_id"]),
            "order_id": o,
            "address": new_address(o),
        }
        for o in sorted_orders(data, pending)
        if data.siblings(o, pending)
    ]


def _address_text(address: Mapping[str, str]) -> str:
    line2 = f" {address['address2']}" if address["address2"] else ""
    city = f"{address['city']}, {address['state']} {address['zip']}"
    return f"{address['address1']}{line2}, {city}, {address['country']}"


def address_script(intent: Mapping[str, Any]) -> CustomerScript:
    return retail_script(
        goal=f"Ship order {intent['order_id']} to {_address_text(intent['address'])}.",
        opening=f"Hi, I moved. Can you send order {intent['order_id']} to {_address_text(intent['address'])}?",
        facts=facts_of(intent, "order_id", "address"),
        stated=("order_id", "address"),
    )


def address_check(intent: Mapping[str, Any]) -> Check:
    new = {f"ship_{key}": value for key, value in intent["address"].items()}
    return all_of(updated("orders", {"order_id": intent["order_id"]}, new), no_other_writes())


def items_candidates(connection: Connection) -> list[Intent]:
    data = data_for(connection)
    pending = is_pending(data)

    def workable(order_id: str) -> bool:
        return pending(order_id) and bool(alternatives(data, data.items[order_id][0]))

    found: list[Intent] = []
    for order_id in sorted_orders(data, pending):
        order = data.orders[order_id]
        options = [i for i in sorted(data.items[order_id], key=lambda i: i["item_id"]) if alternatives(data, i)]
        if not options or not data.siblings(order_id, workable):
            continue
        rng = random.Random(order_id)
        item = rng.choice(options)
        variant = rng.choice(alternatives(data, item))
        difference = round(variant["price"] - item["price"], 2)
        method = data.method(order["payment_method_id"])
        if method["kind"] == "gift_card" and difference > (method["balance"] or 0.0):
            continue
        name = data.product_name(item)
        intent = {
            **identity(data, order["customer_id"]),
            "order_id": order_id,
            "item_id": item["item_id"],
            "items": [name],
            "new_variant_id": variant["variant_id"],
            "new_price": variant["price"],
            "new_options": {name: variant["options"]},
            "payment_method_id": method["payment_method_id"],
            "price_difference": difference,
            "settlements": [settlement(method, "charge" if difference > 0 else "refund", abs(difference))]
            if difference
            else [],
        }
        found.append(intent)
    return found


def items_script(intent: Mapping[str, Any]) -> CustomerScript:
    name = intent["items"][0]
    wanted = ", ".join(f"{k} {v}" for k, v in sorted(intent["new_options"][name].items()))
    return retail_script(
        goal=f"Change the {name} in pending order {intent['order_id']} to the {wanted} version.",
        opening=f"Hi, in my order {intent['order_id']} I'd like the {name} with {wanted} instead.",
        facts=facts_of(intent, "order_id", "items", "new_options"),
        stated=("order_id", "items", "new_options"),
    )


def items_check(intent: Mapping[str, Any]) -> Check:
    return all_of(
        updated(
            "order_items",
            {"item_id": intent["item_id"]},
            {"variant_id": intent["new_variant_id"], "price": intent["new_price"]},
        ),
        updated("orders", {"order_id": intent["order_id"]}, {"items_modified": True}),
        *money_moved(intent["order_id"], intent["settlements"]),
        no_other_writes(),
    )


def payment_candidates(
    connection: Connection, *, insufficient_gift_card: bool = False, to_gift_card: bool = False
) -> list[Intent]:
    """Pending orders to pay another way: with another card or PayPal account, with a gift card that covers
    the order (`to_gift_card`), or with a gift card that does not, then a fallback (`insufficient_gift_card`)."""
    data = data_for(connection)
    pending = is_pending(data)
    found: list[Intent] = []
    for order_id in sorted_orders(data, pending):
        order = data.orders[order_id]
        methods = data.methods[order["customer_id"]]
        old = data.method(order["payment_method_id"])
        amount = data.paid[order_id]
        others = [p for p in methods if p["kind"] != "gift_card" and p["payment_method_id"] != old["payment_method_id"]]
        cards = [p for p in methods if p["kind"] == "gift_card"]
        if to_gift_card:
            # The first gift card is the one a customer asking for "my gift card" means.
            if not cards or cards[0]["payment_method_id"] == old["payment_method_id"]:
                continue
            if (cards[0]["balance"] or 0.0) < amount:
                continue
            others = cards[:1]
        if not others:
            continue
        new = others[0]
        intent: Intent = {
            **identity(data, order["customer_id"]),
            "order_id": order_id,
            "old_payment_method_id": old["payment_method_id"],
            "payment_method_id": new["payment_method_id"],
            "payment": new["kind"],
            "amount": amount,
        }
        if insufficient_gift_card:
            if old["kind"] == "gift_card" or not cards or (cards[0]["balance"] or 0.0) >= amount:
                continue
            intent["payment"] = "gift_card"
            intent["fallback"] = {"payment": new["kind"]}
        intent["settlements"] = [settlement(old, "refund", amount), settlement(new, "charge", amount)]

        def other_payable(other: str, new_id: str = new["payment_method_id"]) -> bool:
            return pending(other) and data.orders[other]["payment_method_id"] != new_id

        if data.siblings(order_id, other_payable):
            found.append(intent)
    return found


_KIND_TEXT = {"paypal": "my PayPal account", "credit_card": "my credit card", "gift_card": "my gift card"}


def payment_script(intent: Mapping[str, Any]) -> CustomerScript:
    how = _KIND_TEXT[intent["payment"]]
    fallback = intent.get("fallback", {})
    goal = f"Pay pending order {intent['order_id']} with {how}"
    if fallback:
        goal += f"; if that is not possible, with {_KIND_TEXT[fallback['payment']]}"
    return retail_script(
        goal=goal + ".",
        opening=f"Hi, could you switch the payment of order {intent['order_id']} to {how}?",
        facts=facts_of(intent, "order_id", "payment"),
        stated=("order_id", "payment"),
        unknown=("gift_card_balance", "payment_method_id"),
        fallback=fallback,
    )


def payment_check(intent: Mapping[str, Any]) -> Check:
    order_id = intent["order_id"]
    return all_of(
        updated("orders", {"order_id": order_id}, {"payment_method_id": intent["payment_method_id"]}),
        # The old method is refunded and the new one charged, gift card balances included.
        *money_moved(order_id, intent["settlements"]),
        no_other_writes(),
    )


def shipped_candidates(connection: Connection) -> list[Intent]:
    data = data_for(connection)
    return [
        {
            **identity(data, data.orders[o]["customer_id"]),
            "order_id": o,
            "reason": random.Random(o).choice(("no longer needed", "ordered by mistake")),
        }
        for o in sorted_orders(data, lambda o: data.orders[o]["status"] in ("shipped", "processed"))
    ]


def shipped_check(intent: Mapping[str, Any]) -> Check:
    return all_of(no_other_writes(), response_contains(patterns=[REFUSAL, r"\breturn"]))


# -- reference plans (the offline ReferenceAgent, a simulation) ------------------------------------------


def _pending(order: Order) -> bool:
    return bool(order["status"] == "pending")


async def _pending_order(run: ReferenceRun, customer_id: str | None, order_id: str) -> Order:
    order = await fetch_order(run, customer_id, order_id)
    if order["status"] != "pending":
        await run.finish(
            f"I'm sorry, order {order_id} is {order['status']}, so it can no longer be changed or cancelled. "
            "Once it is delivered you can return items within 30 days."
        )
    return order


async def cancel_order(run: ReferenceRun) -> None:
    """Cancel a pending order (refund to the original payment method)."""
    customer_id = await identify(run)
    facts = await run.ask("Which order, and the reason for cancelling?", "order_id", "reason")
    order = await _pending_order(run, customer_id, str(facts["order_id"]))
    arguments = {"order_id": order["order_id"], "reason": str(facts["reason"])}
    sibling = await sibling_order(run, customer_id, order["order_id"], "pending", _pending)
    wrong = {"order_id": sibling["order_id"], "reason": arguments["reason"]} if sibling else None
    summary = f"I will cancel order {order['order_id']} (reason: {arguments['reason']}) and refund it."
    result = await write(run, "cancel_pending_order", arguments, summary=summary, sibling=wrong)
    await run.finish(f"Order {order['order_id']} is cancelled; ${result.data['refunded']} will be refunded.")


async def change_order_address(run: ReferenceRun) -> None:
    """Change the shipping address of a pending order."""
    customer_id = await identify(run)
    facts = await run.ask("Which order, and what is the new address?", "order_id", "address")
    order = await _pending_order(run, customer_id, str(facts["order_id"]))
    address = dict(facts["address"])
    arguments = {"order_id": order["order_id"], **address}
    sibling = await sibling_order(run, customer_id, order["order_id"], "pending", _pending)
    wrong = {"order_id": sibling["order_id"], **address} if sibling else None
    summary = f"I will ship order {order['order_id']} to {address['address1']}, {address['city']} {address['zip']}."
    await write(run, "modify_pending_order_address", arguments, summary=summary, sibling=wrong)
    await run.finish(f"Order {order['order_id']} will now ship to the new address.")


async def change_order_items(run: ReferenceRun) -> None:
    """Swap an item of a pending order for another variant of the same product."""
    customer_id = await identify(run)
    facts = await run.ask("Which order and item, and which option instead?", "order_id", "items", "new_options")
    order = await _pending_order(run, customer_id, str(facts["order_id"]))
    if order["items_modified"]:
        await run.finish("I'm sorry, the items of this order were already changed once; they cannot change again.")
    item = items_named(order, names_of(facts["items"]))[0]
    arguments, wrong, new_variant = await variant_swap(run, customer_id, order, facts, "pending", _pending)
    summary = f"I will swap {item['name']} in order {order['order_id']} for variant {new_variant}."
    result = await write(run, "modify_pending_order_items", arguments, summary=summary, sibling=wrong)
    await run.finish(f"Done; the price difference is ${result.data['price_difference']}.")


async def _change_payment(run: ReferenceRun, customer_id: str | None, order: Order, kind: str) -> None:
    profile = await fetch_customer(run, customer_id)
    method = method_of_kind(profile, kind)
    new_id = method["payment_method_id"] if method else f"{kind}_unknown"
    arguments = {"order_id": order["order_id"], "payment_method_id": new_id}
    sibling = await sibling_order(
        run,
        customer_id,
        order["order_id"],
        "pending",
        lambda o: _pending(o) and o["payment_method_id"] != new_id,
    )
    wrong = {"order_id": sibling["order_id"], "payment_method_id": new_id} if sibling else None
    summary = f"I will pay order {order['order_id']} with {new_id} and refund the previous payment method."
    await write(run, "modify_pending_order_payment", arguments, summary=summary, sibling=wrong)
    await run.finish(f"Order {order['order_id']} is now paid with {new_id}.")


async def change_order_payment(run: ReferenceRun) -> None:
    """Pay a pending order with another of the customer's payment methods."""
    customer_id = await identify(run)
    facts = await run.ask("Which order, and which payment method should it use?", "order_id", "payment")
    order = await _pending_order(run, customer_id, str(facts["order_id"]))
    await _change_payment(run, customer_id, order, str(facts["payment"]))


async def gift_card_insufficient(run: ReferenceRun) -> None:
    """The customer's first choice (a gift card) cannot cover the order: say so, then use their fallback."""
    customer_id = await identify(run)
    facts = await run.ask("Which order, and which payment method should it use?", "order_id", "payment")
    order = await _pending_order(run, customer_id, str(facts["order_id"]))
    profile = await fetch_customer(run, customer_id)
    card = method_of_kind(profile, "gift_card")
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


async def cancel_shipped(run: ReferenceRun) -> None:
    """Must refuse: a shipped order cannot be cancelled; explain the return path."""
    await cancel_order(run)
