"""Two third-party checks: one a plain factory, one registered with @check under its own name."""

from __future__ import annotations

from decimal import Decimal

from passhat.checks import Check, CheckContext, Verdict, check, updated


def order_status(order_id: str, status: str) -> Check:
    """A plain factory: the registry registers it under its entry-point name."""
    return updated("orders", where={"id": order_id}, to={"status": status})


@check(name="tiny.refund_total")
def refund_total(order_id: str, amount: Decimal) -> Check:
    """A registered factory returning a plain callable."""

    def total_refunded(ctx: CheckContext) -> Verdict | bool:
        rows = [c.after for c in ctx.diff.for_table("refunds").inserted if c.after and c.after["order_id"] == order_id]
        return sum((Decimal(row["amount"]) for row in rows), Decimal(0)) == Decimal(str(amount))

    return total_refunded
