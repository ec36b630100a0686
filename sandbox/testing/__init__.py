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

__all__ = [
    "PROBES",
    "CollateralDamageError",
    "Probe",
    "ProbeResult",
    "Write",
    "check_collateral",
    "plan_writes",
    "probe_scenario",
]
