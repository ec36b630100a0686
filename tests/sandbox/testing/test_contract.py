"""check_domain: the domain contract as one property test; benchmark-grade domains get all of it, light ones part."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from passhat.checks import Check, all_of, no_other_writes, updated
from passhat.sandbox import Domain, System, SystemBackend, tool
from passhat.sandbox.domains.mock import domain as mock
from passhat.sandbox.testing import LIGHT_PROPERTIES, PROPERTIES, DomainContractError, check_domain


def _with_task(domain: Domain, name: str, **changes: Any) -> Domain:
    tasks = dict(domain.task_types)
    tasks[name] = dataclasses.replace(tasks[name], **changes)
    return dataclasses.replace(domain, task_types=tasks)


def _broken(domain: Domain, **kwargs: Any) -> set[str]:
    with pytest.raises(DomainContractError) as raised:
        check_domain(domain, scenarios_per_task_type=2, **kwargs)
    return {result.name for result in raised.value.broken}


def test_the_mock_domain_holds_every_property() -> None:
    results = check_domain(mock, scenarios_per_task_type=3)
    assert [result.name for result in results] == list(PROPERTIES)
    assert all(result.held for result in results)


def test_retail_holds_every_property() -> None:
    results = check_domain("retail", scenarios_per_task_type=1)
    assert {result.name for result in results} == set(PROPERTIES)


def test_a_light_domain_is_held_only_to_what_needs_no_reference_agent() -> None:
    light = dataclasses.replace(mock, grade="light")
    assert {result.name for result in check_domain(light, scenarios_per_task_type=2)} == LIGHT_PROPERTIES


def test_a_write_check_without_no_other_writes_is_named() -> None:
    def unguarded(intent: Any) -> Check:
        loan = intent["loans"][0]
        return updated("loans", {"loan_id": loan["loan_id"]}, {"due": loan["due"]})

    domain = _with_task(mock, "renew_loan", check=unguarded)
    assert "write_checks_guard" in _broken(domain, properties=["write_checks_guard"])


def test_a_write_task_a_do_nothing_agent_passes_is_named() -> None:
    domain = _with_task(mock, "renew_loan", check=lambda intent: all_of(no_other_writes()))
    assert _broken(domain, properties=["do_nothing_fails"]) == {"do_nothing_fails"}


class Crashing(SystemBackend):
    @tool("lookup")
    async def crash(self, key: str) -> dict[str, Any]:
        """A tool with a bug: it raises instead of refusing."""
        return {"value": {}[key]}


def test_a_tool_that_raises_is_named() -> None:
    domain = dataclasses.replace(mock, systems=(*mock.systems, System("broken", "A bug.", (), Crashing)))
    assert _broken(domain, properties=["tools_never_raise"]) == {"tools_never_raise"}


def test_a_failure_mode_the_plan_never_injects_is_named() -> None:
    # The inquiry's plan writes nothing, so a forced no_write never happens and the trial passes.
    domain = _with_task(mock, "loan_inquiry", failure_modes=frozenset({"empty_lookup", "unresolved", "no_write"}))
    domain = _with_task(domain, "renew_loan", failure_modes=frozenset({"empty_lookup"}))
    domain = _with_task(domain, "renew_several_loans", failure_modes=frozenset({"empty_lookup"}))
    assert _broken(domain, properties=["failure_modes"]) == {"failure_modes"}


def test_an_undeclared_error_type_is_named() -> None:
    errors = {k: v for k, v in mock.errors.items() if k != "member_not_verified"}
    domain = dataclasses.replace(mock, errors=errors)
    assert "errors_declared" in _broken(domain, properties=["errors_declared"])


def test_an_unknown_property_is_one_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown contract properties \\['speed'\\]"):
        check_domain(mock, properties=["speed"])


def test_the_mutation_property_prints_its_agreement_for_a_users_own_domain(capsys: pytest.CaptureFixture[str]) -> None:
    # The mock library desk stands for a user's own domain: it gets the mutation property without writing any.
    results = check_domain(mock, scenarios_per_task_type=1, properties=["mutations"])
    assert [result.name for result in results] == ["mutations"] and results[0].held
    printed = capsys.readouterr().out
    assert "mutation agreement, mock: agreement 100.0% of " in printed
    for mutation in ("reference", "sibling", "dropped_write", "extra_write", "wrong_value", "before_consent"):
        assert f"{mutation} " in results[0].detail


def test_a_check_that_lets_an_extra_write_pass_breaks_the_mutation_property() -> None:
    def unguarded(intent: Any) -> Check:
        loans = intent["loans"]
        return all_of(*(updated("loans", {"loan_id": loan["loan_id"]}, {"due": loan["due"]}) for loan in loans))

    domain = _with_task(mock, "renew_loan", check=unguarded)
    with pytest.raises(DomainContractError) as raised:
        check_domain(domain, scenarios_per_task_type=1, properties=["mutations"])
    (broken,) = raised.value.broken
    assert "extra_write: expected wrong_entity, got pass" in broken.detail


def test_without_a_consent_rule_a_write_before_the_yes_is_not_a_mutation_to_catch() -> None:
    unruled = dataclasses.replace(mock, consent={})
    (result,) = check_domain(unruled, scenarios_per_task_type=1, properties=["mutations"])
    assert result.held and "before_consent" not in result.detail
