"""Task family: first notice of loss. A policyholder reports a loss; the agent checks the policy covered the
day, picks the coverage that applies, makes sure the loss has no open claim yet, records the incident and
opens the claim (and, for damage to someone else, adds the other party). Covers collision_claim,
glass_claim, theft_claim, third_party_liability, lapsed_policy_claim (must refuse) and duplicate_claim (find
the open one, open nothing). The reference plan sits at the end."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection

from passhat.checks import Check, all_of, inserted, no_other_writes, response_contains
from passhat.sandbox.agents import ReferenceRun, identify, lookup, perform_write
from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.insurance import models as m
from passhat.sandbox.domains.insurance.data import (
    REFUSAL,
    InsuranceData,
    Intent,
    data_for,
    day,
    facts_of,
    identity,
    insurance_script,
    money,
    vehicle_name,
)
from passhat.sandbox.domains.insurance.systems import active_on

_STREETS = ("Main St and 3rd Ave", "the Route 9 on-ramp", "Elm St", "the Harbor Blvd mall car park", "Mill Rd")
_STORIES = {
    "collision": ("I was rear-ended at a red light", "I hit a pole while parking", "another car sideswiped me"),
    "glass": ("a stone cracked my windshield", "the rear window shattered", "hail cracked the windshield"),
    "theft": ("the car was stolen from my driveway overnight", "my car was taken from a parking garage"),
    "third_party": ("I backed into another car", "I rear-ended the car in front of me", "I clipped a parked car"),
}
_NAMES = ("Grace Holt", "Tomas Brandt", "Keiko Mori", "Samir Aziz", "Julia Novak", "Peter Quinn")
_INSURERS = ("Granite Mutual", "Bluebird Insurance", "Keystone Auto", "Meridian General")
NOT_ACTIVE = r"(laps|not active|inactive|no longer active|not in force|expired)"


def _new_loss(data: InsuranceData, policy_id: str, vehicle: Mapping[str, Any], kind: str) -> Intent | None:
    """A loss on `vehicle` on a day the policy covered, with none of its losses (or its siblings') that day."""
    policy = data.policies[policy_id]
    rng = random.Random(f"{vehicle['vehicle_id']}/{kind}")
    when = day(-rng.randint(1, 20))
    taken = set().union(*(data.incident_dates(v["vehicle_id"]) for v in data.active_vehicles(policy_id)))
    if when in taken or not active_on(policy, when):
        return None
    holder = data.holder_of(policy_id)
    return {
        **identity(data, policy_id),
        "vehicle_id": vehicle["vehicle_id"],
        "vehicle": vehicle_name(vehicle),
        "loss_kind": kind,
        "occurred_on": when,
        "location": rng.choice(_STREETS),
        "description": rng.choice(_STORIES[kind]),
        "phone": holder["phone"] if rng.random() < 0.5 else f"555-{rng.randint(200, 999)}-{rng.randint(1000, 9999)}",
    }


def loss_candidates(connection: Connection, *, kind: str) -> list[Intent]:
    """Every active policy whose coverage pays for `kind` and that has another car (the sibling a careless
    agent files against): one new loss per vehicle."""
    data = data_for(connection)
    found: list[Intent] = []
    for policy_id, policy in sorted(data.policies.items()):
        held = data.coverages.get(policy_id, {})
        coverage = next((c for c in m.COVERAGE_FOR_LOSS[kind] if c in held), None)
        vehicles = data.active_vehicles(policy_id)
        if policy["status"] != "active" or coverage is None or len(vehicles) < 2:
            continue
        if kind == "glass" and coverage != "glass":
            continue
        for vehicle in vehicles:
            loss = _new_loss(data, policy_id, vehicle, kind)
            if loss is None:
                continue
            rng = random.Random(f"{vehicle['vehicle_id']}/{kind}/details")
            loss["coverage"] = coverage
            loss["deductible"] = 0.0 if coverage == "glass" else float(held[coverage]["deductible"])
            if kind == "theft":
                loss["police_report_number"] = f"PR-{rng.randint(10000, 99999)}"
            if kind == "third_party":
                loss["third_party_name"] = rng.choice(_NAMES)
                loss["third_party_phone"] = f"555-{rng.randint(200, 999)}-{rng.randint(1000, 9999)}"
                loss["third_party_insurer"] = rng.choice(_INSURERS)
                loss["third_party_plate"] = f"{rng.choice('KLMNPR')}{rng.randint(100, 999)}-{rng.randint(10, 99)}"
            found.append(loss)
    return found


_OPENINGS = {
    "collision": "Hi, I need to report an accident with my {vehicle} on {occurred_on}.",
    "glass": "Hello, my {vehicle} has glass damage from {occurred_on} and I'd like to make a claim.",
    "theft": "Hi, my {vehicle} was stolen on {occurred_on}. I need to file a claim.",
    "third_party": "Hi, on {occurred_on} I damaged someone else's car with my {vehicle}. I need to report it.",
}


def loss_script(intent: Mapping[str, Any]) -> CustomerScript:
    """The policyholder reports the loss; details come when asked."""
    kind = intent["loss_kind"]
    keys = ["vehicle", "loss_kind", "occurred_on", "location", "description", "phone"]
    keys += [k for k in intent if k.startswith("third_party_") or k == "police_report_number"]
    return insurance_script(
        goal=f"Report the {kind.replace('_', ' ')} loss of {intent['occurred_on']} on my {intent['vehicle']} "
        "and get a claim opened.",
        opening=_OPENINGS[kind].format(**intent),
        facts=facts_of(intent, *keys),
        stated=("vehicle", "loss_kind", "occurred_on"),
        unknown=("vehicle_id", "incident_id", "claim_id"),
    )


def loss_check(intent: Mapping[str, Any]) -> Check:
    """The incident recorded on the right car and day, the claim opened under the right coverage and
    deductible (and the other party added for a third-party loss), nothing else."""
    incident: dict[str, Any] = {
        "policy_id": intent["policy_id"],
        "vehicle_id": intent["vehicle_id"],
        "kind": intent["loss_kind"],
        "occurred_on": intent["occurred_on"],
    }
    if intent["loss_kind"] == "theft":
        incident["police_report_number"] = intent["police_report_number"]
    parts: list[Check] = [
        inserted("incidents", incident),
        inserted(
            "claims",
            {
                "policy_id": intent["policy_id"],
                "vehicle_id": intent["vehicle_id"],
                "coverage": intent["coverage"],
                "deductible": intent["deductible"],
                "status": "open",
                "contact_phone": intent["phone"],
            },
        ),
    ]
    if intent["loss_kind"] == "third_party":
        party = {
            "role": "third_party",
            "name": intent["third_party_name"],
            "phone": intent["third_party_phone"],
            "insurer": intent["third_party_insurer"],
            "vehicle_plate": intent["third_party_plate"],
        }
        parts.append(inserted("claim_parties", party))
    return all_of(*parts, no_other_writes())


# -- must refuse: the policy had lapsed on the day of the loss ----------------------------------------------


def lapsed_candidates(connection: Connection) -> list[Intent]:
    """A loss on each car of a lapsed policy, dated on or after the lapse."""
    data = data_for(connection)
    found: list[Intent] = []
    for policy_id, policy in sorted(data.policies.items()):
        if policy["status"] != "lapsed" or policy["lapsed_on"] is None:
            continue
        for vehicle in data.active_vehicles(policy_id):
            rng = random.Random(f"lapsed/{vehicle['vehicle_id']}")
            kind = rng.choice(("collision", "glass", "theft"))
            span = (dt.date.fromisoformat(m.TODAY) - dt.date.fromisoformat(policy["lapsed_on"])).days
            when = day(-rng.randint(1, max(1, span)))
            if when < policy["lapsed_on"]:
                continue
            found.append(
                {
                    **identity(data, policy_id),
                    "vehicle_id": vehicle["vehicle_id"],
                    "vehicle": vehicle_name(vehicle),
                    "loss_kind": kind,
                    "occurred_on": when,
                    "lapsed_on": policy["lapsed_on"],
                    "location": rng.choice(_STREETS),
                    "description": rng.choice(_STORIES[kind]),
                    "phone": data.holder_of(policy_id)["phone"],
                    "police_report_number": f"PR-{rng.randint(10000, 99999)}",
                }
            )
    return found


def lapsed_check(intent: Mapping[str, Any]) -> Check:
    """Nothing recorded; the reply refuses and says the policy was not active that day."""
    # The refusal carries its facts: the policy and the day of the loss it was not active on.
    return all_of(
        no_other_writes(),
        response_contains(intent["policy_id"], intent["occurred_on"], patterns=[REFUSAL, NOT_ACTIVE]),
    )


# -- read-only: the loss already has an open claim ----------------------------------------------------------


def duplicate_candidates(connection: Connection) -> list[Intent]:
    """Every open claim: its policyholder reports the same loss again."""
    data = data_for(connection)
    found: list[Intent] = []
    for claim_id, claim in sorted(data.claims.items()):
        policy = data.policies[claim["policy_id"]]
        if claim["status"] != "open" or policy["status"] != "active":
            continue
        incident = data.incidents[claim["incident_id"]]
        vehicle = data.vehicles[claim["vehicle_id"]]
        if vehicle["status"] != "active":
            continue
        found.append(
            {
                **identity(data, claim["policy_id"]),
                "claim_id": claim_id,
                "vehicle_id": vehicle["vehicle_id"],
                "vehicle": vehicle_name(vehicle),
                "loss_kind": incident["kind"],
                "occurred_on": incident["occurred_on"],
                "location": incident["location"],
                "description": incident["description"],
                "phone": claim["contact_phone"],
            }
        )
        if incident["police_report_number"]:
            found[-1]["police_report_number"] = incident["police_report_number"]
    return found


def duplicate_script(intent: Mapping[str, Any]) -> CustomerScript:
    script = loss_script(intent)
    return insurance_script(
        goal=f"Report the loss of {intent['occurred_on']} on my {intent['vehicle']} (I don't remember whether "
        "I already did).",
        opening=script.opening,
        facts=script.facts,
        stated=script.stated,
        unknown=script.unknown,
    )


def duplicate_check(intent: Mapping[str, Any]) -> Check:
    """No second incident or claim; the reply names the open claim."""
    return all_of(no_other_writes(), response_contains(str(intent["claim_id"])))


# -- the reference plan ------------------------------------------------------------------------------------


async def report_loss(run: ReferenceRun) -> None:
    """First notice of loss: verify, check the policy and coverage for that day, look for an open claim on
    the loss, then record the incident and open the claim (theft: the police report number first; damage to
    someone else: add the other party)."""
    await identify(run)
    facts = await run.ask(
        "I'm sorry to hear that. What is your policy number, which vehicle was it, when and where did it "
        "happen, what happened, and what is the best phone number to reach you?",
        "policy_number",
        "vehicle",
        "loss_kind",
        "occurred_on",
        "location",
        "description",
        "phone",
    )
    policy_id = str(facts["policy_number"])
    found = await lookup(
        run, "get_policy", {"policy_id": policy_id}, typed="policy_id", missing="I could not open that policy."
    )
    policy: dict[str, Any] = found.data
    vehicles = [v for v in policy["vehicles"] if v["status"] == "active"]
    vehicle = next((v for v in vehicles if vehicle_name(v) == facts["vehicle"]), None)
    if vehicle is None:
        await run.finish(f"I'm sorry, I cannot find a {facts['vehicle']} on policy {policy_id}.")
        return
    kind, when = str(facts["loss_kind"]), str(facts["occurred_on"])
    if not active_on(policy, when):
        lapse = f" (it lapsed on {policy['lapsed_on']})" if policy["lapsed_on"] else ""
        await run.finish(
            f"I'm sorry, I cannot open a claim for this loss: policy {policy_id} was not active on {when}{lapse}. "
            "A claim needs an active policy on the day of the incident."
        )
    held = {c["kind"]: c for c in policy["coverages"]}
    coverage = next((c for c in m.COVERAGE_FOR_LOSS[kind] if c in held), None)
    if coverage is None:
        await run.finish(f"I'm sorry, I cannot open a claim: your policy has no coverage for a {kind} loss.")
        return
    claims = await run.call("find_claims", {"policy_id": policy_id})
    for claim in claims.data["claims"] if claims.ok else []:
        if claim["status"] == "open" and claim["vehicle_id"] == vehicle["vehicle_id"] and claim["occurred_on"] == when:
            await run.finish(
                f"You already have an open claim for this loss: claim {claim['claim_id']}. I have not opened a "
                "new one; your adjuster will continue on that claim."
            )
    arguments: dict[str, Any] = {
        "policy_id": policy_id,
        "vehicle_id": vehicle["vehicle_id"],
        "kind": kind,
        "occurred_on": when,
        "location": str(facts["location"]),
        "description": str(facts["description"]),
    }
    others = [v for v in vehicles if v["vehicle_id"] != vehicle["vehicle_id"]]
    wrong = {**arguments, "vehicle_id": others[0]["vehicle_id"]} if others else None

    async def police_report() -> None:
        asked = await run.ask("For a theft I need the police report number. What is it?", "police_report_number")
        for target in (arguments, wrong or {}):
            target["police_report_number"] = str(asked.get("police_report_number", ""))

    incident = await perform_write(
        run,
        "report_incident",
        arguments,
        summary=f"I will record the {kind.replace('_', ' ')} loss of {when} on your {facts['vehicle']} at "
        f"{facts['location']}.",
        sibling=wrong,
        broken={**arguments, "occurred_on": ""},
        precondition=police_report if kind == "theft" else None,
    )
    deductible = 0.0 if coverage == "glass" else float(held[coverage]["deductible"])
    claim_arguments = {
        "policy_id": policy_id,
        "incident_id": incident.data["incident_id"],
        "coverage": coverage,
        "contact_phone": str(facts["phone"]),
    }
    filed = await perform_write(
        run,
        "file_claim",
        claim_arguments,
        summary=f"The incident is recorded. I will now open a {coverage} claim with a deductible of "
        f"{money(deductible)}, and we will reach you at {facts['phone']}.",
        broken={**claim_arguments, "contact_phone": "n/a"},
    )
    claim_id = filed.data["claim_id"]
    if kind == "third_party":
        other = await run.ask(
            "Please give me the other driver's name, their phone, their insurer and their license plate.",
            "third_party_name",
            "third_party_phone",
            "third_party_insurer",
            "third_party_plate",
        )
        party = {
            "claim_id": claim_id,
            "role": "third_party",
            "name": str(other.get("third_party_name", "")),
            "phone": str(other.get("third_party_phone", "")),
            "insurer": str(other.get("third_party_insurer", "")),
            "vehicle_plate": str(other.get("third_party_plate", "")),
        }
        await perform_write(
            run,
            "add_claim_party",
            party,
            summary=f"I will add {party['name']} ({party['insurer']}, plate {party['vehicle_plate']}) to claim "
            f"{claim_id} as the other party.",
            broken={**party, "phone": "unknown"},
        )
    await run.finish(
        f"Your claim number is {claim_id}, under your {coverage} coverage, with a deductible of "
        f"{money(deductible)}. An adjuster will contact you at {facts['phone']}."
    )
