"""The consulting IT & HR domain: eighteen systems and thirty tables, the task types and the policy (what every
domain must do, the contract in full included, is tested over all of them in test_every_domain.py)."""

from __future__ import annotations

import importlib
from collections import Counter

from passhat.sandbox import load_domain
from passhat.sandbox.domains.consulting import models

TASK_TYPES = {
    "onboard_consultant",
    "onboard_contractor",
    "offboard_employee",
    "role_change",
    "department_transfer",
    "contractor_extension",
    "client_project_access",
    "revoke_client_access",
    "laptop_replacement",
    "license_reclaim",
    "name_change",
    "leave_of_absence",
    "rehire",
    "reset_mfa",
    "access_inquiry",
    "cross_client_access",
    "other_employee_salary",
}


def test_eighteen_systems_each_in_its_own_module_own_thirty_tables() -> None:
    domain = load_domain("consulting")
    assert len(domain.systems) == 18
    modules = [system.backend.__module__ for system in domain.systems]
    assert len(set(modules)) == 18 and all(
        name.startswith("passhat.sandbox.domains.consulting.systems.") for name in modules
    )
    owned = Counter(table for system in domain.systems for table in system.tables)
    assert len(models.metadata.tables) == 30 and set(owned) == set(models.metadata.tables)
    assert set(owned.values()) == {1}  # every table in exactly one system
    assert all(len(system.tools) >= 2 for system in domain.systems)
    for system in domain.systems:  # each system's module declares it as `system`
        assert importlib.import_module(system.backend.__module__).system is system


def test_the_task_types_cover_provisioning_with_every_kind() -> None:
    tasks = load_domain("consulting").task_types
    assert set(tasks) == TASK_TYPES
    kinds = {task.kind for task in tasks.values()}
    assert {"write", "read_only", "refuse", "confidentiality", "chain"} <= kinds
    assert tasks["cross_client_access"].kind == "refuse" and tasks["other_employee_salary"].kind == "confidentiality"
    assert tasks["access_inquiry"].kind == "read_only"


def test_the_policy_states_the_rules() -> None:
    policy = load_domain("consulting").policy
    for rule in (
        "HR or the employee's manager",
        "approval record from that project's lead",
        "Engineers get code hosting",
        "revokes everything the same day and reclaims device and licenses",
        "Contractors expire on their end date",
        "Nobody gets access to another client's shares",
    ):
        assert rule in policy, rule
    for role in models.ROLES:  # the role table names every group and pool the tools enforce
        assert models.role_group(role) in policy and str(models.ROLES[role]["pool"]) in policy
