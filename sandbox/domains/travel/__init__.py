"""The travel domain: booking changes (dates, cabins, passengers), cancellations, bags, seats and compensation.

Seven systems on one MCP server (profiles, inventory, reservations, payments, baggage, compensation, support),
fourteen tables, and task types whose reference paths touch up to three systems, with chains of quoted changes.
"""

from __future__ import annotations

from passhat.sandbox.domain import Domain, Factor, declare_intents, one_factor
from passhat.sandbox.domains.travel import intents, models, seed, systems, tasks

domain = Domain(
    name="travel",
    description="Airline customer service: booking changes, cancellations, bags, seats and delay compensation.",
    metadata=models.metadata,
    seed=seed.seed,
    task_types=declare_intents(tasks.TASK_TYPES, intents.INTENT_FIELDS),
    systems=(
        systems.profiles.system,
        systems.inventory.system,
        systems.reservations.system,
        systems.payments.system,
        systems.baggage.system,
        systems.compensation.system,
        systems.support.system,
    ),
    errors=systems.ERRORS,
    identity=one_factor(
        Factor("find_customer_by_email", ("email",), "customer_id"),
        Factor("find_customer_by_reservation", ("reservation_id", "last_name"), "customer_id"),
    ),
    # The policy's "change nothing before the customer's yes": every write but a hand-off to a person, each
    # proposed with the values the customer recognises (an order number, an amount), where it has them.
    consent={
        "add_checked_bags": ("reservation_id", "bags"),
        "cancel_reservation": ("reservation_id",),
        "change_flight": ("reservation_id",),
        "change_seat": ("reservation_id", "seat"),
        "correct_passenger_name": ("reservation_id",),
        "issue_compensation": (),
        "issue_travel_credit": ("reservation_id",),
        "refund_reservation": ("reservation_id",),
        "split_reservation": ("reservation_id",),
        "upgrade_cabin": ("reservation_id",),
    },
    instructions="Airline customer-service backend (passhat sandbox). Follow the travel policy.",
    policy_resource=("passhat.sandbox.domains.travel", "policy.md"),
)

__all__ = ["domain"]
