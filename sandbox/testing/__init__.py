"""Contract tests every sandbox domain runs: helpers a domain's own test suite calls on its domain."""

from passhat.sandbox.testing._collateral import (
    PROBES,
    CollateralDamageError,
    Probe,
    ProbeResult,
    Write,
    check_collateral,
    plan_writes,
    probe_scenario,
)
from passhat.sandbox.testing._contract import (
    LIGHT_PROPERTIES,
    NAMED_SHARE,
    PROPERTIES,
    DomainContractError,
    PropertyResult,
    check_domain,
)

__all__ = [
    "LIGHT_PROPERTIES",
    "NAMED_SHARE",
    "PROBES",
    "PROPERTIES",
    "CollateralDamageError",
    "DomainContractError",
    "Probe",
    "ProbeResult",
    "PropertyResult",
    "Write",
    "check_collateral",
    "check_domain",
    "plan_writes",
    "probe_scenario",
]
