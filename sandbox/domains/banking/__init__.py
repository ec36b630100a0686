"""The banking domain: account disputes (cards, transactions, disputes, provisional credit, fee waivers)."""

from __future__ import annotations

from passhat.sandbox.domain import Domain, Factor, declare_intents, two_factors
from passhat.sandbox.domains.banking import intents, models, seed, systems, tasks
from passhat.sandbox.domains.banking.systems.common import ERRORS

domain = Domain(
    name="banking",
    description="Retail banking customer service: card disputes, fraud, fee waivers and card services.",
    metadata=models.metadata,
    seed=seed.seed,
    task_types=declare_intents(tasks.TASK_TYPES, intents.INTENT_FIELDS),
    systems=(
        systems.customers.system,
        systems.accounts.system,
        systems.cards.system,
        systems.disputes.system,
    ),
    errors=ERRORS,
    identity=two_factors(
        Factor("find_customer_by_card", ("last_name", "card_last_four"), "customer_id"),
        Factor("verify_date_of_birth", ("date_of_birth",), "customer_id", carries="customer_id"),
    ),
    # The policy's "change nothing before the customer's yes": every write but a hand-off to a person, each
    # proposed with the values the customer recognises (an order number, an amount), where it has them.
    consent={
        "add_travel_notice": (),
        "block_card": (),
        "issue_provisional_credit": ("amount",),
        "lock_card": (),
        "open_dispute": ("amount",),
        "order_replacement_card": (),
        "transfer_between_accounts": ("amount",),
        "waive_fee": ("amount",),
    },
    instructions="Retail bank customer-service backend (passhat sandbox). Follow the banking policy.",
    policy_resource=("passhat.sandbox.domains.banking", "policy.md"),
)

__all__ = ["domain"]
