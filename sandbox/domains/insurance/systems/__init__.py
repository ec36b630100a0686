"""The insurance systems, one module each."""

from passhat.sandbox.domains.insurance.systems import (
    adjusting,
    claims,
    customers,
    payments,
    policies,
    rentals,
    support,
)
from passhat.sandbox.domains.insurance.systems.common import ERRORS, active_on

SYSTEMS = (
    customers.system,
    policies.system,
    claims.system,
    adjusting.system,
    rentals.system,
    payments.system,
    support.system,
)

__all__ = [
    "ERRORS",
    "SYSTEMS",
    "active_on",
    "adjusting",
    "claims",
    "customers",
    "payments",
    "policies",
    "rentals",
    "support",
]
