"""Retail task types on delivered orders: returns, exchanges, a multi-order chain, the window refusal, with the
ReferenceAgent's plans for them (a simulation)."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from functools import partial
from typing import Any

from sqlalchemy import Connection

from passhat.checks import (
    Check,
    all_of,
    inserted,
    no_other_writes,
    response_contains,
    unordered,
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
    retail_script,
    sorted_orders,
)
from passhat.sandbox.domains.retail.steps import (
    fetch_customer,
    fetch_order,
    gift_card_id,
    items_named,
    names_of,
    outside_chain,
    returnable,
    sibling_order,
    variant_swap,
    write,
)

# -- returns ------------------------------------------------------------------------------------------------


def return_candidates(connection: Connection, *, to_gift_card: bool) -> list[Intent]:
    data = data_for(connection)
    found: list[Intent] = []
    for order_id in sorted_orders(data, data.returnable):
        order = data.orders[order_id]
        if not data.siblings(order_id, data.returnable):
            continue
        method = order["payment_method_id"]
        if to_gift_card:
            cards = [p for p in data.methods[order["customer_id"]] if p["kind"] == "gift_card"]
            if not cards or cards[0]["payment_method_id"] == method:
                continue
            method = cards[0]["payment_method_id"]
        items = sorted(data.items[order_id], key=lambda i: i["item_id"])
        chosen = random.Random(order_id).sample(items, random.Random(order_id).randint(1, min(2, len(items))))
        chosen.sort(key=lambda i: i["item_id"])
        found.append(
            {
                **identity(data, order["customer_id"]),
                "order_id": order_id,
                "item_ids": [i["item_id"] for i in chosen],
                "items": [data.product_name(i) for i in chosen],
                "payment_method_id": method,
                "refund_amount": round(sum(i["price"] for i in chosen), 2),
                "refund_to": "my gift card" if to_gift_card else "the original payment method",
            }
        )
    return found


def return_script(intent: Mapping[str, Any]) -> CustomerScript:
    names = " and ".join(intent["items"])
    return retail_script(
        goal=f"Return the {names} from order {intent['order_id']}, refund to {intent['refund_to']}.",
        opening=f"Hi, I'd like to return the {names} from my order {intent['order_id']}. "
        f"Please refund {intent['refund_to']}.",
        facts=facts_of(intent, "order_id", "items", "refund_to"),
        stated=("order_id", "items", "refund_to"),
        unknown=("customer_id", "item_ids", "payment_method_id"),
    )


def return_check(intent: Mapping[str, Any]) -> Check:
    return all_of(
        inserted(
            "returns",
            {
                "order_id": intent["order_id"],
                "item_ids": unordered(intent["item_ids"]),
                "payment_method_id": intent["payment_method_id"],
                "refund_amount": intent["refund_amount"],
                "status": "requested",
            },
        ),
        updated("orders", {"order_id": intent["order_id"]}, {"status": "return requested"}),
        no_other_writes(),
    )


def exchange_candidates(connection: Connection) -> list[Intent]:
    data = data_for(connection)
    found: list[Intent] = []

    def workable(order_id: str) -> bool:
        return data.returnable(order_id) and bool(alternatives(data, data.items[order_id][0]))

    for order_id in sorted_orders(data, data.returnable):
        order = data.orders[order_id]
        if not data.siblings(order_id, workable):
            continue
        rng = random.Random(order_id)
        options = [i for i in sorted(data.items[order_id], key=lambda i: i["item_id"]) if alternatives(data, i)]
        if not options:
            continue
        item = rng.choice(options)
        variant = rng.choice(alternatives(data, item))
        difference = round(variant["price"] - item["price"], 2)
        method = data.method(order["payment_method_id"])
        if method["kind"] == "gift_card" and difference > (method["balance"] or 0.0):
            continue
        name = data.product_name(item)
        found.append(
            {
                **identity(data, order["customer_id"]),
                "order_id": order_id,
                "item_ids": [item["item_id"]],
                "items": [name],
                "new_variant_ids": [variant["variant_id"]],
                "new_options": {name: variant["options"]},
                "payment_method_id": order["payment_method_id"],
                "price_difference": difference,
            }
        )
    return found


def _options_text(options: Mapping[str, Any]) -> str:
    return ", ".join(f"{key} {value}" for key, value in sorted(options.items()))


def exchange_script(intent: Mapping[str, Any]) -> CustomerScript:
    name = intent["items"][0]
    wanted = _options_text(intent["new_options"][name])
    return retail_script(
        goal=f"Exchange the {name} from order {intent['order_id']} for the {wanted} version.",
        opening=f"Hello, I want to exchange the {name} from order {intent['order_id']} for one with {wanted}.",
        facts=facts_of(intent, "order_id", "items", "new_options"),
        stated=("order_id", "items", "new_options"),
        unknown=("variant_id", "item_ids"),
    )


def exchange_check(intent: Mapping[str, Any]) -> Check:
    # Which items is a set; each new variant belongs to its item, so the variants are compared in the order
    # the backend stores them: that of the sorted item ids.
    pairs = sorted(zip(intent["item_ids"], intent["new_variant_ids"], strict=True))
    return all_of(
        inserted(
            "exchanges",
            {
                "order_id": intent["order_id"],
                "item_ids": unordered(intent["item_ids"]),
                "new_variant_ids": json.dumps([variant for _, variant in pairs]),
                "payment_method_id": intent["payment_method_id"],
                "price_difference": intent["price_difference"],
                "status": "requested",
            },
        ),
        updated("orders", {"order_id": intent["order_id"]}, {"status": "exchange requested"}),
        no_other_writes(),
    )


def multi_candidates(connection: Connection) -> list[Intent]:
    data = data_for(connection)
    found: list[Intent] = []
    for customer_id in sorted(data.customers):
        eligible = sorted(o for o in data.orders_by_customer[customer_id] if data.returnable(o))
        if len(eligible) < 3:
            continue
        chosen = eligible[:2]
        returns = []
        for order_id in chosen:
            item = sorted(data.items[order_id], key=lambda i: i["item_id"])[0]
            returns.append(
                {
                    "order_id": order_id,
                    "item_ids": [item["item_id"]],
                    "items": [data.product_name(item)],
                    "payment_method_id": data.orders[order_id]["payment_method_id"],
                    "refund_amount": round(item["price"], 2),
                }
            )
        found.append(
            {
                **identity(data, customer_id),
                "returns": returns,
                "order_ids": chosen,
                "items_by_order": {r["order_id"]: r["items"] for r in returns},
            }
        )
    return found


def multi_script(intent: Mapping[str, Any]) -> CustomerScript:
    parts = [f"the {r['items'][0]} from order {r['order_id']}" for r in intent["returns"]]
    return retail_script(
        goal=f"Return {' and '.join(parts)}, refunds to the original payment methods.",
        opening=f"Hi, I need to return {' and also '.join(parts)}. Refunds to the original payment, please.",
        facts=facts_of(intent, "order_ids", "items_by_order"),
        stated=("order_ids", "items_by_order"),
    )


def multi_check(intent: Mapping[str, Any]) -> Check:
    parts: list[Check] = []
    for ret in intent["returns"]:
        parts.append(
            inserted(
                "returns",
                {
                    "order_id": ret["order_id"],
                    "item_ids": unordered(ret["item_ids"]),
                    "payment_method_id": ret["payment_method_id"],
                    "refund_amount": ret["refund_amount"],
                },
            )
        )
        parts.append(updated("orders", {"order_id": ret["order_id"]}, {"status": "return requested"}))
    return all_of(*parts, no_other_writes())


def expired_candidates(connection: Connection) -> list[Intent]:
    data = data_for(connection)
    found: list[Intent] = []
    for order_id in sorted_orders(data, data.expired):
        order = data.orders[order_id]
        item = sorted(data.items[order_id], key=lambda i: i["item_id"])[0]
        found.append(
            {
                **identity(data, order["customer_id"]),
                "order_id": order_id,
                "items": [data.product_name(item)],
                "refund_to": "the original payment method",
                "delivered_at": data.fulfilment[order_id]["delivered_at"],
            }
        )
    return found


def expired_check(intent: Mapping[str, Any]) -> Check:
    # The refusal names the order it refuses.
    return all_of(no_other_writes(), response_contains(intent["order_id"], patterns=[REFUSAL, r"30[ -]day"]))


# -- reference plans (the offline ReferenceAgent, a simulation) ------------------------------------------


async def return_items(run: ReferenceRun) -> None:
    """Return delivered items, refunding the original payment method or a gift card."""
    customer_id = await identify(run)
    facts = await run.ask("Which order and items, and where should the refund go?", "order_id", "items", "refund_to")
    order = await fetch_order(run, customer_id, str(facts["order_id"]))
    if not returnable(order):
        await run.finish(
            f"I'm sorry, I cannot accept a return for order {order['order_id']}: returns are possible only "
            f"for delivered orders within 30 days of delivery."
        )
    items = items_named(order, names_of(facts["items"]))
    method = order["payment_method_id"]
    if "gift" in str(facts.get("refund_to", "")):
        method = gift_card_id(await fetch_customer(run, customer_id)) or method
    arguments = {
        "order_id": order["order_id"],
        "item_ids": [i["item_id"] for i in items],
        "payment_method_id": method,
    }
    sibling = await sibling_order(run, customer_id, order["order_id"], "delivered", returnable)
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
    await write(run, "return_delivered_items", arguments, summary=summary, sibling=wrong)
    await run.finish(f"Done: the return is requested and ${total} will be refunded to {method}.")


async def exchange_items(run: ReferenceRun) -> None:
    """Exchange a delivered item for another available variant of the same product."""
    customer_id = await identify(run)
    facts = await run.ask(
        "Which order and item, and which new option would you like?", "order_id", "items", "new_options"
    )
    order = await fetch_order(run, customer_id, str(facts["order_id"]))
    if not returnable(order):
        await run.finish("I'm sorry, I cannot exchange items from this order: it is not within 30 days of delivery.")
    item = items_named(order, names_of(facts["items"]))[0]
    arguments, wrong, new_variant = await variant_swap(run, customer_id, order, facts, "delivered", returnable)
    summary = f"I will exchange {item['name']} in order {order['order_id']} for variant {new_variant}."
    result = await write(run, "exchange_delivered_items", arguments, summary=summary, sibling=wrong)
    await run.finish(f"Done: the exchange is requested (price difference ${result.data['price_difference']}).")


async def multi_order_return(run: ReferenceRun) -> None:
    """A chain: return items from several delivered orders, one return per order."""
    customer_id = await identify(run)
    facts = await run.ask("Which orders and which items from each?", "order_ids", "items_by_order")
    by_order: Mapping[str, Any] = facts["items_by_order"]
    chain = frozenset(names_of(facts["order_ids"]))
    done: list[str] = []
    for order_id in names_of(facts["order_ids"]):
        order = await fetch_order(run, customer_id, order_id)
        if not returnable(order):
            await run.finish(f"I'm sorry, order {order_id} can no longer be returned (30-day window).")
        items = items_named(order, names_of(by_order[order_id]))
        arguments = {
            "order_id": order_id,
            "item_ids": [i["item_id"] for i in items],
            "payment_method_id": order["payment_method_id"],
        }
        sibling = await sibling_order(run, customer_id, order_id, "delivered", partial(outside_chain, chain))
        wrong = None
        if sibling is not None:
            wrong = {
                "order_id": sibling["order_id"],
                "item_ids": [sibling["items"][0]["item_id"]],
                "payment_method_id": sibling["payment_method_id"],
            }
        names = ", ".join(i["name"] for i in items)
        summary = f"I will return {names} from order {order_id} to the original payment method."
        await write(run, "return_delivered_items", arguments, summary=summary, sibling=wrong)
        done.append(order_id)
    await run.finish(f"Done: returns are requested for orders {', '.join(done)}.")


async def return_after_window(run: ReferenceRun) -> None:
    """Must refuse: the return window has passed."""
    await return_items(run)
