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
    instructions="Retail customer-service backend (passhat sandbox). Follow the retail policy.",
    policy_resource=("passhat.sandbox.domains.retail", "policy.md"),
)

__all__ = ["domain"]
