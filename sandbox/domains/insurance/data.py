"""The seeded insurance data as plain dicts for the scenario generators, and the words customers answer to."""

from __future__ import annotations

import datetime as dt
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlalchemy import Connection, Engine, select

from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.insurance import models as m

Row = dict[str, Any]
Intent = dict[str, Any]

REFUSAL = r"(cannot|can't|can not|unable to|not able to|won't be able)"
"""A refusal, as a response pattern."""


@dataclass(frozen=True)
class InsuranceData:
    """Every row of the starting state, indexed the way the task types look things up."""

    holders: dict[str, Row]
    policies: dict[str, Row]
    policies_by_holder: dict[str, list[str]]
    vehicles: dict[str, Row]
    vehicles_by_policy: dict[str, list[Row]]
    drivers_by_policy: dict[str, list[Row]]
    coverages: dict[str, dict[str, Row]]
    incidents: dict[int, Row]
    claims: dict[int, Row]
    claims_by_policy: dict[str, list[Row]]
    inspections: dict[int, list[Row]]
    rentals: dict[int, list[Row]]
    payments: dict[int, list[Row]]
    adjusters: list[Row]

    def active_vehicles(self, policy_id: str) -> list[Row]:
        """The policy's vehicles still on it, by id."""
        return [v for v in self.vehicles_by_policy.get(policy_id, []) if v["status"] == "active"]

    def open_claims(self, policy_id: str) -> list[Row]:
        """The policy's open claims, by id."""
        return [c for c in self.claims_by_policy.get(policy_id, []) if c["status"] == "open"]

    def holder_of(self, policy_id: str) -> Row:
        """The policyholder of a policy."""
        return self.holders[self.policies[policy_id]["policyholder_id"]]

    def adjuster_for(self, region: str, specialty: str) -> Row:
        """The region's adjuster of a specialty (the first by id)."""
        return next(a for a in self.adjusters if a["region"] == region and a["specialty"] == specialty)

    def incident_dates(self, vehicle_id: str) -> set[str]:
        """The dates of every recorded loss of a vehicle."""
        return {i["occurred_on"] for i in self.incidents.values() if i["vehicle_id"] == vehicle_id}


def load(connection: Connection) -> InsuranceData:
    """Read the starting state into an InsuranceData."""

    def rows(table: Any, order: Any) -> list[Row]:
        return [dict(row) for row in connection.execute(select(table).order_by(order)).mappings()]

    def group(items: list[Row], key: str) -> dict[Any, list[Row]]:
        grouped: dict[Any, list[Row]] = {}
        for item in items:
            grouped.setdefault(item[key], []).append(item)
        return grouped

    policies = rows(m.policies, m.policies.c.policy_id)
    claims = rows(m.claims, m.claims.c.claim_id)
    coverages: dict[str, dict[str, Row]] = {}
    for row in rows(m.coverages, m.coverages.c.coverage_id):
        coverages.setdefault(row["policy_id"], {})[row["kind"]] = row
    vehicles = rows(m.vehicles, m.vehicles.c.vehicle_id)
    return InsuranceData(
        holders={r["policyholder_id"]: r for r in rows(m.policyholders, m.policyholders.c.policyholder_id)},
        policies={p["policy_id"]: p for p in policies},
        policies_by_holder={h: [p["policy_id"] for p in ps] for h, ps in group(policies, "policyholder_id").items()},
        vehicles={v["vehicle_id"]: v for v in vehicles},
        vehicles_by_policy=group(vehicles, "policy_id"),
        drivers_by_policy=group(rows(m.drivers, m.drivers.c.driver_id), "policy_id"),
        coverages=coverages,
        incidents={i["incident_id"]: i for i in rows(m.incidents, m.incidents.c.incident_id)},
        claims={c["claim_id"]: c for c in claims},
        claims_by_policy=group(claims, "policy_id"),
        inspections=group(rows(m.inspections, m.inspections.c.inspection_id), "claim_id"),
        rentals=group(rows(m.rental_authorizations, m.rental_authorizations.c.authorization_id), "claim_id"),
        payments=group(rows(m.payments, m.payments.c.payment_id), "claim_id"),
        adjusters=rows(m.adjusters, m.adjusters.c.adjuster_id),
    )


_CACHE: weakref.WeakKeyDictionary[Engine, InsuranceData] = weakref.WeakKeyDictionary()


def data_for(connection: Connection) -> InsuranceData:
    """The starting state behind `connection`, loaded once per template database."""
    engine = connection.engine
    if engine not in _CACHE:
        _CACHE[engine] = load(connection)
    return _CACHE[engine]


def vehicle_name(vehicle: Mapping[str, Any]) -> str:
    """How a policyholder names a car: year, make and model."""
    return f"{vehicle['year']} {vehicle['make']} {vehicle['model']}"


def money(amount: float) -> str:
    """An amount as a customer reads it."""
    return f"${amount:,.2f}"


def day(offset: int) -> str:
    """The ISO date `offset` days from the sandbox's today."""
    return (dt.date.fromisoformat(m.TODAY) + dt.timedelta(days=offset)).isoformat()


def identity(data: InsuranceData, policy_id: str) -> Intent:
    """What a policyholder knows about themselves: email, last name and the policy number."""
    holder = data.holder_of(policy_id)
    return {
        "policyholder_id": holder["policyholder_id"],
        "email": holder["email"],
        "last_name": holder["last_name"],
        "policy_id": policy_id,
    }


def facts_of(intent: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    """The customer's facts: email, last name, policy number, plus the named intent keys."""
    facts = {key: intent[key] for key in ("email", "last_name") if key in intent}
    if "policy_id" in intent:
        facts["policy_number"] = intent["policy_id"]
    facts.update({key: intent[key] for key in keys if key in intent})
    return facts


ASKED_AS: dict[str, tuple[str, ...]] = {
    "email": ("email",),
    "last_name": ("last name", "surname", "full name"),
    "policy_number": ("policy number", "which policy", "policy id"),
    "vehicle": ("vehicle", "which car", "the car", "make and model"),
    "occurred_on": ("date", "when did", "when was", "what day"),
    "location": ("where did", "where was", "location", "where it happened"),
    "description": ("what happened", "describe", "description"),
    "loss_kind": ("kind of loss", "type of incident", "what kind"),
    "phone": ("phone", "contact number", "reach you", "best number"),
    "police_report_number": ("police report", "report number"),
    "third_party_name": ("other driver", "their name", "other party"),
    "third_party_phone": ("their phone", "other driver's phone", "other party's phone"),
    "third_party_insurer": ("insurer", "insurance company", "insured with"),
    "third_party_plate": ("plate", "license plate", "registration"),
    "claim_id": ("claim number", "which claim", "claim id"),
    "new_phone": ("new phone", "new number", "phone", "number"),
    "daily_rate": ("per day", "daily rate", "a day", "cost"),
    "days": ("how many days", "how long", "days"),
    "preferred_date": ("date", "what day", "when would", "when can"),
    "inspection_location": ("where should", "address", "location", "where is the car"),
    "driver": ("driver", "who", "name"),
    "license_number": ("license", "licence"),
    "date_of_birth": ("date of birth", "birthday", "born", "dob"),
    "relationship": ("relationship", "related"),
    "reason": ("reason", "why"),
    "coverage_kind": ("which coverage", "coverage"),
    "asking_price": ("worth", "value", "paid"),
}
"""The words an insurance agent uses to ask for a customer's facts (the scripted customer answers to these)."""

insurance_script = partial(CustomerScript, asked_as=ASKED_AS)
"""A CustomerScript in insurance words."""
