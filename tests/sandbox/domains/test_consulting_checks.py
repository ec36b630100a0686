"""Consulting checks catch the wrong entity, a missing step, an extra write; a skipped chain step is a precondition."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Iterator

import pytest

from passhat.sandbox import FlawConfig, ReferenceAgent, ReferenceRun, Sandbox, TrialResult, run_trials
from passhat.sandbox.domains.consulting import changes, onboarding, steps
from passhat.sandbox.domains.consulting.effects import Call

Plan = Callable[[ReferenceRun], Awaitable[None]]


async def _trials(sandbox: Sandbox, task: str, flaws: FlawConfig, count: int = 1) -> list[TrialResult]:
    return await run_trials(sandbox, sandbox.scenarios(task, count), 1, ReferenceAgent.factory(flaws))


def _with_calls(edit: Callable[[list[Call]], list[Call]]) -> Plan:
    """The onboarding plan, but running `edit(calls)` instead of the policy's calls."""

    async def plan(run: ReferenceRun) -> None:
        employee = await steps.subject(run)
        devices = await steps.read(run, "get_employee_devices", employee_id=employee["employee_id"])
        calls = onboarding.onboarding_calls(employee, devices["reserved"][0]["device_id"], None)
        await steps.run_steps(run, edit(calls), "onboard")
        await run.finish("Done.")

    return plan


def _skip_account(calls: list[Call]) -> list[Call]:
    return [{k: v for k, v in c.items() if k != "needs"} for c in calls]  # no directory account first


def _extra_group(calls: list[Call]) -> list[Call]:
    return [*calls, onboarding.member(calls[0]["args"]["employee_id"], "grp-prj-nor1")]


VARIANTS: dict[str, Callable[[list[Call]], list[Call]]] = {
    "missing_step": lambda calls: calls[:-1],
    "extra_write": _extra_group,
    "skipped_step": _skip_account,
}


@pytest.fixture(scope="module")
def variants(consulting: Sandbox) -> Iterator[Sandbox]:
    """The consulting domain with onboarding plans that go wrong on purpose, each as its own task type."""
    domain = consulting.domain
    base = domain.task_type("onboard_consultant")
    extra = {name: dataclasses.replace(base, name=name, reference=_with_calls(edit)) for name, edit in VARIANTS.items()}
    with Sandbox(dataclasses.replace(domain, task_types={**domain.task_types, **extra}), size="small") as sandbox:
        yield sandbox


@pytest.mark.parametrize(
    ("task", "mode", "label"),
    [
        ("revoke_client_access", "wrong_entity", "wrong_entity"),
        ("role_change", "wrong_entity", "wrong_entity"),
        ("onboard_consultant", "error_not_retried", "tool_usage.error_not_retried"),
        ("offboard_employee", "no_write", "no_write"),
        ("name_change", "skip_precondition", "tool_usage.precondition"),
        ("other_employee_salary", "empty_lookup", "tool_usage.empty_lookup"),
    ],
)
async def test_a_forced_failure_fails_the_check_and_is_named(
    consulting: Sandbox, task: str, mode: str, label: str
) -> None:
    results = await _trials(consulting, task, FlawConfig.forced(mode), 2)
    assert results and all(not r.passed for r in results)
    assert {r.signature.label for r in results if r.signature} == {label}


async def test_a_missing_step_fails_naming_the_rows_it_should_have_written(variants: Sandbox) -> None:
    (result,) = await _trials(variants, "missing_step", FlawConfig.off())
    assert not result.passed
    missing = [d.message for d in result.record.verdict.failures() if d.check == "inserted"]
    assert any("audit_log" in text for text in missing) and len(missing) >= 2


async def test_an_extra_write_fails_as_collateral(variants: Sandbox) -> None:
    (result,) = await _trials(variants, "extra_write", FlawConfig.off())
    assert not result.passed
    unexpected = [d.message for d in result.record.verdict.failures() if d.check == "no_other_writes"]
    assert any("group_memberships" in text for text in unexpected)


async def test_a_skipped_chain_step_is_refused_as_a_precondition_by_the_tool_that_needed_it(variants: Sandbox) -> None:
    (result,) = await _trials(variants, "skipped_step", FlawConfig.off())
    refused = [c for c in result.record.tool_calls if c.outcome == "error"]
    assert refused[0].name == "create_mailbox" and refused[0].error_type == "no_directory_account"
    assert result.signature is not None and result.signature.label == "tool_usage.precondition"


async def test_longer_chains_fail_more_often_at_the_default_rates(consulting: Sandbox) -> None:
    rates = FlawConfig(rates={"no_write": 0.05, "error_not_retried": 0.05}, vary_by_scenario=False)
    long = await _trials(consulting, "onboard_consultant", rates, 6)
    short = await _trials(consulting, "license_reclaim", rates, 6)
    assert sum(r.passed for r in long) < sum(r.passed for r in short)


def test_the_checks_expect_one_audit_row_per_write() -> None:
    calls = changes.extension_calls({"employee_id": "E10100", "end_date": "2026-07-01"}, "2026-09-29")
    spec = changes.check({"requester_id": "E10002", "calls": calls}).spec  # type: ignore[attr-defined]
    parts = [part["$check"] for part in spec["args"]["checks"]]
    audits = [p["args"]["match"] for p in parts if p["check"] == "inserted" and p["args"]["table"] == "audit_log"]
    assert sorted(a["action"] for a in audits) == sorted(["extend_contract", "set_account_expiry", "set_badge_expiry"])
    assert {a["actor_id"] for a in audits} == {"E10002"} and parts[-1]["check"] == "no_other_writes"
