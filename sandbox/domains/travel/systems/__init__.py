"""Travel's systems, each its own module with its tables and tools."""

from passhat.sandbox.domains.travel.systems import (
    baggage,
    compensation,
    inventory,
    payments,
    profiles,
    reservations,
    support,
)
from passhat.sandbox.domains.travel.systems.common import ERRORS

__all__ = ["ERRORS", "baggage", "compensation", "inventory", "payments", "profiles", "reservations", "support"]
