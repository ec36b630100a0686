"""Task family: policy servicing. Mid-term changes to an active policy (add a driver, remove a vehicle),
each moving the premium, and the read-only coverage question. Covers add_driver, remove_vehicle and
coverage_inquiry. The reference plans sit beside their generators."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection

from passhat.checks import Check, all_of, inserted, no_other_writes, response_contains, updated
from passhat.sandbox.agents import ReferenceRun, identify, lookup, perform_write
from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.insurance import models as m
from passhat.sandbox.domains.insurance.data import (
    Intent,
    data_for,
    day,
    facts_of,
    identity,
    insurance_script,
    money,
    vehicle_name,
)
from passhat.sandbox.domains.insurance.systems.policies import driver_surcharge

_WHO = {"spouse": "spouse", "child": "son", "other": "housemate"}
_FIRST = ("Jonah", "Elif", "Marta", "Tariq", "Sienna", "Arjun", "Freya", "Mateus", "Lina", "Oskar")


async def _policy(run: ReferenceRun, question: str, *keys: str) -> dict[str, Any]:
    """Ask for the policy number (and `keys`) and open the policy: one chance of a mistyped lookup."""
    facts = await run.ask(question, "policy_number", *keys)
    found = await lookup(
        run,
        "get_policy",
        {"policy_id": str(facts["policy_number"])},
        typed="policy_id",
        missing="I could not open that policy.",
    )
    policy: dict[str, Any] = found.data
    return policy


def _active(policy: Mapping[str, Any]) -> bool:
    return bool(policy["status"] == "active")


# -- add_driver -----------------------------------------------------------------------------------------------


def driver_candidates(connection: Connection) -> list[Intent]:
    """Every active policy of a policyholder with another active policy (the sibling); a new driver each."""
    data = data_for(connection)
    found: list[Intent] = []
    for policy_id, policy in sorted(data.policies.items()):
        holder = policy["policyholder_id"]
        others = [p for p in data.policies_by_holder[holder] if p != policy_id and _active(data.policies[p])]
        if not _active(policy) or not others:
            continue
        rng = random.Random(f"driver/{policy_id}")
        relationship = rng.choice(m.RELATIONSHIPS)
        young = relationship == "child" or rng.random() < 0.3
        born = (
            day(-365 * rng.randint(17, 23) - rng.randint(0, 300))
            if young
            else f"{rng.randint(1960, 1995)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"
        )
        surcharge = driver_surcharge(born)
        found.append(
            {
                **identity(data, policy_id),
                "driver": f"{rng.choice(_FIRST)} {data.holders[holder]['last_name']}",
                "license_number": f"D{rng.randint(1000000, 9999999)}",
                "date_of_birth": born,
                "relationship": relationship,
                "premium": round(policy["premium"] + surcharge, 2),
            }
        )
    return found


def driver_script(intent: Mapping[str, Any]) -> CustomerScript:
    return insurance_script(
        goal=f"Add {intent['driver']} ({intent['relationship']}) as a driver on policy {intent['policy_id']}.",
        opening=f"Hello, I'd like to add my {_WHO[intent['relationship']]} {intent['driver']} as a driver on my "
        "car insurance.",
        facts=facts_of(intent, "driver", "license_number", "date_of_birth", "relationship"),
        stated=("driver", "relationship"),
        unknown=("policyholder_id",),
    )


def driver_check(intent: Mapping[str, Any]) -> Check:
    first, last = str(intent["driver"]).split(" ", 1)
    return all_of(
        inserted(
            "drivers",
            {
                "policy_id": intent["policy_id"],
                "first_name": first,
                "last_name": last,
                "license_number": intent["license_number"],
                "date_of_birth": intent["date_of_birth"],
                "relationship": intent["relationship"],
                "status": "active",
            },
        ),
        updated("policies", {"policy_id": intent["policy_id"]}, {"premium": intent["premium"]}),
        no_other_writes(),
    )


async def add_driver(run: ReferenceRun) -> None:
    """Verify, open the policy (active), quote the surcharge, add the driver."""
    holder_id = await identify(run)
    policy = await _policy(
        run,
        "Which policy, and the new driver's full name, license number, date of birth and relationship to you?",
        "driver",
        "license_number",
        "date_of_birth",
        "relationship",
    )
    if not _active(policy):
        await run.finish(f"I'm sorry, I cannot add a driver: policy {policy['policy_id']} is {policy['status']}.")
    first, _, last = str(run.facts["driver"]).partition(" ")
    born = str(run.facts["date_of_birth"])
    arguments = {
        "policy_id": policy["policy_id"],
        "first_name": first,
        "last_name": last,
        "license_number": str(run.facts["license_number"]),
        "date_of_birth": born,
        "relationship": str(run.facts["relationship"]),
    }
    wrong = None
    if holder_id is not None and run.has_flaw("wrong_entity"):
        profile = await run.call("get_policyholder", {"policyholder_id": holder_id})
        others = [p for p in profile.data["policies"] if p["policy_id"] != policy["policy_id"] and _active(p)]
        wrong = {**arguments, "policy_id": others[0]["policy_id"]} if others else None
    surcharge = driver_surcharge(born)
    premium = round(policy["premium"] + surcharge, 2)
    await perform_write(
        run,
        "add_driver",
        arguments,
        summary=f"I will add {run.facts['driver']} to policy {policy['policy_id']}; the annual premium rises by "
        f"{money(surcharge)} to {money(premium)}.",
        sibling=wrong,
        broken={**arguments, "date_of_birth": ""},
    )
    await run.finish(f"Done: {run.facts['driver']} is on the policy; the new annual premium is {money(premium)}.")


# -- remove_vehicle -------------------------------------------------------------------------------------------


def vehicle_candidates(connection: Connection) -> list[Intent]:
    """Each car without an open claim on an active policy with another such car (the sibling)."""
    data = data_for(connection)
    found: list[Intent] = []
    for policy_id, policy in sorted(data.policies.items()):
        if not _active(policy):
            continue
        claimed = {c["vehicle_id"] for c in data.open_claims(policy_id)}
        free = [v for v in data.active_vehicles(policy_id) if v["vehicle_id"] not in claimed]
        if len(free) < 2:
            continue
        for vehicle in free:
            rng = random.Random(f"remove/{vehicle['vehicle_id']}")
            found.append(
                {
                    **identity(data, policy_id),
                    "vehicle_id": vehicle["vehicle_id"],
                    "vehicle": vehicle_name(vehicle),
                    "reason": rng.choice(("sold", "no longer driven")),
                    "premium": round(policy["premium"] - vehicle["annual_premium"], 2),
                }
            )
    return found


def vehicle_script(intent: Mapping[str, Any]) -> CustomerScript:
    why = "I sold it" if intent["reason"] == "sold" else "nobody drives it any more"
    return insurance_script(
        goal=f"Take the {intent['vehicle']} off policy {intent['policy_id']} ({intent['reason']}).",
        opening=f"Hi, please remove my {intent['vehicle']} from my insurance, {why}.",
        facts=facts_of(intent, "vehicle", "reason"),
        stated=("vehicle", "reason"),
        unknown=("vehicle_id",),
    )


def vehicle_check(intent: Mapping[str, Any]) -> Check:
    return all_of(
        updated(
            "vehicles",
            {"vehicle_id": intent["vehicle_id"]},
            {"status": "removed", "removed_on": m.TODAY, "removal_reason": intent["reason"]},
        ),
        updated("policies", {"policy_id": intent["policy_id"]}, {"premium": intent["premium"]}),
        no_other_writes(),
    )


async def remove_vehicle(run: ReferenceRun) -> None:
    """Verify, open the policy, make sure the car has no open claim and is not the last one, remove it."""
    await identify(run)
    policy = await _policy(run, "Which policy and which vehicle, and why is it coming off?", "vehicle", "reason")
    vehicles = [v for v in policy["vehicles"] if v["status"] == "active"]
    vehicle = next((v for v in vehicles if vehicle_name(v) == run.facts["vehicle"]), None)
    if vehicle is None or len(vehicles) < 2:
        await run.finish("I'm sorry, I cannot remove that vehicle: it is not on the policy or it is the only one.")
        return
    listed = await run.call("find_claims", {"policy_id": policy["policy_id"]})
    claimed = {c["vehicle_id"] for c in listed.data["claims"] if c["status"] == "open"} if listed.ok else set()
    if vehicle["vehicle_id"] in claimed:
        await run.finish("I'm sorry, I cannot remove this vehicle while it has an open claim.")
    arguments = {
        "policy_id": policy["policy_id"],
        "vehicle_id": vehicle["vehicle_id"],
        "reason": str(run.facts["reason"]),
    }
    others = [v for v in vehicles if v["vehicle_id"] not in claimed | {vehicle["vehicle_id"]}]
    wrong = {**arguments, "vehicle_id": others[0]["vehicle_id"]} if others else None
    premium = round(policy["premium"] - vehicle["annual_premium"], 2)
    await perform_write(
        run,
        "remove_vehicle",
        arguments,
        summary=f"I will remove the {run.facts['vehicle']} from policy {policy['policy_id']} today; the annual "
        f"premium drops to {money(premium)}.",
        sibling=wrong,
        broken={**arguments, "reason": ""},
    )
    await run.finish(
        f"Done: the {run.facts['vehicle']} is off your policy; the new annual premium is {money(premium)}."
    )


# -- coverage_inquiry (read-only) -----------------------------------------------------------------------------


def coverage_candidates(connection: Connection) -> list[Intent]:
    """Every collision, comprehensive and rental coverage of an active policy; the caller knows the policy
    number and their last name, not the email on file."""
    data = data_for(connection)
    found: list[Intent] = []
    for policy_id, policy in sorted(data.policies.items()):
        if not _active(policy):
            continue
        for kind in ("collision", "comprehensive", "rental"):
            coverage = data.coverages.get(policy_id, {}).get(kind)
            if coverage is None:
                continue
            if kind == "rental":
                # The amount with its unit: a limit of $30 a day and a maximum of 30 days are different facts.
                answer = [f"{coverage['per_day_limit']:.2f} a day", f"{coverage['max_days']} days"]
            else:
                answer = [f"{coverage['limit_amount']:.2f}", f"{coverage['deductible']:.2f}"]
            intent = {**identity(data, policy_id), "coverage_kind": kind, "answer": answer}
            intent.pop("email")
            found.append(intent)
    return found


def coverage_script(intent: Mapping[str, Any]) -> CustomerScript:
    kind = intent["coverage_kind"]
    question = (
        "how much my rental coverage pays per day and for how many days"
        if kind == "rental"
        else f"the limit and deductible of my {kind} coverage"
    )
    return insurance_script(
        goal=f"Learn {question} on policy {intent['policy_id']}.",
        opening=f"Hi, could you tell me {question}?",
        facts=facts_of(intent, "coverage_kind"),
        stated=("coverage_kind",),
        unknown=("email", "policyholder_id"),
    )


def coverage_check(intent: Mapping[str, Any]) -> Check:
    return all_of(response_contains(*intent["answer"]), no_other_writes())


async def coverage_inquiry(run: ReferenceRun) -> None:
    """Verify (by policy number and last name when the email is unknown), open the policy, answer."""
    await identify(run)
    policy = await _policy(run, "Which policy is it (the policy number)?")
    kind = str(run.facts["coverage_kind"])
    coverage = next((c for c in policy["coverages"] if c["kind"] == kind), None)
    if coverage is None:
        await run.finish(f"Your policy {policy['policy_id']} has no {kind} coverage.")
        return
    if kind == "rental":
        await run.finish(
            f"Your rental coverage pays up to {money(coverage['per_day_limit'])} a day for up to "
            f"{coverage['max_days']} days."
        )
    await run.finish(
        f"Your {kind} coverage has a limit of {money(coverage['limit_amount'])} and a deductible of "
        f"{money(coverage['deductible'])}."
    )
