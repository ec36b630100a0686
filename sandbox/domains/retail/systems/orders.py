"""The orders system: orders, items, fulfilments, returns, exchanges and the money they move."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import insert, update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.retail import models as m
from passhat.sandbox.domains.retail.systems.common import CANCEL_REASONS, RetailSystem


class Orders(RetailSystem):
    """Orders of identified customers: pending ones change, delivered ones are returned or exchanged."""

    @tool("lookup")
    async def get_order(self, order_id: str) -> dict[str, Any]:
        """Details of an order: status, items with variant options and prices, payment method, shipping."""
        order = self.row(m.orders, order_id=order_id)
        if order is None:
            raise ToolError("not_found", f"order {order_id} not found")
        items = []
        for item in self._items(order_id).values():
            variant = self.row(m.variants, variant_id=item["variant_id"]) or {}
            product = self.row(m.products, product_id=item["product_id"]) or {}
            items.append({**item, "name": product.get("name"), "options": json.loads(variant.get("options", "{}"))})
        fulfilments = self.rows(m.fulfilments, order_id=order_id)
        return {**order, "items": items, "fulfilments": fulfilments}

    @tool("write")
    async def cancel_pending_order(self, order_id: str, reason: str) -> dict[str, Any]:
        """Cancel a pending order and refund it to its original payment method.

        reason: 'no longer needed' or 'ordered by mistake'.
        """
        order = self._order(order_id, ("pending",))
        if reason not in CANCEL_REASONS:
            raise ToolError("invalid_argument", f"reason must be one of: {', '.join(CANCEL_REASONS)}")
        method = self._method(order["customer_id"], order["payment_method_id"])
        amount = self._paid(order_id)
        self.db.execute(
            update(m.orders).where(m.orders.c.order_id == order_id).values(status="cancelled", cancel_reason=reason)
        )
        self._move_money(order_id, method, "refund", amount)
        self.db.commit()
        return {
            "order_id": order_id,
            "status": "cancelled",
            "refunded": amount,
            "to": method["payment_method_id"],
        }

    @tool("write")
    async def modify_pending_order_address(
        self, order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
    ) -> dict[str, Any]:
        """Change the shipping address of a pending order."""
        self._order(order_id, ("pending",))
        if not (address1.strip() and city.strip() and zip.strip()):
            raise ToolError("invalid_argument", "address1, city and zip are required")
        values = {
            "ship_address1": address1,
            "ship_address2": address2,
            "ship_city": city,
            "ship_state": state,
            "ship_country": country,
            "ship_zip": zip,
        }
        self.db.execute(update(m.orders).where(m.orders.c.order_id == order_id).values(**values))
        self.db.commit()
        return {"order_id": order_id, **values}

    @tool("write")
    async def modify_pending_order_items(
        self, order_id: str, item_ids: list[str], new_variant_ids: list[str], payment_method_id: str
    ) -> dict[str, Any]:
        """Swap items of a pending order for other variants of the same product (allowed once per order).

        The price difference is charged to, or refunded to, payment_method_id.
        """
        order = self._order(order_id, ("pending",))
        if order["items_modified"]:
            raise ToolError("not_allowed", f"the items of order {order_id} were already modified once")
        picked = self._pick_items(order_id, item_ids)
        variants = self._new_variants(picked, new_variant_ids)
        method = self._method(order["customer_id"], payment_method_id)
        difference = round(sum(v["price"] for v in variants) - sum(i["price"] for i in picked.values()), 2)
        if method["kind"] == "gift_card" and difference > (method["balance"] or 0.0):
            raise ToolError("insufficient_funds", f"gift card balance {method['balance']} is below {difference}")
        for item, variant in zip(picked.values(), variants, strict=True):
            self.db.execute(
                update(m.order_items)
                .where(m.order_items.c.item_id == item["item_id"])
                .values(variant_id=variant["variant_id"], price=variant["price"])
            )
        self.db.execute(update(m.orders).where(m.orders.c.order_id == order_id).values(items_modified=True))
        if difference:
            self._move_money(order_id, method, "charge" if difference > 0 else "refund", abs(difference))
        self.db.commit()
        return {"order_id": order_id, "price_difference": difference, "payment_method_id": payment_method_id}

    @tool("write")
    async def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> dict[str, Any]:
        """Pay a pending order with another of the customer's payment methods (refunds the old one)."""
        order = self._order(order_id, ("pending",))
        if not payment_method_id.strip():
            raise ToolError("invalid_argument", "payment_method_id is required")
        if payment_method_id == order["payment_method_id"]:
            raise ToolError("invalid_argument", "that is already the order's payment method")
        new = self._method(order["customer_id"], payment_method_id)
        old = self._method(order["customer_id"], order["payment_method_id"])
        amount = self._paid(order_id)
        if new["kind"] == "gift_card" and amount > (new["balance"] or 0.0):
            raise ToolError(
                "insufficient_funds", f"gift card balance {new['balance']} is below the order total {amount}"
            )
        self.db.execute(
            update(m.orders).where(m.orders.c.order_id == order_id).values(payment_method_id=payment_method_id)
        )
        self._move_money(order_id, old, "refund", amount)
        self._move_money(order_id, new, "charge", amount)
        self.db.commit()
        return {"order_id": order_id, "payment_method_id": payment_method_id, "amount": amount}

    @tool("write")
    async def return_delivered_items(
        self, order_id: str, item_ids: list[str], payment_method_id: str
    ) -> dict[str, Any]:
        """Request a return of delivered items; refund to the original payment method or a gift card."""
        order = self._order(order_id, ("delivered",))
        if not self._within_window(order_id):
            raise ToolError("not_allowed", f"order {order_id} was delivered more than {m.RETURN_WINDOW_DAYS} days ago")
        picked = self._pick_items(order_id, item_ids)
        method = self._method(order["customer_id"], payment_method_id)
        if payment_method_id != order["payment_method_id"] and method["kind"] != "gift_card":
            raise ToolError("not_allowed", "refunds go to the original payment method or an existing gift card")
        refund = round(sum(item["price"] for item in picked.values()), 2)
        self.db.execute(
            insert(m.returns).values(
                order_id=order_id,
                item_ids=json.dumps(sorted(item_ids)),
                payment_method_id=payment_method_id,
                refund_amount=refund,
                status="requested",
                created_at=m.TODAY,
            )
        )
        self.db.execute(update(m.orders).where(m.orders.c.order_id == order_id).values(status="return requested"))
        self.db.commit()
        return {"order_id": order_id, "refund_amount": refund, "payment_method_id": payment_method_id}

    @tool("write")
    async def exchange_delivered_items(
        self, order_id: str, item_ids: list[str], new_variant_ids: list[str], payment_method_id: str
    ) -> dict[str, Any]:
        """Request an exchange of delivered items for other variants of the same product.

        The price difference is charged to, or refunded to, payment_method_id.
        """
        order = self._order(order_id, ("delivered",))
        if not self._within_window(order_id):
            raise ToolError("not_allowed", f"order {order_id} was delivered more than {m.RETURN_WINDOW_DAYS} days ago")
        picked = self._pick_items(order_id, item_ids)
        variants = self._new_variants(picked, new_variant_ids)
        method = self._method(order["customer_id"], payment_method_id)
        difference = round(sum(v["price"] for v in variants) - sum(i["price"] for i in picked.values()), 2)
        if method["kind"] == "gift_card" and difference > (method["balance"] or 0.0):
            raise ToolError("insufficient_funds", f"gift card balance {method['balance']} is below {difference}")
        ordered = sorted(zip(item_ids, new_variant_ids, strict=True))
        self.db.execute(
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
        self.db.execute(update(m.orders).where(m.orders.c.order_id == order_id).values(status="exchange requested"))
        self.db.commit()
        return {"order_id": order_id, "price_difference": difference, "payment_method_id": payment_method_id}


system = System(
    "orders",
    "Orders, their items and fulfilments, returns, exchanges and payment transactions.",
    ("orders", "order_items", "fulfilments", "returns", "exchanges", "payment_transactions"),
    Orders,
)
