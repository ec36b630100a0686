"""The retail backend's MCP tools: each server acts on one trial's database and remembers who was identified.

Tools enforce their preconditions the way a real backend does and return typed errors (`not_found`,
`precondition_failed`, `not_allowed`, `insufficient_funds`, `invalid_argument`) instead of raising.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from sqlalchemy import Connection, Engine, Select, bindparam, insert, select, update

from passhat.sandbox.domain import ServerFactory, evaluate_arithmetic, fail, ok
from passhat.sandbox.domains.retail import models as m

LOOKUP_TOOLS = frozenset(
    {"find_customer_by_email", "find_customer_by_name_zip", "get_customer", "get_order", "get_product"}
)
WRITE_TOOLS = frozenset(
    {
        "cancel_pending_order",
        "modify_pending_order_address",
        "modify_pending_order_items",
        "modify_pending_order_payment",
        "modify_customer_address",
        "return_delivered_items",
        "exchange_delivered_items",
        "transfer_to_human",
    }
)
TOOL_NAMES = (
    "find_customer_by_email",
    "find_customer_by_name_zip",
    "get_customer",
    "get_order",
    "get_product",
    "list_product_types",
    "cancel_pending_order",
    "modify_pending_order_address",
    "modify_pending_order_items",
    "modify_pending_order_payment",
    "modify_customer_address",
    "return_delivered_items",
    "exchange_delivered_items",
    "transfer_to_human",
    "calculate",
)
CANCEL_REASONS = m.CANCEL_REASONS


def days_since(date: str) -> int:
    """Days from an ISO date to the sandbox's fixed today."""
    return (dt.date.fromisoformat(m.TODAY) - dt.date.fromisoformat(date[:10])).days


_LOOKUPS: dict[tuple[str, str], Select[Any]] = {}


def _lookup(column: Any) -> Select[Any]:
    """`SELECT * FROM table WHERE column = :value`, built once per column (statement building is not free)."""
    key = (column.table.name, column.name)
    statement = _LOOKUPS.get(key)
    if statement is None:
        statement = _LOOKUPS[key] = select(column.table).where(column == bindparam("value"))
    return statement


class RetailBackend:
    """One trial's retail backend: a database connection and the session's identified customers."""

    def __init__(self, connection: Connection) -> None:
        self._db = connection
        self.identified: set[str] = set()

    # -- internals -------------------------------------------------------------------------------------

    def _row(self, table: Any, column: Any, value: Any) -> dict[str, Any] | None:
        row = self._db.execute(_lookup(column), {"value": value}).mappings().first()
        return dict(row) if row is not None else None

    def _rows(self, column: Any, value: Any) -> list[dict[str, Any]]:
        return [dict(row) for row in self._db.execute(_lookup(column), {"value": value}).mappings()]

    def _order(self, order_id: str, statuses: tuple[str, ...]) -> dict[str, Any] | CallToolResult:
        order = self._row(m.orders, m.orders.c.order_id, order_id)
        if order is None:
            return fail("not_found", f"order {order_id} not found")
        if order["customer_id"] not in self.identified:
            return fail(
                "precondition_failed",
                "the order's customer has not been identified in this session: use find_customer_by_email "
                "or find_customer_by_name_zip first",
            )
        if order["status"] not in statuses:
            return fail("not_allowed", f"order {order_id} is {order['status']}; this needs {' or '.join(statuses)}")
        return order

    def _items(self, order_id: str) -> dict[str, dict[str, Any]]:
        return {row["item_id"]: row for row in self._rows(m.order_items.c.order_id, order_id)}

    def _method(self, customer_id: str, payment_method_id: str) -> dict[str, Any] | CallToolResult:
        method = self._row(m.payment_methods, m.payment_methods.c.payment_method_id, payment_method_id)
        if method is None or method["customer_id"] != customer_id:
            return fail("not_found", f"payment method {payment_method_id} not found for this customer")
        return method

    def _pick_items(self, order_id: str, item_ids: list[str]) -> dict[str, dict[str, Any]] | CallToolResult:
        if not item_ids:
            return fail("invalid_argument", "item_ids must list at least one item")
        if len(set(item_ids)) != len(item_ids):
            return fail("invalid_argument", "item_ids lists an item twice")
        items = self._items(order_id)
        missing = [item for item in item_ids if item not in items]
        if missing:
            return fail("not_found", f"items {', '.join(missing)} are not in order {order_id}")
        return {item: items[item] for item in item_ids}

    def _new_variants(
        self, picked: dict[str, dict[str, Any]], new_variant_ids: list[str]
    ) -> list[dict[str, Any]] | CallToolResult:
        if len(new_variant_ids) != len(picked):
            return fail("invalid_argument", "new_variant_ids must have one variant per item in item_ids")
        chosen = []
        for item, variant_id in zip(picked.values(), new_variant_ids, strict=True):
            variant = self._row(m.variants, m.variants.c.variant_id, variant_id)
            if variant is None:
                return fail("not_found", f"variant {variant_id} not found")
            if variant["product_id"] != item["product_id"]:
                return fail(
                    "not_allowed",
                    f"variant {variant_id} is not a variant of item {item['item_id']}'s product",
                )
            if variant_id == item["variant_id"]:
                return fail("invalid_argument", f"variant {variant_id} is the item's current variant")
            if not variant["available"]:
                return fail("not_allowed", f"variant {variant_id} is not available")
            chosen.append(variant)
        return chosen

    def _move_money(self, order_id: str, method: dict[str, Any], kind: str, amount: float) -> None:
        self._db.execute(
            insert(m.payment_transactions).values(
                order_id=order_id,
                payment_method_id=method["payment_method_id"],
                kind=kind,
                amount=round(amount, 2),
                created_at=m.TODAY,
            )
        )
        if method["kind"] == "gift_card":
            delta = amount if kind == "refund" else -amount
            self._db.execute(
                update(m.payment_methods)
                .where(m.payment_methods.c.payment_method_id == method["payment_method_id"])
                .values(balance=round((method["balance"] or 0.0) + delta, 2))
            )

    def _within_window(self, order_id: str) -> bool:
        delivered = self._db.execute(
            select(m.fulfilments.c.delivered_at).where(m.fulfilments.c.order_id == order_id)
        ).scalar()
        return delivered is not None and days_since(delivered) <= m.RETURN_WINDOW_DAYS

    def _paid(self, order_id: str) -> float:
        rows = self._db.execute(
            select(m.payment_transactions.c.kind, m.payment_transactions.c.amount).where(
                m.payment_transactions.c.order_id == order_id
            )
        )
        total: float = sum(amount if kind == "charge" else -amount for kind, amount in rows)
        return round(total, 2)

    # -- lookups ---------------------------------------------------------------------------------------

    async def find_customer_by_email(self, email: str) -> CallToolResult:
        """Find a customer by email and identify them for this session. Returns the customer_id."""
        row = self._row(m.customers, m.customers.c.email, email.strip().lower())
        if row is None:
            return fail("not_found", f"no customer with email {email}")
        self.identified.add(row["customer_id"])
        return ok({"customer_id": row["customer_id"]})

    async def find_customer_by_name_zip(self, first_name: str, last_name: str, zip: str) -> CallToolResult:
        """Find a customer by first and last name and the zip of one of their addresses; identifies them."""
        query = (
            select(m.customers.c.customer_id)
            .join(m.addresses, m.addresses.c.customer_id == m.customers.c.customer_id)
            .where(
                m.customers.c.first_name == first_name.strip().title(),
                m.customers.c.last_name == last_name.strip().title(),
                m.addresses.c.zip == zip.strip(),
            )
        )
        found = sorted({row[0] for row in self._db.execute(query)})
        if not found:
            return fail("not_found", f"no customer named {first_name} {last_name} with zip {zip}")
        if len(found) > 1:
            return fail("invalid_argument", "several customers match; ask for the email instead")
        self.identified.add(found[0])
        return ok({"customer_id": found[0]})

    async def get_customer(self, customer_id: str) -> CallToolResult:
        """Profile of an identified customer: contact details, addresses, payment methods and order ids."""
        row = self._row(m.customers, m.customers.c.customer_id, customer_id)
        if row is None:
            return fail("not_found", f"customer {customer_id} not found")
        if customer_id not in self.identified:
            return fail("precondition_failed", "identify the customer first (find_customer_by_email or _by_name_zip)")
        addresses = self._rows(m.addresses.c.customer_id, customer_id)
        methods = self._rows(m.payment_methods.c.customer_id, customer_id)
        orders = self._db.execute(
            select(m.orders.c.order_id, m.orders.c.status).where(m.orders.c.customer_id == customer_id)
        )
        return ok(
            {
                **row,
                "addresses": addresses,
                "payment_methods": [{k: v for k, v in p.items() if v is not None} for p in methods],
                "orders": [{"order_id": o, "status": s} for o, s in orders],
            }
        )

    async def get_order(self, order_id: str) -> CallToolResult:
        """Details of an order: status, items with variant options and prices, payment method, shipping."""
        order = self._row(m.orders, m.orders.c.order_id, order_id)
        if order is None:
            return fail("not_found", f"order {order_id} not found")
        items = []
        for item in self._items(order_id).values():
            variant = self._row(m.variants, m.variants.c.variant_id, item["variant_id"]) or {}
            product = self._row(m.products, m.products.c.product_id, item["product_id"]) or {}
            items.append({**item, "name": product.get("name"), "options": json.loads(variant.get("options", "{}"))})
        fulfilments = self._rows(m.fulfilments.c.order_id, order_id)
        return ok({**order, "items": items, "fulfilments": fulfilments})

    async def get_product(self, product_id: str) -> CallToolResult:
        """A product and all its variants (options, price, availability)."""
        product = self._row(m.products, m.products.c.product_id, product_id)
        if product is None:
            return fail("not_found", f"product {product_id} not found")
        rows = self._rows(m.variants.c.product_id, product_id)
        variants = [{**v, "options": json.loads(v["options"])} for v in rows]
        return ok({**product, "variants": variants})

    async def list_product_types(self) -> CallToolResult:
        """Every product name with its product_id."""
        rows = self._db.execute(select(m.products.c.name, m.products.c.product_id))
        return ok({name: product_id for name, product_id in rows})

    # -- writes ----------------------------------------------------------------------------------------

    async def cancel_pending_order(self, order_id: str, reason: str) -> CallToolResult:
        """Cancel a pending order and refund it to its original payment method.

        reason: 'no longer needed' or 'ordered by mistake'.
        """
        order = self._order(order_id, ("pending",))
        if isinstance(order, CallToolResult):
            return order
        if reason not in CANCEL_REASONS:
            return fail("invalid_argument", f"reason must be one of: {', '.join(CANCEL_REASONS)}")
        method = self._method(order["customer_id"], order["payment_method_id"])
        if isinstance(method, CallToolResult):
            return method
        amount = self._paid(order_id)
        self._db.execute(
            update(m.orders).where(m.orders.c.order_id == order_id).values(status="cancelled", cancel_reason=reason)
        )
        self._move_money(order_id, method, "refund", amount)
        self._db.commit()
        return ok(
            {
                "order_id": order_id,
                "status": "cancelled",
                "refunded": amount,
                "to": method["payment_method_id"],
            }
        )

    async def modify_pending_order_address(
        self, order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
    ) -> CallToolResult:
        """Change the shipping address of a pending order."""
        order = self._order(order_id, ("pending",))
        if isinstance(order, CallToolResult):
            return order
        if not (address1.strip() and city.strip() and zip.strip()):
            return fail("invalid_argument", "address1, city and zip are required")
        values = {
            "ship_address1": address1,
            "ship_address2": address2,
            "ship_city": city,
            "ship_state": state,
            "ship_country": country,
            "ship_zip": zip,
        }
        self._db.execute(update(m.orders).where(m.orders.c.order_id == order_id).values(**values))
        self._db.commit()
        return ok({"order_id": order_id, **values})

    async def modify_pending_order_items(
        self, order_id: str, item_ids: list[str], new_variant_ids: list[str], payment_method_id: str
    ) -> CallToolResult:
        """Swap items of a pending order for other variants of the same product (allowed once per order).

        The price difference is charged to, or refunded to, payment_method_id.
        """
        order = self._order(order_id, ("pending",))
        if isinstance(order, CallToolResult):
            return order
        if order["items_modified"]:
            return fail("not_allowed", f"the items of order {order_id} were already modified once")
        picked = self._pick_items(order_id, item_ids)
        if isinstance(picked, CallToolResult):
            return picked
        variants = self._new_variants(picked, new_variant_ids)
        if isinstance(variants, CallToolResult):
            return variants
        method = self._method(order["customer_id"], payment_method_id)
        if isinstance(method, CallToolResult):
            return method
        difference = round(sum(v["price"] for v in variants) - sum(i["price"] for i in picked.values()), 2)
        if method["kind"] == "gift_card" and difference > (method["balance"] or 0.0):
            return fail("insufficient_funds", f"gift card balance {method['balance']} is below {difference}")
        for item, variant in zip(picked.values(), variants, strict=True):
            self._db.execute(
                update(m.order_items)
                .where(m.order_items.c.item_id == item["item_id"])
                .values(variant_id=variant["variant_id"], price=variant["price"])
            )
        self._db.execute(update(m.orders).where(m.orders.c.order_id == order_id).values(items_modified=True))
        if difference:
            self._move_money(order_id, method, "charge" if difference > 0 else "refund", abs(difference))
        self._db.commit()
        return ok({"order_id": order_id, "price_difference": difference, "payment_method_id": payment_method_id})

    async def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> CallToolResult:
        """Pay a pending order with another of the customer's payment methods (refunds the old one)."""
        order = self._order(order_id, ("pending",))
        if isinstance(order, CallToolResult):
            return order
        if not payment_method_id.strip():
            return fail("invalid_argument", "payment_method_id is required")
        if payment_method_id == order["payment_method_id"]:
            return fail("invalid_argument", "that is already the order's payment method")
        new = self._method(order["customer_id"], payment_method_id)
        if isinstance(new, CallToolResult):
            return new
        old = self._method(order["customer_id"], order["payment_method_id"])
        if isinstance(old, CallToolResult):
            return old
        amount = self._paid(order_id)
        if new["kind"] == "gift_card" and amount > (new["balance"] or 0.0):
            return fail("insufficient_funds", f"gift card balance {new['balance']} is below the order total {amount}")
        self._db.execute(
            update(m.orders).where(m.orders.c.order_id == order_id).values(payment_method_id=payment_method_id)
        )
        self._move_money(order_id, old, "refund", amount)
        self._move_money(order_id, new, "charge", amount)
        self._db.commit()
        return ok({"order_id": order_id, "payment_method_id": payment_method_id, "amount": amount})

    async def modify_customer_address(
        self,
        customer_id: str,
        address_id: str,
        address1: str,
        address2: str,
        city: str,
        state: str,
        country: str,
        zip: str,
    ) -> CallToolResult:
        """Change one of an identified customer's saved addresses (orders keep their shipping address)."""
        if self._row(m.customers, m.customers.c.customer_id, customer_id) is None:
            return fail("not_found", f"customer {customer_id} not found")
        if customer_id not in self.identified:
            return fail("precondition_failed", "identify the customer first (find_customer_by_email or _by_name_zip)")
        address = self._row(m.addresses, m.addresses.c.address_id, address_id)
        if address is None or address["customer_id"] != customer_id:
            return fail("not_found", f"address {address_id} not found for customer {customer_id}")
        if not (address1.strip() and city.strip() and zip.strip()):
            return fail("invalid_argument", "address1, city and zip are required")
        values = {
            "address1": address1,
            "address2": address2,
            "city": city,
            "state": state,
            "country": country,
        }
        self._db.execute(update(m.addresses).where(m.addresses.c.address_id == address_id).values(zip=zip, **values))
        self._db.commit()
        return ok({"customer_id": customer_id, "address_id": address_id, "zip": zip, **values})

    async def return_delivered_items(
        self, order_id: str, item_ids: list[str], payment_method_id: str
    ) -> CallToolResult:
        """Request a return of delivered items; refund to the original payment method or a gift card."""
        order = self._order(order_id, ("delivered",))
        if isinstance(order, CallToolResult):
            return order
        if not self._within_window(order_id):
            return fail("not_allowed", f"order {order_id} was delivered more than {m.RETURN_WINDOW_DAYS} days ago")
        picked = self._pick_items(order_id, item_ids)
        if isinstance(picked, CallToolResult):
            return picked
        method = self._method(order["customer_id"], payment_method_id)
        if isinstance(method, CallToolResult):
            return method
        if payment_method_id != order["payment_method_id"] and method["kind"] != "gift_card":
            return fail("not_allowed", "refunds go to the original payment method or an existing gift card")
        refund = round(sum(item["price"] for item in picked.values()), 2)
        self._db.execute(
            insert(m.returns).values(
                order_id=order_id,
                item_ids=json.dumps(sorted(item_ids)),
                payment_method_id=payment_method_id,
                refund_amount=refund,
                status="requested",
                created_at=m.TODAY,
            )
        )
        self._db.execute(update(m.orders).where(m.orders.c.order_id == order_id).values(status="return requested"))
        self._db.commit()
        return ok({"order_id": order_id, "refund_amount": refund, "payment_method_id": payment_method_id})

    async def exchange_delivered_items(
        self, order_id: str, item_ids: list[str], new_variant_ids: list[str], payment_method_id: str
    ) -> CallToolResult:
        """Request an exchange of delivered items for other variants of the same product.

        The price difference is charged to, or refunded to, payment_method_id.
        """
        order = self._order(order_id, ("delivered",))
        if isinstance(order, CallToolResult):
            return order
        if not self._within_window(order_id):
            return fail("not_allowed", f"order {order_id} was delivered more than {m.RETURN_WINDOW_DAYS} days ago")
        picked = self._pick_items(order_id, item_ids)
        if isinstance(picked, CallToolResult):
            return picked
        variants = self._new_variants(picked, new_variant_ids)
        if isinstance(variants, CallToolResult):
            return variants
        method = self._method(order["customer_id"], payment_method_id)
        if isinstance(method, CallToolResult):
            return method
        difference = round(sum(v["price"] for v in variants) - sum(i["price"] for i in picked.values()), 2)
        if method["kind"] == "gift_card" and difference > (method["balance"] or 0.0):
            return fail("insufficient_funds", f"gift card balance {method['balance']} is below {difference}")
        ordered = sorted(zip(item_ids, new_variant_ids, strict=True))
        self._db.execute(
            insert(m.exchanges).values(
                order_id=order_id,
                item_ids=json.dumps([item for item, _ in ordered]),
                new_variant_ids=json.dumps([variant for _, variant in ordered]),
                payment_method_id=payment_method_id,
                price_difference=difference,
                status="requested",
                created_at=m.TODAY,
            )
        )
        self._db.execute(update(m.orders).where(m.orders.c.order_id == order_id).values(status="exchange requested"))
        self._db.commit()
        return ok({"order_id": order_id, "price_difference": difference, "payment_method_id": payment_method_id})

    async def transfer_to_human(self, summary: str, customer_id: str = "") -> CallToolResult:
        """Hand the conversation to a human agent, with a summary of the customer's request."""
        self._db.execute(
            insert(m.notes).values(customer_id=customer_id or None, kind="transfer", body=summary, created_at=m.TODAY)
        )
        self._db.commit()
        return ok({"transferred": True})

    async def calculate(self, expression: str) -> CallToolResult:
        """Evaluate an arithmetic expression (numbers, + - * / and parentheses), rounded to 2 decimals."""
        try:
            value = evaluate_arithmetic(expression)
        except (SyntaxError, ValueError, ZeroDivisionError) as exc:
            return fail("invalid_argument", f"cannot evaluate {expression!r}: {exc}")
        return ok({"result": round(value, 2)})


_factory = ServerFactory(
    "passhat-retail",
    "Retail customer-service backend (passhat sandbox). Follow the retail policy.",
    RetailBackend,
    TOOL_NAMES,
)


def build_server(engine: Engine) -> MCPServer:
    """A fresh retail MCP server acting on `engine`'s database, with its own session state."""
    return _factory.build(RetailBackend(engine.connect()))
