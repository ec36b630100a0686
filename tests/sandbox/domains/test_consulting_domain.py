"""The consulting IT & HR domain: eighteen systems and thirty tables, the task types, the contract in full."""

from __future__ import annotations

import importlib
from collections import Counter

import pytest

from passhat.sandbox import Sandbox, load_domain
from passhat.sandbox.domains.consulting import models
from passhat.sandbox.testing import PROPERTIES, check_domain

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


def test_every_tool_is_typed_and_documented_and_says_its_system(consulting: Sandbox) -> None:
    import asyncio

    from passhat.sandbox.trial import connect

    async def listed() -> list[object]:
        database = consulting.memory_copy()
        try:
            async with connect(consulting.domain, database, "memory") as client:
                assert client is not None
                return list((await client.list_tools()).tools)
        finally:
            database.close()

    tools = asyncio.run(listed())
    assert len(tools) == len(consulting.domain.tool_systems) >= 70
    for tool in tools:
        system = consulting.domain.tool_systems[tool.name]  # type: ignore[attr-defined]
        assert tool.description.startswith(f"[{system}] ") and len(tool.description) > 30  # type: ignore[attr-defined]
        for name, spec in tool.input_schema.get("properties", {}).items():  # type: ignore[attr-defined]
            assert spec.get("type") in ("string", "integer"), (tool, name)


def test_the_task_types_are_the_issues_with_every_kind() -> None:
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


def test_every_task_type_has_distinct_scenarios_from_the_seeded_data(consulting: Sandbox) -> None:
    for name in consulting.domain.task_types:
        scenarios = consulting.scenarios(name, 20)
        assert len(scenarios) >= 3, name
        assert len({repr(sorted(s.intent.items())) for s in scenarios}) == len(scenarios), name


@pytest.mark.slow
def test_the_default_size_is_bigger_and_gives_twenty_scenarios_per_task_type() -> None:
    with Sandbox("consulting", size="default") as big:
        assert len(big.initial.table("employees").rows) > 300
        for name in big.domain.task_types:
            assert len(big.scenarios(name, 20)) == 20, name


def test_seeds_are_deterministic_and_differ_between_seeds() -> None:
    with (
        Sandbox("consulting", seed=3) as one,
        Sandbox("consulting", seed=3) as two,
        Sandbox("consulting", seed=4) as three,
    ):
        assert one.initial == two.initial and one.initial != three.initial
        assert [s.intent for s in one.scenarios("offboard_employee", 5)] == [
            s.intent for s in two.scenarios("offboard_employee", 5)
        ]


def test_an_unknown_size_is_one_clear_error() -> None:
    from passhat.sandbox import DomainError

    with pytest.raises(DomainError, match="domain 'consulting' has no seed size 'huge'"):
        Sandbox("consulting", size="huge")


@pytest.mark.slow
def test_the_domain_contract_holds_in_full() -> None:
    results = check_domain("consulting")
    assert [r.name for r in results] == list(PROPERTIES) and all(r.held for r in results)
