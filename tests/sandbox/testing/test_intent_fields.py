"""The contract's intent_fields property fails a domain whose task types leave a field undeclared or mistyped."""

from __future__ import annotations

import dataclasses

import pytest

from passhat.sandbox.domain import Domain, free_text, in_column
from passhat.sandbox.domains.mock import domain as mock
from passhat.sandbox.testing import DomainContractError, check_domain


def _with_fields(task_type: str, fields: dict[str, object]) -> Domain:
    task = dataclasses.replace(mock.task_type(task_type), intent_fields=fields)
    return dataclasses.replace(mock, task_types={**mock.task_types, task_type: task})


def test_the_shipped_declarations_hold() -> None:
    [result] = check_domain(mock, properties=["intent_fields"])
    assert result.held and "3 task types declare" in result.detail


def test_an_undeclared_field_breaks_the_property_by_name() -> None:
    fields = {k: v for k, v in mock.task_type("loan_inquiry").intent_fields.items() if k != "title"}
    with pytest.raises(DomainContractError, match="loan_inquiry: the intent's field title is not declared"):
        check_domain(_with_fields("loan_inquiry", fields), properties=["intent_fields"])


def test_a_mistyped_field_or_an_unknown_column_breaks_the_property() -> None:
    fields = {**mock.task_type("loan_inquiry").intent_fields, "title": free_text(type="int")}
    fields["email"] = in_column("members.mail")
    with pytest.raises(DomainContractError) as error:
        check_domain(_with_fields("loan_inquiry", fields), properties=["intent_fields"])
    assert "field title is declared int, but holds" in str(error.value)
    assert "names 'members.mail', not a column of the domain's tables" in str(error.value)


def test_a_benchmark_domain_must_declare_every_task_type_and_a_light_one_may_declare_none() -> None:
    bare = _with_fields("renew_loan", {})
    with pytest.raises(DomainContractError, match="renew_loan: declares no intent fields"):
        check_domain(bare, properties=["intent_fields"])
    [result] = check_domain(dataclasses.replace(bare, grade="light"), properties=["intent_fields"])
    assert result.held
