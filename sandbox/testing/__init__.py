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
from passhat.sandbox.testing._mutations import MUTATIONS, Mutated, mutate_scenario

__all__ = [
    "LIGHT_PROPERTIES",
    "MUTATIONS",
    "NAMED_SHARE",
    "PROBES",
    "PROPERTIES",
    "CollateralDamageError",
    "DomainContractError",
    "Mutated",
    "Probe",
    "ProbeResult",
    "PropertyResult",
    "Write",
    "check_collateral",
    "check_domain",
    "mutate_scenario",
    "plan_writes",
    "probe_scenario",
]
