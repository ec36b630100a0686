"""The retail domain: refunds, returns, exchanges and order changes (few entities, short chains)."""

from __future__ import annotations

from passhat.sandbox.domain import Domain, Factor, declare_intents, one_factor
from passhat.sandbox.domains.retail import intents, models, seed, systems, tasks

domain = Domain(
    name="retail",
    description="Online retail customer service: returns, exchanges, cancellations and order changes.",
    metadata=models.metadata,
    seed=seed.seed,
    task_types=declare_intents(tasks.TASK_TYPES, intents.INTENT_FIELDS),
    systems=(systems.accounts.system, systems.catalog.system, systems.orders.system, systems.support.system),
    identity=one_factor(
        Factor("find_customer_by_email", ("email",), "customer_id"),
        Factor("find_customer_by_name_zip", ("first_name", "last_name", "zip"), "customer_id"),
    ),
    # The policy's "change nothing before the customer's yes": every write but a hand-off to a person, each
    # proposed with the values the customer recognises (an order number, an amount), where it has them.
    consent={
        "cancel_pending_order": ("order_id",),
        "exchange_delivered_items": ("order_id",),
        "modify_pending_order_address": ("order_id",),
        "modify_pending_order_items": ("order_id",),
        "modify_pending_order_payment": ("order_id",),
        "return_delivered_items": ("order_id",),
        "modify_customer_address": (),
    },
    instructions="Retail customer-service backend (passhat sandbox). Follow the retail policy.",
    policy_resource=("passhat.sandbox.domains.retail", "policy.md"),
)

__all__ = ["domain"]
