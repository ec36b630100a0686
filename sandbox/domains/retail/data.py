"""The seeded retail data as plain dicts for the scenario generators (read once from the template)."""

from __future__ import annotations

import json
import random
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlalchemy import Connection, Engine, select

from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.retail import models as m
from passhat.sandbox.domains.retail.systems import days_since


@dataclass(frozen=True)
class RetailData:
    """Every row of the starting state, indexed the way the task types look things up."""

    customers: dict[str, dict[str, Any]]
    addresses: dict[str, list[dict[str, Any]]]
    methods: dict[str, list[dict[str, Any]]]
    orders: dict[str, dict[str, Any]]
    orders_by_customer: dict[str, list[str]]
    items: dict[str, list[dict[str, Any]]]
    fulfilment: dict[str, dict[str, Any]]
    variants: dict[str, dict[str, Any]]
    variants_by_product: dict[str, list[dict[str, Any]]]
    products: dict[str, dict[str, Any]]
    paid: dict[str, float]

    def method(self, payment_method_id: str) -> dict[str, Any]:
        """A payment method by id."""
        for methods in self.methods.values():
            for method in methods:
                if method["payment_method_id"] == payment_method_id:
                    return method
        raise KeyError(payment_method_id)

    def returnable(self, order_id: str) -> bool:
        """Delivered within the return window, and nothing requested on it yet."""
        order = self.orders[order_id]
        delivered = self.fulfilment.get(order_id, {}).get("delivered_at")
        return (
            order["status"] == "delivered" and delivered is not None and days_since(delivered) <= m.RETURN_WINDOW_DAYS
        )

    def expired(self, order_id: str) -> bool:
        """Delivered, but longer ago than the return window."""
        order = self.orders[order_id]
        delivered = self.fulfilment.get(order_id, {}).get("delivered_at")
        return order["status"] == "delivered" and delivered is not None and days_since(delivered) > m.RETURN_WINDOW_DAYS

    def siblings(self, order_id: str, test: Any) -> list[str]:
        """Other orders of the same customer passing `test` (the wrong-entity candidates)."""
        customer = self.orders[order_id]["customer_id"]
        return [o for o in self.orders_by_customer[customer] if o != order_id and test(o)]

    def product_name(self, item: dict[str, Any]) -> str:
        """The product name of an order item."""
        return str(self.products[item["product_id"]]["name"])


def load(connection: Connection) -> RetailData:
    """Read the starting state into a RetailData."""

    def rows(table: Any) -> list[dict[str, Any]]:
        return [dict(row) for row in connection.execute(select(table)).mappings()]

    customers = {row["customer_id"]: row for row in rows(m.customers)}
    addresses: dict[str, list[dict[str, Any]]] = {}
    for row in rows(m.addresses):
        addresses.setdefault(row["customer_id"], []).append(row)
    methods: dict[str, list[dict[str, Any]]] = {}
    for row in rows(m.payment_methods):
        methods.setdefault(row["customer_id"], []).append(row)
    orders = {row["order_id"]: row for row in rows(m.orders)}
    orders_by_customer: dict[str, list[str]] = {c: [] for c in customers}
    for order in orders.values():
        orders_by_customer[order["customer_id"]].append(order["order_id"])
    items: dict[str, list[dict[str, Any]]] = {}
    for row in rows(m.order_items):
        items.setdefault(row["order_id"], []).append(row)
    variants = {}
    variants_by_product: dict[str, list[dict[str, Any]]] = {}
    for row in rows(m.variants):
        row["options"] = json.loads(row["options"])
        variants[row["variant_id"]] = row
        variants_by_product.setdefault(row["product_id"], []).append(row)
    paid: dict[str, float] = {}
    for row in rows(m.payment_transactions):
        sign = 1 if row["kind"] == "charge" else -1
        paid[row["order_id"]] = round(paid.get(row["order_id"], 0.0) + sign * row["amount"], 2)
    return RetailData(
        customers=customers,
        addresses=addresses,
        methods=methods,
        orders=orders,
        orders_by_customer=orders_by_customer,
        items=items,
        fulfilment={row["order_id"]: row for row in rows(m.fulfilments)},
        variants=variants,
        variants_by_product=variants_by_product,
        products={row["product_id"]: row for row in rows(m.products)},
        paid=paid,
    )


Intent = dict[str, Any]
REFUSAL = r"(cannot|can't|can not|unable to|not able to|no longer)"
"""A refusal, as a response pattern."""

_CACHE: weakref.WeakKeyDictionary[Engine, RetailData] = weakref.WeakKeyDictionary()


def data_for(connection: Connection) -> RetailData:
    """The starting state behind `connection`, loaded once per template database."""
    engine = connection.engine
    if engine not in _CACHE:
        _CACHE[engine] = load(connection)
    return _CACHE[engine]


def identity(data: RetailData, customer_id: str) -> Intent:
    """The facts a customer knows about themselves: email, name, and their default address's zip."""
    customer = data.customers[customer_id]
    default = next(a for a in data.addresses[customer_id] if a["is_default"])
    return {
        "customer_id": customer_id,
        "email": customer["email"],
        "first_name": customer["first_name"],
        "last_name": customer["last_name"],
        "zip": default["zip"],
    }


ASKED_AS: dict[str, tuple[str, ...]] = {
    "email": ("email",),
    "first_name": ("full name", "your name", "first name"),
    "last_name": ("full name", "your name", "last name"),
    "zip": ("zip", "postal"),
    "order_id": ("order number", "order id", "which order"),
}
"""The words a retail agent uses to ask for a customer's facts (the scripted customer answers to these)."""

retail_script = partial(CustomerScript, asked_as=ASKED_AS)
"""A CustomerScript in retail's words."""


def facts_of(intent: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    """The customer's facts: identity plus the named intent keys."""
    return {key: intent[key] for key in ("email", "first_name", "last_name", "zip", *keys) if key in intent}


def new_address(seed: str) -> dict[str, str]:
    """A new address, reproducible from `seed`."""
    rng = random.Random(seed)
    city, state, prefix = rng.choice((("Madison", "WI", "537"), ("Raleigh", "NC", "276"), ("Tucson", "AZ", "857")))
    return {
        "address1": f"{rng.randint(100, 999)} {rng.choice(('Birch', 'Harbor', 'Meadow', 'Granite'))} Avenue",
        "address2": rng.choice(("", "Suite 5", "Apt 12")),
        "city": city,
        "state": state,
        "country": "USA",
        "zip": f"{prefix}{rng.randint(10, 99)}",
    }


def alternatives(data: RetailData, item: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Available variants of the item's product other than its current one."""
    return [
        v
        for v in data.variants_by_product[item["product_id"]]
        if v["available"] and v["variant_id"] != item["variant_id"]
    ]


def sorted_orders(data: RetailData, test: Callable[[str], bool]) -> list[str]:
    """Order ids passing `test`, sorted (generators must not depend on dict order)."""
    return sorted(o for o in data.orders if test(o))


def is_pending(data: RetailData) -> Callable[[str], bool]:
    """A test for pending orders."""
    return lambda o: data.orders[o]["status"] == "pending"
