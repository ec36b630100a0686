"""The bookkeeping the retail backend does alongside an action, declared once for every check that expects it.

A correct action must never fail its check for its own bookkeeping, and a check must still catch bookkeeping
gone wrong. Money moves the same way whichever tool moves it (`RetailBackend._move_money`): a row in
`payment_transactions`, and for a gift card a new balance. `settlement` computes what one movement should
leave behind from the starting state (at scenario generation, into the intent); `money_moved` turns those
expectations into checks. Cancelling, changing items and changing the payment method all use the pair.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from passhat.checks import Check, inserted, updated


def settlement(method: Mapping[str, Any], kind: str, amount: float) -> dict[str, Any]:
    """What one money movement (a `charge` or a `refund` of `amount` on `method`) should leave behind."""
    expected: dict[str, Any] = {
        "payment_method_id": method["payment_method_id"],
        "kind": kind,
        "amount": round(amount, 2),
    }
    if method["kind"] == "gift_card":
        delta = amount if kind == "refund" else -amount
        expected["balance_after"] = round((method["balance"] or 0.0) + delta, 2)
    return expected


def money_moved(order_id: str, settlements: Sequence[Mapping[str, Any]]) -> list[Check]:
    """Checks for the money movements on an order: each transaction row, and each gift card's new balance."""
    checks: list[Check] = []
    for expected in settlements:
        method_id = expected["payment_method_id"]
        row = {"order_id": order_id, "kind": expected["kind"], "amount": expected["amount"]}
        checks.append(inserted("payment_transactions", {**row, "payment_method_id": method_id}))
        if "balance_after" in expected:
            checks.append(
                updated("payment_methods", {"payment_method_id": method_id}, {"balance": expected["balance_after"]})
            )
    return checks
