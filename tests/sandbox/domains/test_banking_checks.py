"""Banking checks grade what the backend holds: the right rows, nothing missing, nothing else; and the
ReferenceAgent's chains fail the way the classifier names."""

from __future__ import annotations

import asyncio

from passhat.sandbox import FlawConfig, ReferenceAgent, Sandbox, run_trials
from passhat.sandbox.domains.banking import card_services, charges, fees, fraud
from tests.sandbox.domains.banking_trial import grade, must, open_trial, verify


async def _chain(client: object, intent: dict, *, replace: bool = True) -> None:
    await must(client, "block_card", card_id=intent["card_id"], reason="fraud")  # type: ignore[arg-type]
    opened = await must(
        client,  # type: ignore[arg-type]
        "open_dispute",
        transaction_id=intent["transaction_id"],
        reason="unauthorized",
        amount=intent["amount"],
    )
    if intent["credit"]:
        await must(client, "issue_provisional_credit", dispute_id=opened["dispute_id"], amount=intent["amount"])  # type: ignore[arg-type]
    if replace:
        await must(client, "order_replacement_card", card_id=intent["card_id"], reason="fraud")  # type: ignore[arg-type]


async def test_the_full_unauthorized_chain_passes_and_a_missing_replacement_fails(banking: Sandbox) -> None:
    intent = dict(next(s.intent for s in banking.scenarios("unauthorized_charge", 50) if s.intent["credit"]))
    async with open_trial(banking) as (client, database):
        await verify(client, intent)
        await _chain(client, intent)
        assert grade(banking, database, fraud.check(intent)).passed
    async with open_trial(banking) as (client, database):
        await verify(client, intent)
        await _chain(client, intent, replace=False)
        verdict = grade(banking, database, fraud.check(intent))
    assert not verdict.passed
    assert {d.table for d in verdict.failures() if d.table} == {"card_replacements"}


async def test_disputing_the_original_of_a_duplicate_pair_is_the_wrong_entity(banking: Sandbox) -> None:
    intent = banking.scenarios("duplicate_charge", 1)[0].intent
    async with open_trial(banking) as (client, database):
        await verify(client, intent)
        await must(
            client, "open_dispute", transaction_id=intent["original_id"], reason="duplicate", amount=intent["amount"]
        )
        verdict = grade(banking, database, charges.dispute_check(intent))
    assert not verdict.passed
    wrong = [d for d in verdict.failures() if d.check == "inserted" and d.field == "transaction_id"]
    assert [(d.expected, d.actual) for d in wrong] == [(intent["transaction_id"], intent["original_id"])]


async def test_an_unrequested_lock_beside_a_replacement_is_caught(banking: Sandbox) -> None:
    intent = banking.scenarios("replace_damaged_card", 1)[0].intent
    async with open_trial(banking) as (client, database):
        await verify(client, intent)
        await must(client, "order_replacement_card", card_id=intent["card_id"], reason="damaged")
        assert grade(banking, database, card_services.replace_check(intent)).passed
        await must(client, "lock_card", card_id=intent["card_id"], reason="customer_request")
        verdict = grade(banking, database, card_services.replace_check(intent))
    assert not verdict.passed
    assert {(d.check, d.table) for d in verdict.failures() if d.table} == {("no_other_writes", "cards")}


async def test_waiving_another_fee_than_the_one_asked_fails_on_each_row(banking: Sandbox) -> None:
    intent = banking.scenarios("fee_reversal", 1)[0].intent
    with banking.template.connect() as connection:
        from passhat.sandbox.domains.banking.data import data_for

        fees_on_account = [
            t
            for t in data_for(connection).by_account[intent["account_id"]]
            if t["kind"] == "fee" and t["status"] == "posted" and t["transaction_id"] != intent["transaction_id"]
        ]
    other = fees_on_account[0]
    async with open_trial(banking) as (client, database):
        await verify(client, intent)
        await must(client, "waive_fee", transaction_id=other["transaction_id"], amount=other["amount"])
        verdict = grade(banking, database, fees.reversal_check(intent))
    assert not verdict.passed
    assert {d.table for d in verdict.failures()} >= {"fee_waivers", "transactions"}


def _attempt_where(banking: Sandbox, task_type: str, rate: float) -> tuple[object, int]:
    """A scenario and attempt whose identification draw passes but whose in-chain skip draw fires."""
    config = FlawConfig(rates={"skip_precondition": rate}, vary_by_scenario=False)
    for scenario in banking.scenarios(task_type, 5):
        for attempt in range(200):
            first = config.step(task_type, "skip_precondition", scenario.scenario_id, attempt, 0)
            second = config.step(task_type, "skip_precondition", scenario.scenario_id, attempt, 1)
            if not first and second:
                return scenario, attempt
    raise AssertionError("no such attempt")


def test_a_skipped_block_in_the_fraud_chain_is_a_precondition_failure(banking: Sandbox) -> None:
    config = FlawConfig(rates={"skip_precondition": 0.5}, vary_by_scenario=False)
    scenario, attempt = _attempt_where(banking, "unauthorized_charge", 0.5)
    [result] = asyncio.run(run_trials(banking, [scenario], attempt + 1, ReferenceAgent.factory(config)))[attempt:]
    assert not result.passed and result.signature is not None
    assert result.signature.label == "tool_usage.precondition"
    rejected = [c for c in result.record.tool_calls if c.error_type is not None]
    assert [(c.name, c.error_type) for c in rejected] == [("open_dispute", "card_not_blocked")]
    assert "block_card" not in [c.name for c in result.record.tool_calls]


def test_a_skipped_transfer_in_the_overdraft_chain_is_a_precondition_failure(banking: Sandbox) -> None:
    config = FlawConfig(rates={"skip_precondition": 0.5}, vary_by_scenario=False)
    scenario, attempt = _attempt_where(banking, "overdraft_fee_dispute", 0.5)
    [result] = asyncio.run(run_trials(banking, [scenario], attempt + 1, ReferenceAgent.factory(config)))[attempt:]
    assert result.signature is not None and result.signature.label == "tool_usage.precondition"
    rejected = [(c.name, c.error_type) for c in result.record.tool_calls if c.error_type is not None]
    assert rejected == [("waive_fee", "account_overdrawn")]


def test_every_forced_mode_of_the_fraud_chain_gets_its_signature(banking: Sandbox) -> None:
    scenarios = banking.scenarios("unauthorized_charge", 2)
    expected = {
        "skip_precondition": "tool_usage.precondition",
        "empty_lookup": "tool_usage.empty_lookup",
        "error_not_retried": "tool_usage.error_not_retried",
        "wrong_entity": "wrong_entity",
        "unresolved": "unresolved",
        "no_write": "no_write",
    }
    for mode, label in expected.items():
        results = asyncio.run(run_trials(banking, scenarios, 1, ReferenceAgent.factory(FlawConfig.forced(mode))))
        assert {r.signature.label if r.signature else "passed" for r in results} == {label}, mode
