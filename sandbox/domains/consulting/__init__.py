"""The consulting IT & HR provisioning domain: eighteen backend systems, thirty tables, seventeen task types.

The hardest of passhat's domains: a requester (HR or the employee's manager) asks for changes to another
employee's access, and the agent must know which of eighteen systems holds each fact, follow HRIS as the system
of record, and make long chains of writes in order (every write also leaves an audit-log row).
"""

from __future__ import annotations

from passhat.sandbox.domain import Domain, Factor, declare_intents, requester_authority
from passhat.sandbox.domains.consulting import intents, models, seed, systems, tasks

domain = Domain(
    name="consulting",
    description="A consulting firm's IT & HR provisioning desk: onboarding, offboarding, moves and access.",
    metadata=models.metadata,
    seed=seed.seed,
    task_types=declare_intents(tasks.TASK_TYPES, intents.INTENT_FIELDS),
    systems=systems.SYSTEMS,
    errors=systems.ERRORS,
    identity=requester_authority(
        Factor("check_requester_authority", ("employee_id",), "employee_id", carries="requester_id"),
        Factor(
            "verify_requester",
            ("requester_id", "requester_email"),
            "employee_id",
            arguments={"requester_id": "employee_id", "requester_email": "work_email"},
        ),
    ),
    # "Every change is confirmed once with the requester": every write of every system, after the chain's one
    # proposal (which lists each step).
    consent={name: () for system in systems.SYSTEMS for name, kind in system.tools.items() if kind == "write"},
    instructions="Consulting IT & HR provisioning backend (passhat sandbox): eighteen systems. Follow the policy.",
    policy_resource=("passhat.sandbox.domains.consulting", "policy.md"),
)

__all__ = ["domain"]
