"""The insurance MCP tools through a real in-memory MCP client: verification, the policy's rules as refusals
in the domain's vocabulary, and the rows the writes make."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp import Client
from sqlalchemy import select

from passhat.sandbox import Sandbox, TrialDatabase
from passhat.sandbox.domains.insurance import models as m
from passhat.sandbox.domains.insurance.data import InsuranceData, data_for


@asynccontextmanager
async def open_trial(insurance: Sandbox) -> AsyncIterator[tuple[Client, TrialDatabase]]:
    """A fresh database copy and tool server, connected."""
    database = insurance.memory_copy()
    try:
        async with Client(insurance.domain.build_server(database.engine)) as client:
            yield client, database
    finally:
        database.close()


async def call(client: Client, name: str, **arguments: Any) -> tuple[bool, Any]:
    result = await client.call_tool(name, arguments)
    text = "".join(getattr(block, "text", "") for block in result.content)
    return (not result.is_error), json.loads(text)


async def refused(client: Client, name: str, error: str, **arguments: Any) -> str:
    success, payload = await call(client, name, **arguments)
    assert not success and payload["error"] == error, payload
    return str(payload["message"])


def seeded(insurance: Sandbox) -> InsuranceData:
    with insurance.template.connect() as connection:
        return data_for(connection)


async def verify(client: Client, data: InsuranceData, policy_id: str) -> None:
    email = data.holder_of(policy_id)["email"]
    success, payload = await call(client, "find_policyholder_by_email", email=email)
    assert success and payload == {"policyholder_id": data.policies[policy_id]["policyholder_id"]}


def an_active_policy(data: InsuranceData, *, coverage: str, vehicles: int = 1) -> str:
    return next(
        p
        for p, policy in sorted(data.policies.items())
        if policy["status"] == "active"
        and coverage in data.coverages[p]
        and len(data.active_vehicles(p)) >= vehicles
        and not data.open_claims(p)
    )


async def test_nothing_is_shown_or_changed_before_the_caller_is_verified(insurance: Sandbox) -> None:
    data = seeded(insurance)
    policy_id = an_active_policy(data, coverage="collision")
    other = next(
        p
        for p in sorted(data.policies)
        if data.policies[p]["policyholder_id"] != data.policies[policy_id]["policyholder_id"]
    )
    async with open_trial(insurance) as (client, _):
        await refused(client, "get_policy", "caller_not_verified", policy_id=policy_id)
        await refused(client, "find_claims", "caller_not_verified", policy_id=policy_id)
        await verify(client, data, policy_id)
        success, policy = await call(client, "get_policy", policy_id=policy_id.lower())
        assert success and policy["policy_id"] == policy_id and policy["coverages"]
        # A verified caller still cannot open someone else's policy.
        await refused(client, "get_policy", "not_policyholder", policy_id=other)
        await refused(client, "get_policy", "policy_not_found", policy_id=policy_id + "x")


async def test_a_collision_is_recorded_then_claimed_with_its_deductible(insurance: Sandbox) -> None:
    data = seeded(insurance)
    policy_id = an_active_policy(data, coverage="collision")
    vehicle = data.active_vehicles(policy_id)[0]
    incident = {
        "policy_id": policy_id,
        "vehicle_id": vehicle["vehicle_id"],
        "kind": "collision",
        "occurred_on": "2026-06-08",
        "location": "Elm St",
        "description": "rear-ended",
    }
    async with open_trial(insurance) as (client, database):
        await verify(client, data, policy_id)
        await refused(
            client, "file_claim", "incident_not_recorded", policy_id=policy_id, incident_id=0, coverage="collision",
            contact_phone="555-201-3344",
        )  # fmt: skip
        await refused(client, "report_incident", "invalid_value", **{**incident, "occurred_on": "last week"})
        await refused(client, "report_incident", "invalid_value", **{**incident, "occurred_on": "2026-07-01"})
        success, recorded = await call(client, "report_incident", **incident)
        assert success
        arguments = {"policy_id": policy_id, "incident_id": recorded["incident_id"], "contact_phone": "555-201-3344"}
        message = await refused(client, "file_claim", "coverage_not_applicable", **arguments, coverage="liability")
        assert "collision" in message
        success, claim = await call(client, "file_claim", **arguments, coverage="collision")
        assert success and claim["deductible"] == data.coverages[policy_id]["collision"]["deductible"]
        await refused(client, "file_claim", "open_claim_exists", **arguments, coverage="collision")
        # The same loss reported again is refused too, naming the open claim.
        message = await refused(client, "report_incident", "open_claim_exists", **incident)
        assert str(claim["claim_id"]) in message
        with database.engine.connect() as connection:
            row = connection.execute(select(m.claims).where(m.claims.c.claim_id == claim["claim_id"])).mappings().one()
    assert (row["vehicle_id"], row["status"], row["opened_on"]) == (vehicle["vehicle_id"], "open", m.TODAY)


async def test_theft_needs_a_police_report_and_glass_waives_the_deductible(insurance: Sandbox) -> None:
    data = seeded(insurance)
    policy_id = next(
        p
        for p in sorted(data.policies)
        if {"glass", "comprehensive"} <= set(data.coverages[p])
        and data.policies[p]["status"] == "active"
        and not data.open_claims(p)
    )
    vehicle_id = data.active_vehicles(policy_id)[0]["vehicle_id"]
    base = {"policy_id": policy_id, "vehicle_id": vehicle_id, "location": "Mill Rd", "description": "x"}
    async with open_trial(insurance) as (client, _):
        await verify(client, data, policy_id)
        await refused(
            client, "report_incident", "police_report_required", **base, kind="theft", occurred_on="2026-06-09"
        )
        success, theft = await call(
            client, "report_incident", **base, kind="theft", occurred_on="2026-06-09", police_report_number="PR-1"
        )
        assert success
        success, glass = await call(client, "report_incident", **base, kind="glass", occurred_on="2026-06-07")
        assert success
        phone = "555-201-3344"
        success, glass_claim = await call(
            client,
            "file_claim",
            policy_id=policy_id,
            incident_id=glass["incident_id"],
            coverage="glass",
            contact_phone=phone,
        )
        assert success and glass_claim["deductible"] == 0.0
        await refused(
            client, "file_claim", "coverage_not_applicable", policy_id=policy_id, incident_id=theft["incident_id"],
            coverage="collision", contact_phone=phone,
        )  # fmt: skip


async def test_a_lapsed_policy_takes_no_loss_after_its_lapse(insurance: Sandbox) -> None:
    data = seeded(insurance)
    policy_id = next(p for p in sorted(data.policies) if data.policies[p]["status"] == "lapsed")
    lapsed_on = data.policies[policy_id]["lapsed_on"]
    vehicle_id = data.active_vehicles(policy_id)[0]["vehicle_id"]
    async with open_trial(insurance) as (client, database):
        await verify(client, data, policy_id)
        message = await refused(
            client, "report_incident", "policy_not_active", policy_id=policy_id, vehicle_id=vehicle_id,
            kind="collision", occurred_on=lapsed_on, location="Elm St", description="hit a pole",
        )  # fmt: skip
        assert lapsed_on in message
        await refused(
            client, "add_driver", "policy_not_active", policy_id=policy_id, first_name="A", last_name="B",
            license_number="D1", date_of_birth="1990-01-01", relationship="spouse",
        )  # fmt: skip
        with database.engine.connect() as connection:
            assert connection.execute(select(m.incidents).where(m.incidents.c.policy_id == policy_id)).first() is None


async def test_rentals_are_capped_by_the_rental_coverage(insurance: Sandbox) -> None:
    data = seeded(insurance)
    intent = insurance.scenarios("rental_authorization", 1)[0].intent
    rental = data.coverages[intent["policy_id"]]["rental"]
    claim_id = intent["claim_id"]
    async with open_trial(insurance) as (client, _):
        await verify(client, data, intent["policy_id"])
        over = rental["per_day_limit"] + 1
        await refused(client, "authorize_rental", "rental_limit_exceeded", claim_id=claim_id, daily_rate=over, days=3)
        days = rental["max_days"] + 1
        await refused(
            client,
            "authorize_rental",
            "rental_limit_exceeded",
            claim_id=claim_id,
            daily_rate=rental["per_day_limit"],
            days=days,
        )
        await refused(client, "authorize_rental", "invalid_value", claim_id=claim_id, daily_rate=10.0, days=0)
        success, authorized = await call(
            client, "authorize_rental", claim_id=claim_id, daily_rate=rental["per_day_limit"], days=rental["max_days"]
        )
        assert success and authorized["total"] == rental["per_day_limit"] * rental["max_days"]
        await refused(client, "authorize_rental", "already_recorded", claim_id=claim_id, daily_rate=10.0, days=1)


async def test_an_inspection_needs_the_region_s_adjuster_first(insurance: Sandbox) -> None:
    data = seeded(insurance)
    intent = insurance.scenarios("schedule_inspection", 1)[0].intent
    claim_id = intent["claim_id"]
    region = data.holder_of(intent["policy_id"])["region"]
    stranger = next(a for a in data.adjusters if a["region"] != region)
    async with open_trial(insurance) as (client, _):
        await verify(client, data, intent["policy_id"])
        booking = {"claim_id": claim_id, "scheduled_on": intent["preferred_date"], "location": "14 Birch Lane"}
        await refused(client, "schedule_inspection", "adjuster_not_assigned", **booking)
        await refused(
            client, "assign_adjuster", "adjuster_out_of_region", claim_id=claim_id, adjuster_id=stranger["adjuster_id"]
        )
        success, _ = await call(client, "assign_adjuster", claim_id=claim_id, adjuster_id=intent["adjuster_id"])
        assert success
        await refused(client, "schedule_inspection", "invalid_value", **{**booking, "scheduled_on": "2026-06-13"})
        success, booked = await call(client, "schedule_inspection", **booking)
        assert success and booked["adjuster_id"] == intent["adjuster_id"]


async def test_a_total_loss_is_valued_at_actual_cash_value_before_it_is_paid(insurance: Sandbox) -> None:
    data = seeded(insurance)
    intent = insurance.scenarios("total_loss_valuation", 1)[0].intent
    claim_id = intent["claim_id"]
    async with open_trial(insurance) as (client, database):
        await verify(client, data, intent["policy_id"])
        await refused(
            client, "issue_total_loss_payment", "valuation_missing", claim_id=claim_id, amount=intent["amount"]
        )
        await refused(
            client,
            "record_total_loss_valuation",
            "valuation_not_acv",
            claim_id=claim_id,
            valuation=intent["asking_price"],
        )
        success, _ = await call(client, "record_total_loss_valuation", claim_id=claim_id, valuation=intent["valuation"])
        assert success
        await refused(
            client, "issue_total_loss_payment", "amount_mismatch", claim_id=claim_id, amount=intent["valuation"]
        )
        success, paid = await call(client, "issue_total_loss_payment", claim_id=claim_id, amount=intent["amount"])
        assert success and paid["amount"] == round(intent["valuation"] - intent["deductible"], 2)
        await refused(client, "issue_total_loss_payment", "claim_not_open", claim_id=claim_id, amount=intent["amount"])
        with database.engine.connect() as connection:
            status = connection.execute(select(m.claims.c.status).where(m.claims.c.claim_id == claim_id)).scalar()
    assert status == "settled"


async def test_policy_changes_move_the_premium_and_keep_the_last_vehicle(insurance: Sandbox) -> None:
    data = seeded(insurance)
    policy_id = next(
        p
        for p in sorted(data.policies)
        if data.policies[p]["status"] == "active" and len(data.active_vehicles(p)) == 2 and not data.open_claims(p)
    )
    first, second = data.active_vehicles(policy_id)
    premium = data.policies[policy_id]["premium"]
    async with open_trial(insurance) as (client, database):
        await verify(client, data, policy_id)
        driver = {
            "policy_id": policy_id, "first_name": "Jonah", "last_name": "Kim", "license_number": "d7654321",
            "date_of_birth": "2006-01-15", "relationship": "child",
        }  # fmt: skip
        await refused(client, "add_driver", "invalid_value", **{**driver, "date_of_birth": "2015-01-01"})
        await refused(client, "add_driver", "invalid_value", **{**driver, "relationship": "cousin"})
        success, added = await call(client, "add_driver", **driver)
        assert success and added["premium"] == round(premium + m.YOUNG_DRIVER_SURCHARGE, 2)
        await refused(client, "add_driver", "already_recorded", **driver)
        await refused(
            client, "remove_vehicle", "invalid_value", policy_id=policy_id, vehicle_id=first["vehicle_id"], reason=""
        )
        success, removed = await call(
            client, "remove_vehicle", policy_id=policy_id, vehicle_id=first["vehicle_id"], reason="sold"
        )
        assert success and removed["premium"] == round(added["premium"] - first["annual_premium"], 2)
        await refused(
            client,
            "remove_vehicle",
            "last_vehicle",
            policy_id=policy_id,
            vehicle_id=second["vehicle_id"],
            reason="sold",
        )
        with database.engine.connect() as connection:
            row = connection.execute(select(m.drivers).where(m.drivers.c.license_number == "D7654321")).mappings().one()
    assert (row["policy_id"], row["status"], row["added_on"]) == (policy_id, "active", m.TODAY)


async def test_a_vehicle_with_an_open_claim_stays_and_claims_of_others_are_looked_up_not_changed(
    insurance: Sandbox,
) -> None:
    data = seeded(insurance)
    claim = next(
        c
        for c in data.claims.values()
        if c["status"] == "open"
        and data.policies[c["policy_id"]]["status"] == "active"
        and len(data.active_vehicles(c["policy_id"])) >= 2
    )
    other = next(
        p
        for p in sorted(data.policies)
        if data.policies[p]["policyholder_id"] != data.holder_of(claim["policy_id"])["policyholder_id"]
    )
    async with open_trial(insurance) as (client, _):
        await verify(client, data, claim["policy_id"])
        await refused(
            client, "remove_vehicle", "vehicle_has_open_claim", policy_id=claim["policy_id"],
            vehicle_id=claim["vehicle_id"], reason="sold",
        )  # fmt: skip
    async with open_trial(insurance) as (client, _):
        await verify(client, data, other)
        # Any verified caller can look a claim up (sharing it is the agent's call), but not change it.
        success, found = await call(client, "get_claim", claim_id=claim["claim_id"])
        assert success and found["policyholder_id"] == data.holder_of(claim["policy_id"])["policyholder_id"]
        await refused(
            client, "update_claim_contact", "not_policyholder", claim_id=claim["claim_id"], contact_phone="555-201-3344"
        )
        await refused(client, "get_claim", "claim_not_found", claim_id=1)
