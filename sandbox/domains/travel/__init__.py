"""The travel domain: booking changes (dates, cabins, passengers), cancellations, bags, seats and compensation.

Seven systems on one MCP server (profiles, inventory, reservations, payments, baggage, compensation, support),
fourteen tables, and task types whose reference paths touch up to three systems, with chains of quoted changes.
"""

from __future__ import annotations

from passhat.sandbox.domain import Domain, Factor, one_factor
from passhat.sandbox.domains.travel import models, seed, systems, tasks

domain = Domain(
    name="travel",
    description="Airline customer service: booking changes, cancellations, bags, seats and delay compensation.",
    metadata=models.metadata,
    seed=seed.seed,
    task_types=tasks.TASK_TYPES,
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
    # proposed with its identifiers.
    consent=dict.fromkeys(
        (
            "add_checked_bags",
            "cancel_reservation",
            "change_flight",
            "change_seat",
            "correct_passenger_name",
            "issue_compensation",
            "issue_travel_credit",
            "refund_reservation",
            "split_reservation",
            "upgrade_cabin",
        ),
        (),
    ),
    instructions="Airline customer-service backend (passhat sandbox). Follow the travel policy.",
    policy_resource=("passhat.sandbox.domains.travel", "policy.md"),
)

__all__ = ["domain"]
