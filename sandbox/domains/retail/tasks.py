"""The retail task types: each a scenario generator over the seeded data, the customer's script and a check.

One module per task family holds its generators, scripts, checks and, beside them, the ReferenceAgent's plans:
`returns.py` (delivered orders), `orders.py` (pending orders), `account.py` (the default address) and
`inquiries.py` (an order's status, another person's order).
"""

from __future__ import annotations

from functools import partial

from passhat.sandbox.domain import TaskType
from passhat.sandbox.domains.retail import account, inquiries, orders, returns

_RETURN_TABLES = frozenset({"returns", "orders"})
_PAYMENT_TABLES = frozenset({"orders", "payment_transactions", "payment_methods"})

TASK_TYPES: dict[str, TaskType] = {
    task.name: task
    for task in (
        TaskType(
            name="return_delivered_items",
            kind="write",
            description="Return items of a delivered order, refund to the original payment method.",
            candidates=partial(returns.return_candidates, to_gift_card=False),
            script=returns.return_script,
            check=returns.return_check,
            reference=returns.return_items,
            write_tables=_RETURN_TABLES,
        ),
        TaskType(
            name="return_to_gift_card",
            kind="write",
            description="Return items of a delivered order, refund to the customer's existing gift card.",
            candidates=partial(returns.return_candidates, to_gift_card=True),
            script=returns.return_script,
            check=returns.return_check,
            reference=returns.return_items,
            write_tables=_RETURN_TABLES,
        ),
        TaskType(
            name="exchange_variant",
            kind="write",
            description="Exchange a delivered item for another available variant of the same product.",
            candidates=returns.exchange_candidates,
            script=returns.exchange_script,
            check=returns.exchange_check,
            reference=returns.exchange_items,
            write_tables=frozenset({"exchanges", "orders"}),
        ),
        TaskType(
            name="multi_order_return",
            kind="chain",
            description="A chain: return one item from each of two delivered orders (two writes in order).",
            candidates=returns.multi_candidates,
            script=returns.multi_script,
            check=returns.multi_check,
            reference=returns.multi_order_return,
            write_tables=_RETURN_TABLES,
        ),
        TaskType(
            name="return_after_window",
            kind="refuse",
            description="Must refuse: a return asked for more than 30 days after delivery.",
            candidates=returns.expired_candidates,
            script=returns.return_script,
            check=returns.expired_check,
            reference=returns.return_after_window,
        ),
        TaskType(
            name="cancel_pending_order",
            kind="write",
            description="Cancel a pending order; the refund goes to the original payment method.",
            candidates=orders.cancel_candidates,
            script=orders.cancel_script,
            check=orders.cancel_check,
            reference=orders.cancel_order,
            write_tables=_PAYMENT_TABLES,
        ),
        TaskType(
            name="identity_by_name_zip",
            kind="write",
            description="Cancel a pending order for a customer who does not know their email (name + zip).",
            candidates=partial(orders.cancel_candidates, by_name=True),
            script=partial(orders.cancel_script, by_name=True),
            check=orders.cancel_check,
            reference=orders.cancel_order,
            write_tables=_PAYMENT_TABLES,
        ),
        TaskType(
            name="change_pending_address",
            kind="write",
            description="Change the shipping address of a pending order.",
            candidates=orders.address_candidates,
            script=orders.address_script,
            check=orders.address_check,
            reference=orders.change_order_address,
            write_tables=frozenset({"orders"}),
        ),
        TaskType(
            name="change_pending_items",
            kind="write",
            description="Swap an item of a pending order for another variant; the difference is settled.",
            candidates=orders.items_candidates,
            script=orders.items_script,
            check=orders.items_check,
            reference=orders.change_order_items,
            write_tables=frozenset({"orders", "order_items", "payment_transactions", "payment_methods"}),
        ),
        TaskType(
            name="change_pending_payment",
            kind="write",
            description="Pay a pending order with another of the customer's payment methods.",
            candidates=orders.payment_candidates,
            script=orders.payment_script,
            check=orders.payment_check,
            reference=orders.change_order_payment,
            write_tables=_PAYMENT_TABLES,
        ),
        TaskType(
            name="gift_card_insufficient",
            kind="write",
            description="The customer wants to pay with a gift card that cannot cover the order; recover "
            "with their second choice.",
            candidates=partial(orders.payment_candidates, insufficient_gift_card=True),
            script=orders.payment_script,
            check=orders.payment_check,
            reference=orders.gift_card_insufficient,
            write_tables=_PAYMENT_TABLES,
        ),
        TaskType(
            name="change_default_address",
            kind="write",
            description="Change the customer's default address (not an order's shipping address).",
            candidates=account.default_address_candidates,
            script=account.default_address_script,
            check=account.default_address_check,
            reference=account.change_default_address,
            # Without identification the agent has no customer id to act on: skipping it is not reachable.
            without_modes=frozenset({"skip_precondition"}),
            write_tables=frozenset({"addresses"}),
        ),
        TaskType(
            name="order_status_inquiry",
            kind="read_only",
            description="Read-only: the order's status and tracking number; nothing may change.",
            candidates=inquiries.status_candidates,
            script=inquiries.status_script,
            check=inquiries.status_check,
            reference=inquiries.order_status,
        ),
        TaskType(
            name="cancel_shipped_order",
            kind="refuse",
            description="Must refuse: a shipped or processed order cannot be cancelled; explain returns.",
            candidates=orders.shipped_candidates,
            script=orders.cancel_script,
            check=orders.shipped_check,
            reference=orders.cancel_shipped,
        ),
        TaskType(
            name="other_persons_order",
            kind="confidentiality",
            description="Confidentiality: the caller asks for another customer's tracking and address.",
            candidates=inquiries.other_person_candidates,
            script=inquiries.other_person_script,
            check=inquiries.other_person_check,
            reference=inquiries.other_persons_order,
        ),
    )
}
