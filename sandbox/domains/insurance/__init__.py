"""The insurance domain: auto-insurance claim intake (policies, coverages, claims, inspections, rentals).

Seven systems over twelve tables and a notes table; fourteen task types from first notice of loss to
total-loss settlement, with chains where a skipped step is refused by the backend.
"""

from __future__ import annotations

from passhat.sandbox.domain import Domain, Factor, declare_intents, one_factor
from passhat.sandbox.domains.insurance import intents, models, seed, systems, tasks

domain = Domain(
    name="insurance",
    description="Auto-insurance claim intake: losses, claims, inspections, rentals, total losses, policy changes.",
    metadata=models.metadata,
    seed=seed.seed,
    task_types=declare_intents(tasks.TASK_TYPES, intents.INTENT_FIELDS),
    systems=systems.SYSTEMS,
    errors=systems.ERRORS,
    identity=one_factor(
        Factor("find_policyholder_by_email", ("email",), "policyholder_id"),
        Factor(
            "find_policyholder_by_policy",
            ("policy_number", "last_name"),
            "policyholder_id",
            arguments={"policy_number": "policy_id"},
        ),
    ),
    # The policy's "change nothing before the customer's yes": every write but a hand-off to a person, each
    # proposed with the values the customer recognises (an order number, an amount), where it has them.
    consent={
        "add_claim_party": (),
        "add_driver": (),
        "assign_adjuster": (),
        "authorize_rental": ("daily_rate", "days"),
        "file_claim": (),
        "issue_total_loss_payment": ("amount",),
        "record_total_loss_valuation": (),
        "remove_vehicle": (),
        "report_incident": (),
        "schedule_inspection": ("scheduled_on",),
        "update_claim_contact": (),
    },
    instructions="Auto-insurance claims backend (passhat sandbox). Follow the claims-intake policy.",
    policy_resource=("passhat.sandbox.domains.insurance", "policy.md"),
)

__all__ = ["domain"]
