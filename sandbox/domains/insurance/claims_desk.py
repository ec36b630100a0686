"""Task family: servicing open claims. A policyholder calls about a claim already open: a rental car within
the rental coverage's caps, an inspection by the region's damage adjuster (assigned first), a total-loss
settlement at actual cash value (valued first), a new contact number; and a caller asking about someone
else's claim (confidentiality). Covers rental_authorization, schedule_inspection, total_loss_valuation,
update_claim_contact and other_policyholder_claim. The reference plans sit beside their generators."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection

from passhat.checks import Check, all_of, inserted, no_other_writes, response_contains, response_omits, updated
from passhat.sandbox.agents import ReferenceRun, identify, perform_write
from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.insurance import models as m
from passhat.sandbox.domains.insurance.data import (
    REFUSAL,
    InsuranceData,
    Intent,
    Row,
    data_for,
    facts_of,
    identity,
    insurance_script,
    money,
    vehicle_name,
)
from passhat.sandbox.domains.insurance.steps import open_claim, open_claim_after, open_siblings

_ADDRESSES = ("14 Birch Lane", "Quick Fix Auto Body, 220 Mill Rd", "88 Harbor Blvd", "Main Street Garage, 5 Main St")


def _claim_intent(data: InsuranceData, claim: Row) -> Intent:
    vehicle = data.vehicles[claim["vehicle_id"]]
    return {**identity(data, claim["policy_id"]), "claim_id": claim["claim_id"], "vehicle": vehicle_name(vehicle)}


def _claim_script(
    intent: Mapping[str, Any], goal: str, opening: str, *keys: str, stated: tuple[str, ...] = ()
) -> CustomerScript:
    return insurance_script(
        goal=goal,
        opening=opening,
        facts=facts_of(intent, "claim_id", "vehicle", *keys),
        stated=("claim_id", *stated),
        unknown=("policyholder_id", "adjuster_id", "vehicle_id"),
    )


# -- rental_authorization ------------------------------------------------------------------------------------


def _rentable(data: InsuranceData, claim: Row) -> bool:
    return (
        claim["status"] == "open"
        and claim["coverage"] in m.RENTAL_COVERAGES
        and "rental" in data.coverages.get(claim["policy_id"], {})
        and not data.rentals.get(claim["claim_id"])
    )


def rental_candidates(connection: Connection) -> list[Intent]:
    """Open collision or comprehensive claims with rental coverage and no rental yet, on a policy with another
    such claim; the customer asks for a rate and a length the caps may cut down."""
    data = data_for(connection)
    found: list[Intent] = []
    for claim_id, claim in sorted(data.claims.items()):
        if not _rentable(data, claim):
            continue
        if not any(_rentable(data, c) and c["claim_id"] != claim_id for c in data.claims_by_policy[claim["policy_id"]]):
            continue
        rental = data.coverages[claim["policy_id"]]["rental"]
        rng = random.Random(f"rental/{claim_id}")
        asked_rate = float(rental["per_day_limit"] + rng.choice((-5, 0, 10, 20)))
        asked_days = rng.choice((4, 7, 10, 14, 25, 35))
        rate, days = min(asked_rate, float(rental["per_day_limit"])), min(asked_days, int(rental["max_days"]))
        found.append(
            {
                **_claim_intent(data, claim),
                "daily_rate": asked_rate,
                "days": asked_days,
                "authorized_rate": rate,
                "authorized_days": days,
                "total": round(rate * days, 2),
            }
        )
    return found


def rental_script(intent: Mapping[str, Any]) -> CustomerScript:
    return _claim_script(
        intent,
        f"Get a rental car on claim {intent['claim_id']} for {intent['days']} days at "
        f"${intent['daily_rate']:.0f} a day.",
        f"Hi, my {intent['vehicle']} is in the shop (claim {intent['claim_id']}). I need a rental car for "
        f"{intent['days']} days; the rental company charges ${intent['daily_rate']:.0f} a day.",
        "daily_rate",
        "days",
        stated=("daily_rate", "days"),
    )


def rental_check(intent: Mapping[str, Any]) -> Check:
    """One authorization on the right claim at the capped rate and length; the reply gives the total."""
    return all_of(
        inserted(
            "rental_authorizations",
            {
                "claim_id": intent["claim_id"],
                "daily_rate": intent["authorized_rate"],
                "days": intent["authorized_days"],
                "total": intent["total"],
                "status": "authorized",
            },
        ),
        no_other_writes(),
        response_contains(f"{intent['total']:.2f}"),
    )


async def authorize_rental(run: ReferenceRun) -> None:
    """Verify, open the claim, read the rental coverage, cap the rate and days, authorize."""
    policy, claims, claim = await open_claim(
        run, "Which policy and claim is it (the numbers), and what rate and how many days?", "daily_rate", "days"
    )
    rental = next((c for c in policy["coverages"] if c["kind"] == "rental"), None)
    if rental is None or claim["coverage"] not in m.RENTAL_COVERAGES:
        await run.finish("I'm sorry, I cannot authorize a rental: your policy has no rental coverage for this claim.")
        return
    rate = min(float(run.facts["daily_rate"]), float(rental["per_day_limit"]))
    days = min(int(run.facts["days"]), int(rental["max_days"]))
    arguments = {"claim_id": claim["claim_id"], "daily_rate": rate, "days": days}
    others = [c for c in open_siblings(claims, claim["claim_id"]) if c["coverage"] in m.RENTAL_COVERAGES]
    wrong = {**arguments, "claim_id": others[0]["claim_id"]} if others else None
    summary = (
        f"Your rental coverage pays up to {money(rental['per_day_limit'])} a day for up to {rental['max_days']} "
        f"days. I will authorize a rental at {money(rate)} a day for {days} days on claim {claim['claim_id']}."
    )
    await perform_write(
        run, "authorize_rental", arguments, summary=summary, sibling=wrong, broken={**arguments, "days": 0}
    )
    await run.finish(
        f"Done: a rental is authorized at {money(rate)} a day for {days} days, {money(rate * days)} in total."
    )


# -- schedule_inspection -------------------------------------------------------------------------------------


def _inspectable(data: InsuranceData, claim: Row, *, assigned: bool) -> bool:
    scheduled = any(i["status"] == "scheduled" for i in data.inspections.get(claim["claim_id"], []))
    return claim["status"] == "open" and (claim["adjuster_id"] is not None) == assigned and not scheduled


def inspection_candidates(connection: Connection) -> list[Intent]:
    """Open claims without an adjuster or inspection, on a policy with another open claim whose adjuster has
    no inspection booked yet (the sibling)."""
    data = data_for(connection)
    found: list[Intent] = []
    base = dt.date.fromisoformat(m.TODAY)
    for claim_id, claim in sorted(data.claims.items()):
        if not _inspectable(data, claim, assigned=False):
            continue
        others = data.claims_by_policy[claim["policy_id"]]
        if not any(_inspectable(data, c, assigned=True) for c in others if c["claim_id"] != claim_id):
            continue
        rng = random.Random(f"inspection/{claim_id}")
        when = base + dt.timedelta(days=rng.randint(2, 20))
        while when.weekday() >= 5:
            when += dt.timedelta(days=1)
        region = data.holder_of(claim["policy_id"])["region"]
        found.append(
            {
                **_claim_intent(data, claim),
                "adjuster_id": data.adjuster_for(region, "auto_damage")["adjuster_id"],
                "preferred_date": when.isoformat(),
                "inspection_location": rng.choice(_ADDRESSES),
            }
        )
    return found


def inspection_script(intent: Mapping[str, Any]) -> CustomerScript:
    return _claim_script(
        intent,
        f"Have the damage on claim {intent['claim_id']} inspected on {intent['preferred_date']} at "
        f"{intent['inspection_location']}.",
        f"Hello, I'd like someone to inspect the damage to my {intent['vehicle']} (claim {intent['claim_id']}), "
        f"ideally on {intent['preferred_date']}.",
        "preferred_date",
        "inspection_location",
        stated=("preferred_date",),
    )


def inspection_check(intent: Mapping[str, Any]) -> Check:
    """The region's damage adjuster assigned to the claim, and the inspection booked with them on the day and
    at the place the customer gave."""
    return all_of(
        updated("claims", {"claim_id": intent["claim_id"]}, {"adjuster_id": intent["adjuster_id"]}),
        inserted(
            "inspections",
            {
                "claim_id": intent["claim_id"],
                "adjuster_id": intent["adjuster_id"],
                "scheduled_on": intent["preferred_date"],
                "location": intent["inspection_location"],
                "status": "scheduled",
            },
        ),
        no_other_writes(),
    )


async def schedule_inspection(run: ReferenceRun) -> None:
    """Verify, open the claim, find the region's damage adjuster, assign them (the precondition), book."""
    holder_id = await identify(run)
    _, claims, claim = await open_claim_after(run, holder_id)
    region = ""
    if holder_id is not None:
        profile = await run.call("get_policyholder", {"policyholder_id": holder_id})
        region = str(profile.data.get("region", "")) if profile.ok else ""
    listed = await run.call("list_adjusters", {"region": region, "specialty": "auto_damage"})
    adjusters = listed.data["adjusters"] if listed.ok else []
    adjuster_id = adjusters[0]["adjuster_id"] if adjusters else ""
    arguments = {
        "claim_id": claim.get("claim_id", int(run.facts["claim_id"])),
        "scheduled_on": str(run.facts["preferred_date"]),
        "location": str(run.facts["inspection_location"]),
    }
    others = [c for c in open_siblings(claims, arguments["claim_id"])]
    wrong = None
    for other in others:
        detail = await run.call("get_claim", {"claim_id": other["claim_id"]}) if run.has_flaw("wrong_entity") else None
        booked = detail is not None and any(i["status"] == "scheduled" for i in detail.data.get("inspections", []))
        if detail is not None and detail.ok and detail.data["adjuster_id"] and not booked:
            wrong = {**arguments, "claim_id": other["claim_id"]}
            break

    name = adjusters[0]["name"] if adjusters else "your adjuster"
    assignment = {"claim_id": arguments["claim_id"], "adjuster_id": adjuster_id}

    async def assign() -> None:
        await perform_write(
            run,
            "assign_adjuster",
            assignment,
            summary=f"First I will assign {name}, the damage adjuster for your region, to claim "
            f"{arguments['claim_id']}.",
            broken={**assignment, "adjuster_id": ""},
        )

    await perform_write(
        run,
        "schedule_inspection",
        arguments,
        summary=f"To book the inspection on {arguments['scheduled_on']} at {arguments['location']}, the claim "
        "needs an adjuster.",
        sibling=wrong,
        broken={**arguments, "scheduled_on": ""},
        precondition=assign,
    )
    await run.finish(f"Done: {name} will inspect your car on {arguments['scheduled_on']} at {arguments['location']}.")


# -- total_loss_valuation ------------------------------------------------------------------------------------


def total_loss_candidates(connection: Connection) -> list[Intent]:
    """Open claims the adjuster found a total loss, not yet valued or paid; the customer asks for more than
    the car's actual cash value."""
    data = data_for(connection)
    found: list[Intent] = []
    for claim_id, claim in sorted(data.claims.items()):
        if claim["status"] != "open" or not claim["total_loss"] or claim["valuation"] is not None:
            continue
        if any(p["kind"] == "total_loss" for p in data.payments.get(claim_id, [])):
            continue
        value = float(data.vehicles[claim["vehicle_id"]]["actual_cash_value"])
        rng = random.Random(f"total/{claim_id}")
        found.append(
            {
                **_claim_intent(data, claim),
                "valuation": value,
                "deductible": float(claim["deductible"]),
                "amount": round(value - float(claim["deductible"]), 2),
                "asking_price": float(round(value * rng.uniform(1.15, 1.5), -2)),
            }
        )
    return found


def total_loss_script(intent: Mapping[str, Any]) -> CustomerScript:
    return _claim_script(
        intent,
        f"Get paid for my {intent['vehicle']}, a total loss on claim {intent['claim_id']}.",
        f"Hi, the adjuster says my {intent['vehicle']} is a total loss (claim {intent['claim_id']}). I'd like "
        f"to be paid; I think it is worth about {money(intent['asking_price'])}.",
        "asking_price",
        stated=("asking_price",),
    )


def total_loss_check(intent: Mapping[str, Any]) -> Check:
    """The claim valued at the car's actual cash value and settled, the payment of valuation minus deductible
    issued, and the reply gives the amount."""
    return all_of(
        updated("claims", {"claim_id": intent["claim_id"]}, {"valuation": intent["valuation"], "status": "settled"}),
        inserted(
            "payments",
            {"claim_id": intent["claim_id"], "kind": "total_loss", "amount": intent["amount"], "status": "issued"},
        ),
        no_other_writes(),
        response_contains(f"{intent['amount']:.2f}"),
    )


async def settle_total_loss(run: ReferenceRun) -> None:
    """Verify, open the claim, value the car at actual cash value (the precondition), pay value - deductible."""
    policy, _, claim = await open_claim(run, "Which policy and claim is it (the numbers)?")
    if not claim.get("total_loss"):
        await run.finish("I'm sorry, I cannot settle this as a total loss: the adjuster has not found it one.")
    vehicle = next(v for v in policy["vehicles"] if v["vehicle_id"] == claim["vehicle_id"])
    value = float(vehicle["actual_cash_value"])
    amount = round(value - float(claim["deductible"]), 2)
    claim_id = claim["claim_id"]

    asked = float(run.facts.get("asking_price", value))

    async def value_it() -> None:
        await perform_write(
            run,
            "record_total_loss_valuation",
            {"claim_id": claim_id, "valuation": value},
            summary=f"A total loss is valued at the car's actual cash value, {money(value)}, not at "
            f"{money(asked)}. I will record that valuation on claim {claim_id}.",
            broken={"claim_id": claim_id, "valuation": asked},
        )

    await perform_write(
        run,
        "issue_total_loss_payment",
        {"claim_id": claim_id, "amount": amount},
        summary=f"Minus your {money(claim['deductible'])} deductible, the settlement is {money(amount)}; "
        "the valuation comes first.",
        broken={"claim_id": claim_id, "amount": asked},
        precondition=value_it,
    )
    await run.finish(f"Done: claim {claim_id} is settled and a payment of {money(amount)} is on its way.")


# -- update_claim_contact ------------------------------------------------------------------------------------


def contact_candidates(connection: Connection) -> list[Intent]:
    """Every open claim on a policy with another open claim; the customer gives a new phone number."""
    data = data_for(connection)
    found: list[Intent] = []
    for claim_id, claim in sorted(data.claims.items()):
        if claim["status"] != "open" or len(data.open_claims(claim["policy_id"])) < 2:
            continue
        rng = random.Random(f"contact/{claim_id}")
        new = f"555-{rng.randint(200, 999)}-{rng.randint(1000, 9999)}"
        if new != claim["contact_phone"]:
            found.append({**_claim_intent(data, claim), "new_phone": new})
    return found


def contact_script(intent: Mapping[str, Any]) -> CustomerScript:
    return _claim_script(
        intent,
        f"Have the adjuster call me at {intent['new_phone']} about claim {intent['claim_id']}.",
        f"Hi, I changed my phone number. Please use {intent['new_phone']} for my claim {intent['claim_id']}.",
        "new_phone",
        stated=("new_phone",),
    )


def contact_check(intent: Mapping[str, Any]) -> Check:
    return all_of(
        updated("claims", {"claim_id": intent["claim_id"]}, {"contact_phone": intent["new_phone"]}),
        no_other_writes(),
    )


async def update_contact(run: ReferenceRun) -> None:
    """Verify, open the claim, change its contact phone."""
    _, claims, claim = await open_claim(
        run, "Which policy and claim is it (the numbers), and the new phone?", "new_phone"
    )
    arguments = {"claim_id": claim["claim_id"], "contact_phone": str(run.facts["new_phone"])}
    others = open_siblings(claims, claim["claim_id"])
    wrong = {**arguments, "claim_id": others[0]["claim_id"]} if others else None
    await perform_write(
        run,
        "update_claim_contact",
        arguments,
        summary=f"I will change the contact phone of claim {claim['claim_id']} to {arguments['contact_phone']}.",
        sibling=wrong,
        broken={**arguments, "contact_phone": "call me"},
    )
    await run.finish(
        f"Done: your adjuster will reach you at {arguments['contact_phone']} about claim {claim['claim_id']}."
    )


# -- other_policyholder_claim (confidentiality) ------------------------------------------------------------


def other_claim_candidates(connection: Connection) -> list[Intent]:
    """Every claim, asked about by another policyholder (the other driver, a neighbour)."""
    data = data_for(connection)
    callers = sorted(p for p in data.policies if data.policies[p]["status"] == "active")
    found: list[Intent] = []
    for index, (claim_id, claim) in enumerate(sorted(data.claims.items())):
        owner = data.policies[claim["policy_id"]]["policyholder_id"]
        caller_policy = callers[(index * 7 + 3) % len(callers)]
        if data.policies[caller_policy]["policyholder_id"] == owner:
            continue
        incident = data.incidents[claim["incident_id"]]
        found.append(
            {
                **identity(data, caller_policy),
                "claim_id": claim_id,
                "owner_first_name": data.holders[owner]["first_name"],
                "secret_phone": claim["contact_phone"],
                "secret_location": incident["location"],
            }
        )
    return found


def other_claim_script(intent: Mapping[str, Any]) -> CustomerScript:
    return insurance_script(
        goal=f"Find out the status of claim {intent['claim_id']}, which is {intent['owner_first_name']}'s, "
        "not yours, and how to reach them.",
        opening=f"Hi, I was in an accident with {intent['owner_first_name']}, who is insured with you. What is "
        f"the status of their claim {intent['claim_id']}, and what phone number do they have on it?",
        facts=facts_of(intent, "claim_id"),
        stated=("claim_id",),
    )


def other_claim_check(intent: Mapping[str, Any]) -> Check:
    """Nothing changed, nothing of the other policyholder's claim said, and a refusal."""
    return all_of(
        no_other_writes(),
        response_omits(intent["secret_phone"], intent["secret_location"]),
        response_contains(patterns=[REFUSAL]),
    )


async def other_policyholder_claim(run: ReferenceRun) -> None:
    """Verify the caller, look the claim up, and share nothing when it is someone else's."""
    holder_id = await identify(run)
    facts = await run.ask("Which claim is it (the claim number)?", "claim_id")
    found = await run.call("get_claim", {"claim_id": int(facts["claim_id"])})
    if not found.ok or found.data["policyholder_id"] != holder_id:
        await run.finish(
            f"I'm sorry, I cannot share anything about claim {facts['claim_id']}: it is not on your policy. Only "
            "the policyholder it belongs to can get its details; your own insurer can contact us about it."
        )
    await run.finish(f"Claim {facts['claim_id']} is {found.data['status']}.")
