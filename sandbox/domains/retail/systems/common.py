"""What every retail system shares: row lookups and the order, item, payment and money rules.

Each retail system (`accounts`, `catalog`, `orders`, `support`) is a `RetailSystem`: one trial's connection
and the session (who was identified), with the backend's rules as helpers that raise `ToolError`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import insert, select, update

from passhat.sandbox.domain import SystemBackend, ToolError
from passhat.sandbox.domains.retail import models as m

CANCEL_REASONS = m.CANCEL_REASONS


def days_since(date: str) -> int:
    """Days from an ISO date to the sandbox's fixed today."""
    return (dt.date.fromisoformat(m.TODAY) - dt.date.fromisoformat(date[:10])).days


class RetailSystem(SystemBackend):
    """Base of the retail systems: one trial's connection, the shared session, and the backend's rules."""

    def _order(self, order_id: str, statuses: tuple[str, ...]) -> dict[str, Any]:
        order = self.row(m.orders, order_id=order_id)
        if order is None:
            raise ToolError("not_found", f"order {order_id} not found")
        if order["customer_id"] not in self.session.identified:
            raise ToolError(
                "precondition_failed",
                "the order's customer has not been identified in this session: use find_customer_by_email "
                "or find_customer_by_name_zip first",
            )
        if order["status"] not in statuses:
            raise ToolError("not_allowed", f"order {order_id} is {order['status']}; this needs {' or '.join(statuses)}")
        return order

    def _items(self, order_id: str) -> dict[str, dict[str, Any]]:
        return {row["item_id"]: row for row in self.rows(m.order_items, order_id=order_id)}

    def _method(self, customer_id: str, payment_method_id: str) -> dict[str, Any]:
        method = self.row(m.payment_methods, payment_method_id=payment_method_id)
        if method is None or method["customer_id"] != customer_id:
            raise ToolError("not_found", f"payment method {payment_method_id} not found for this customer")
        return method

    def _pick_items(self, order_id: str, item_ids: list[str]) -> dict[str, dict[str, Any]]:
        if not item_ids:
            raise ToolError("invalid_argument", "item_ids must list at least one item")
        if len(set(item_ids)) != len(item_ids):
            raise ToolError("invalid_argument", "item_ids lists an item twice")
        items = self._items(order_id)
        missing = [item for item in item_ids if item not in items]
        if missing:
            raise ToolError("not_found", f"items {', '.join(missing)} are not in order {order_id}")
        return {item: items[item] for item in item_ids}

    def _new_variants(self, picked: dict[str, dict[str, Any]], new_variant_ids: list[str]) -> list[dict[str, Any]]:
        if len(new_variant_ids) != len(picked):
            raise ToolError("invalid_argument", "new_variant_ids must have one variant per item in item_ids")
        chosen = []
        for item, variant_id in zip(picked.values(), new_variant_ids, strict=True):
            variant = self.row(m.variants, variant_id=variant_id)
            if variant is None:
                raise ToolError("not_found", f"variant {variant_id} not found")
            if variant["product_id"] != item["product_id"]:
                raise ToolError(
                    "not_allowed",
                    f"variant {variant_id} is not a variant of item {item['item_id']}'s product",
                )
            if variant_id == item["variant_id"]:
                raise ToolError("invalid_argument", f"variant {variant_id} is the item's current variant")
            if not variant["available"]:
                raise ToolError("not_allowed", f"variant {variant_id} is not available")
            chosen.append(variant)
        return chosen

    def _move_money(self, order_id: str, method: dict[str, Any], kind: str, amount: float) -> None:
        self.db.execute(
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
            self.db.execute(
                update(m.payment_methods)
                .where(m.payment_methods.c.payment_method_id == method["payment_method_id"])
                .values(balance=round((method["balance"] or 0.0) + delta, 2))
            )

    def _within_window(self, order_id: str) -> bool:
        delivered = self.db.execute(
            select(m.fulfilments.c.delivered_at).where(m.fulfilments.c.order_id == order_id)
        ).scalar()
        return delivered is not None and days_since(delivered) <= m.RETURN_WINDOW_DAYS

    def _paid(self, order_id: str) -> float:
        rows = self.db.execute(
            select(m.payment_transactions.c.kind, m.payment_transactions.c.amount).where(
                m.payment_transactions.c.order_id == order_id
            )
        )
        total: float = sum(amount if kind == "charge" else -amount for kind, amount in rows)
        return round(total, 2)
