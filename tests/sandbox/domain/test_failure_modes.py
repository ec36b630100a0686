"""A task type's failure modes follow from its kind: a new domain names only the exceptions."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from passhat.sandbox.domain import (
    FAILURE_MODES,
    KIND_FAILURE_MODES,
    DomainError,
    TaskType,
    available_domains,
    load_domain,
)
from passhat.sandbox.domains.mock import domain as mock


def _task(**fields: Any) -> TaskType:
    # The mock's task carries its derived modes: start from none given.
    return dataclasses.replace(mock.task_types["renew_loan"], **{"failure_modes": frozenset(), **fields})


def test_a_task_that_writes_can_fail_every_way_and_one_that_does_not_only_conversationally() -> None:
    assert _task(kind="write").failure_modes == frozenset(FAILURE_MODES)
    assert _task(kind="chain").failure_modes == frozenset(FAILURE_MODES)
    for kind in ("read_only", "refuse", "confidentiality"):
        assert _task(kind=kind).failure_modes == {"empty_lookup", "unresolved"}, kind
    assert set(KIND_FAILURE_MODES) == {"write", "chain", "read_only", "refuse", "confidentiality"}


def test_modes_that_cannot_happen_are_left_out_and_an_explicit_list_wins() -> None:
    assert _task(kind="write", without_modes=frozenset({"wrong_entity"})).failure_modes == (
        frozenset(FAILURE_MODES) - {"wrong_entity"}
    )
    assert _task(kind="write", failure_modes=frozenset({"no_write"})).failure_modes == {"no_write"}


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"without_modes": frozenset({"wrong_entitty"})}, "unknown failure modes ['wrong_entitty']"),
        ({"failure_modes": frozenset({"typo"})}, "unknown failure modes ['typo']"),
        ({"kind": "lookup"}, "has kind 'lookup'; known: write, chain, read_only"),
    ],
)
def test_a_misspelt_mode_or_kind_is_refused_by_name(fields: dict[str, Any], named: str) -> None:
    with pytest.raises(DomainError, match=named.replace("[", r"\[").replace("]", r"\]")):
        _task(**fields)


@pytest.mark.parametrize("name", available_domains())
def test_every_available_domains_task_types_follow_their_kind_but_for_named_exceptions(name: str) -> None:
    for task in load_domain(name).task_types.values():
        assert task.failure_modes == KIND_FAILURE_MODES[task.kind] - task.without_modes, task.name
