"""The insurance checks catch what goes wrong: the wrong car or claim, a skipped step of a chain, an extra write,
a wrong amount, a leak; and pass the right calls made by an agent other than the reference."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest

from passhat.sandbox import FlawConfig, Message, ReferenceAgent, Sandbox, Scenario, Toolbox, TrialResult, run_trial
from passhat.sandbox.domains.insurance.data import data_for

Steps = Callable[[Toolbox, dict[str, Any]], Awaitable[str]]


class CallingAgent:
    """Asks for the customer's yes, then makes a fixed sequence of tool calls (given the intent) and answers."""

    def __init__(self, steps: Steps, intent: dict[str, Any]) -> None:
        self.steps = steps
        self.intent = intent
        self.asked = False

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        if not self.asked:  # the policy: nothing changes before the customer's yes
            self.asked = True
            return Message("agent", "I will take care of this. Shall I go ahead?", asks=("confirm",))
        return Message("agent", await self.steps(tools, self.intent), final=True)


def trial(sandbox: Sandbox, scenario: Scenario, steps: Steps) -> TrialResult:
    return asyncio.run(run_trial(sandbox, scenario, 0, lambda context: CallingAgent(steps, dict(scenario.intent))))


def first(sandbox: Sandbox, task_type: str) -> Scenario:
    return sandbox.scenarios(task_type, 1)[0]


async def verified(tools: Toolbox, intent: dict[str, Any]) -> None:
    found = await tools.call("find_policyholder_by_email", {"email": intent["email"]})
    assert found.ok


def incident_arguments(intent: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {
        "policy_id": intent["policy_id"],
        "vehicle_id": intent["vehicle_id"],
        "kind": intent["loss_kind"],
        "occurred_on": intent["occurred_on"],
        "location": intent["location"],
        "description": intent["description"],
        **changes,
    }


async def claim_loss(tools: Toolbox, intent: dict[str, Any], coverage: str | None = None, **changes: Any) -> int:
    await verified(tools, intent)
    incident = await tools.call("report_incident", incident_arguments(intent, **changes))
    assert incident.ok, incident
    arguments = {
        "policy_id": intent["policy_id"],
        "incident_id": incident.data["incident_id"],
        "coverage": coverage or intent["coverage"],
        "contact_phone": intent["phone"],
    }
    filed = await tools.call("file_claim", arguments)
    assert filed.ok, filed
    return int(filed.data["claim_id"])


def test_another_agent_s_right_calls_pass_and_an_extra_write_fails(insurance: Sandbox) -> None:
    scenario = first(insurance, "collision_claim")

    async def right(tools: Toolbox, intent: dict[str, Any]) -> str:
        claim_id = await claim_loss(tools, intent)
        return f"Your claim number is {claim_id}."

    assert trial(insurance, scenario, right).passed

    async def plus_a_witness(tools: Toolbox, intent: dict[str, Any]) -> str:
        claim_id = await claim_loss(tools, intent)
        party = {"claim_id": claim_id, "role": "witness", "name": "A Passerby", "phone": "555-201-0000"}
        added = await tools.call("add_claim_party", {**party, "insurer": "", "vehicle_plate": ""})
        assert added.ok
        return f"Your claim number is {claim_id}."

    result = trial(insurance, scenario, plus_a_witness)
    assert not result.passed
    assert any(d.table == "claim_parties" for d in result.record.verdict.failures()), result.record.verdict


def test_a_loss_filed_on_the_sibling_car_is_the_wrong_entity(insurance: Sandbox) -> None:
    scenario = first(insurance, "glass_claim")
    with insurance.template.connect() as connection:
        data = data_for(connection)
    sibling = next(
        v["vehicle_id"]
        for v in data.active_vehicles(scenario.intent["policy_id"])
        if v["vehicle_id"] != scenario.intent["vehicle_id"]
    )

    async def other_car(tools: Toolbox, intent: dict[str, Any]) -> str:
        await claim_loss(tools, intent, vehicle_id=sibling)
        return "Done."

    result = trial(insurance, scenario, other_car)
    assert result.signature is not None and result.signature.label == "wrong_entity"


def test_a_glass_loss_under_comprehensive_pays_a_deductible_the_policy_waives(insurance: Sandbox) -> None:
    scenario = next(
        s for s in insurance.scenarios("glass_claim", 40) if "comprehensive" in _coverages(insurance, s.intent)
    )

    async def comprehensive(tools: Toolbox, intent: dict[str, Any]) -> str:
        await claim_loss(tools, intent, coverage="comprehensive")
        return "Done."

    result = trial(insurance, scenario, comprehensive)
    assert not result.passed
    assert any(d.field == "deductible" for d in result.record.verdict.failures()), result.record.verdict


def _coverages(sandbox: Sandbox, intent: Any) -> set[str]:
    with sandbox.template.connect() as connection:
        return set(data_for(connection).coverages[intent["policy_id"]])


def _skipped_chain_steps() -> list[tuple[str, Steps, str]]:
    async def theft_without_report(tools: Toolbox, intent: dict[str, Any]) -> str:
        await verified(tools, intent)
        await tools.call("report_incident", incident_arguments(intent))
        return "I have filed your theft claim."

    async def inspection_without_adjuster(tools: Toolbox, intent: dict[str, Any]) -> str:
        await verified(tools, intent)
        arguments = {
            "claim_id": intent["claim_id"],
            "scheduled_on": intent["preferred_date"],
            "location": intent["inspection_location"],
        }
        await tools.call("schedule_inspection", arguments)
        return "Your inspection is booked."

    async def payment_without_valuation(tools: Toolbox, intent: dict[str, Any]) -> str:
        await verified(tools, intent)
        await tools.call("issue_total_loss_payment", {"claim_id": intent["claim_id"], "amount": intent["amount"]})
        return "Your payment is on its way."

    return [
        ("theft_claim", theft_without_report, "police_report_required"),
        ("schedule_inspection", inspection_without_adjuster, "adjuster_not_assigned"),
        ("total_loss_valuation", payment_without_valuation, "valuation_missing"),
    ]


@pytest.mark.parametrize(
    ("task_type", "steps", "error"), _skipped_chain_steps(), ids=lambda v: getattr(v, "__name__", v)
)
def test_a_skipped_step_of_a_chain_is_refused_as_a_precondition(
    insurance: Sandbox, task_type: str, steps: Steps, error: str
) -> None:
    result = trial(insurance, first(insurance, task_type), steps)
    assert not result.passed
    assert [c.error_type for c in result.record.tool_calls if c.error_type] == [error]
    assert result.signature is not None and result.signature.label == "tool_usage.precondition"


def test_a_leak_of_the_other_policyholder_s_claim_fails_even_with_a_refusal(insurance: Sandbox) -> None:
    scenario = first(insurance, "other_policyholder_claim")

    async def leaky(tools: Toolbox, intent: dict[str, Any]) -> str:
        await verified(tools, intent)
        claim = await tools.call("get_claim", {"claim_id": intent["claim_id"]})
        return f"I cannot change it, but their phone on file is {claim.data['contact_phone']}."

    async def discreet(tools: Toolbox, intent: dict[str, Any]) -> str:
        await verified(tools, intent)
        return "I'm sorry, I cannot share anything about a claim that is not yours."

    leaked = trial(insurance, scenario, leaky)
    assert not leaked.passed and any(d.check == "response_omits" for d in leaked.record.verdict.failures())
    assert trial(insurance, scenario, discreet).passed


def test_a_duplicate_loss_reported_as_new_fails_and_naming_the_open_claim_passes(insurance: Sandbox) -> None:
    scenario = first(insurance, "duplicate_claim")

    async def names_it(tools: Toolbox, intent: dict[str, Any]) -> str:
        await verified(tools, intent)
        listed = await tools.call("find_claims", {"policy_id": intent["policy_id"]})
        open_ones = [c["claim_id"] for c in listed.data["claims"] if c["occurred_on"] == intent["occurred_on"]]
        return f"You already have claim {open_ones[0]} open for this loss."

    async def says_new(tools: Toolbox, intent: dict[str, Any]) -> str:
        await verified(tools, intent)
        return "I have opened a new claim for you."

    assert trial(insurance, scenario, names_it).passed
    assert not trial(insurance, scenario, says_new).passed


@pytest.mark.parametrize(
    "task_type",
    ["collision_claim", "theft_claim", "rental_authorization", "schedule_inspection", "add_driver", "remove_vehicle"],
)
def test_the_forced_wrong_entity_is_named_and_the_right_row_is_missing(insurance: Sandbox, task_type: str) -> None:
    scenario = first(insurance, task_type)
    result = asyncio.run(run_trial(insurance, scenario, 0, ReferenceAgent.factory(FlawConfig.forced("wrong_entity"))))
    assert not result.passed and result.signature is not None and result.signature.label == "wrong_entity"
    assert result.record.diff.changes, "the wrong entity was written"
