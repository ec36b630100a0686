"""A deterministic auto-insurance data generator: the same (seed, size) always gives the same database.

Policyholders in five regions hold one or two policies (most active, some lapsed), each with one to three
vehicles, the drivers on it and its coverages. About half of the active policies carry claim history: every
claim has its incident, many are open, some have an adjuster, an inspection, a total-loss finding, a rental
or a payment. Adjusters cover each region, one for damage inspections and one for total losses.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from sqlalchemy import Connection, insert

from passhat.sandbox.domain import DomainError
from passhat.sandbox.domains.insurance import models as m

SIZES: dict[str, int] = {"small": 120, "default": 400}
"""Policyholders per seed size."""

REGIONS: dict[str, str] = {"north": "554", "south": "787", "east": "021", "west": "973", "central": "641"}
"""Region -> the zip prefix of its policyholders."""

_FIRST = (
    "Ava", "Liam", "Noah", "Emma", "Olivia", "Mia", "Lucas", "Yusuf", "Sofia", "Mei", "Omar", "Ines", "Ravi",
    "Chloe", "Mateo", "Aisha", "Ethan", "Nora", "Hugo", "Lena", "Daniel", "Priya", "Ivan", "Zara", "Leo",
    "Amara", "Felix", "Hana", "Kai", "Maya",
)  # fmt: skip
_LAST = (
    "Garcia", "Smith", "Chen", "Patel", "Kim", "Novak", "Silva", "Muller", "Rossi", "Haddad", "Okafor",
    "Larsen", "Ito", "Moreau", "Kowalski", "Brown", "Lopez", "Nguyen", "Sato", "Schmidt", "Costa", "Ahmed",
    "Jensen", "Dubois", "Walker", "Reyes", "Fischer", "Byrne", "Horvat", "Lindqvist",
)  # fmt: skip
_CARS = (
    ("Honda", "Civic", 24000), ("Toyota", "Camry", 28000), ("Ford", "F-150", 41000), ("Subaru", "Outback", 31000),
    ("Tesla", "Model 3", 39000), ("Mazda", "CX-5", 29000), ("Hyundai", "Elantra", 21000), ("Kia", "Sorento", 33000),
    ("Volkswagen", "Golf", 25000), ("Chevrolet", "Bolt", 27000), ("Nissan", "Rogue", 28500), ("BMW", "X3", 47000),
    ("Jeep", "Wrangler", 38000), ("Volvo", "XC60", 45000), ("Toyota", "RAV4", 30500), ("Honda", "Odyssey", 37000),
)  # fmt: skip
_STREETS = ("Main St", "Oak Ave", "Route 9", "Elm St", "Harbor Blvd", "5th Ave", "Lakeshore Dr", "Mill Rd")
_INSURERS = ("Granite Mutual", "Bluebird Insurance", "Keystone Auto", "Meridian General")
_LOSSES = ("collision", "glass", "theft", "third_party")
_STORIES = {
    "collision": "rear-ended at a red light",
    "glass": "a stone cracked the windshield",
    "theft": "the car was stolen overnight",
    "third_party": "backed into another car in a parking lot",
}


def _day(offset: int) -> str:
    return (dt.date.fromisoformat(m.TODAY) + dt.timedelta(days=offset)).isoformat()


class _Ids:
    """Unique readable identifiers, drawn from the generator's random stream."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def make(self, pattern: str) -> str:
        while True:
            value = pattern.format(
                n=self.rng.randint(100000, 999999), letter=self.rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ")
            )
            if value not in self.used:
                self.used.add(value)
                return value


def seed(connection: Connection, seed: int = 0, size: str = "small") -> None:
    """Fill an empty database with a deterministic portfolio of policies and claims."""
    if size not in SIZES:
        raise DomainError(f"no seed size {size!r} for insurance; sizes: {', '.join(SIZES)}")
    rng = random.Random(f"insurance/{seed}/{size}")
    ids = _Ids(rng)
    rows: dict[str, list[dict[str, Any]]] = {table: [] for table in m.metadata.tables}

    for region in REGIONS:
        for specialty in ("auto_damage", "total_loss"):
            rows["adjusters"].append(
                {
                    "adjuster_id": ids.make("ADJ-{n}"),
                    "name": f"{rng.choice(_FIRST)} {rng.choice(_LAST)}",
                    "region": region,
                    "specialty": specialty,
                    "phone": f"555-{rng.randint(200, 999)}-{rng.randint(1000, 9999)}",
                }
            )
    by_region = {(a["region"], a["specialty"]): a["adjuster_id"] for a in rows["adjusters"]}

    claim_id = 1000
    incident_id = 500
    for index in range(SIZES[size]):
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        region = rng.choice(sorted(REGIONS))
        holder = {
            "policyholder_id": f"PH-{index + 1:05d}",
            "first_name": first,
            "last_name": last,
            "email": f"{first.lower()}.{last.lower()}{index + 1}@example.net",
            "phone": f"555-{rng.randint(200, 999)}-{rng.randint(1000, 9999)}",
            "zip": f"{REGIONS[region]}{rng.randint(10, 99)}",
            "region": region,
        }
        rows["policyholders"].append(holder)
        for policy_index in range(1 if rng.random() < 0.6 else 2):
            start = _day(-rng.randint(30, 330))
            lapsed = policy_index == 0 and rng.random() < 0.15
            policy_id = ids.make("AUT-{n}-{letter}")
            lapsed_on = _day(-rng.randint(8, 25)) if lapsed else None
            if lapsed_on is not None and lapsed_on <= start:
                start = _day(-rng.randint(60, 330))
            cars = rng.sample(_CARS, rng.choice((1, 2, 2, 3, 3)))
            vehicles: list[dict[str, Any]] = []
            for make, model, price in cars:
                year = rng.randint(2012, 2025)
                value = round(price * (0.92 ** (2026 - year)) * rng.uniform(0.9, 1.05), -1)
                vehicles.append(
                    {
                        "vehicle_id": ids.make("V-{n}"),
                        "policy_id": policy_id,
                        "vin": ids.make("1HG{n}{letter}{letter}0{n}"),
                        "year": year,
                        "make": make,
                        "model": model,
                        "actual_cash_value": value,
                        "annual_premium": float(rng.choice((640, 720, 810, 905, 980, 1120))),
                        "status": "active",
                        "removed_on": None,
                        "removal_reason": None,
                    }
                )
            rows["vehicles"].extend(vehicles)
            drivers = [
                {
                    "policy_id": policy_id,
                    "first_name": first,
                    "last_name": last,
                    "license_number": f"D{rng.randint(1000000, 9999999)}",
                    "date_of_birth": f"{rng.randint(1955, 1998)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                    "relationship": "named_insured",
                    "status": "active",
                    "added_on": start,
                }
            ]
            if rng.random() < 0.4:
                drivers.append(
                    {
                        **drivers[0],
                        "first_name": rng.choice(_FIRST),
                        "license_number": f"D{rng.randint(1000000, 9999999)}",
                        "date_of_birth": f"{rng.randint(1960, 2000)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                        "relationship": "spouse",
                    }
                )
            rows["drivers"].extend(drivers)
            premium = sum(v["annual_premium"] for v in vehicles) + m.DRIVER_SURCHARGE * (len(drivers) - 1)
            policy = {
                "policy_id": policy_id,
                "policyholder_id": holder["policyholder_id"],
                "status": "lapsed" if lapsed else "active",
                "term_start": start,
                "term_end": (dt.date.fromisoformat(start) + dt.timedelta(days=365)).isoformat(),
                "lapsed_on": lapsed_on,
                "premium": round(premium, 2),
            }
            rows["policies"].append(policy)
            kinds = _coverages(rng)
            for kind, (limit, deductible, per_day, days) in kinds.items():
                rows["coverages"].append(
                    {
                        "coverage_id": f"{policy_id}-{kind[:3].upper()}",
                        "policy_id": policy_id,
                        "kind": kind,
                        "limit_amount": limit,
                        "deductible": deductible,
                        "per_day_limit": per_day,
                        "max_days": days,
                    }
                )
            if lapsed or rng.random() < 0.45:
                continue
            # Claim history: each vehicle may have had losses during this term, on distinct dates.
            for vehicle in vehicles:
                used_dates: set[str] = set()
                for _ in range(rng.choice((0, 1, 2, 2))):
                    loss = rng.choice([k for k in _LOSSES if any(c in kinds for c in m.COVERAGE_FOR_LOSS[k])])
                    coverage = next(c for c in m.COVERAGE_FOR_LOSS[loss] if c in kinds)
                    first_day = (dt.date.fromisoformat(start) - dt.date.fromisoformat(m.TODAY)).days
                    occurred = _day(-rng.randint(3, max(4, -first_day - 1)))
                    if occurred in used_dates or occurred <= start:
                        continue
                    used_dates.add(occurred)
                    incident_id += 1
                    claim_id += 1
                    rows["incidents"].append(
                        {
                            "incident_id": incident_id,
                            "policy_id": policy_id,
                            "vehicle_id": vehicle["vehicle_id"],
                            "kind": loss,
                            "occurred_on": occurred,
                            "location": f"{rng.randint(10, 990)} {rng.choice(_STREETS)}",
                            "description": _STORIES[loss],
                            "police_report_number": f"PR-{rng.randint(10000, 99999)}" if loss == "theft" else None,
                            "reported_on": occurred,
                        }
                    )
                    status = "open" if rng.random() < 0.7 else "closed"
                    adjuster = by_region[(region, "auto_damage")] if rng.random() < 0.5 else None
                    deductible = 0.0 if coverage == "glass" else kinds[coverage][1]
                    total_loss = False
                    if status == "open" and loss in ("collision", "theft") and rng.random() < 0.3:
                        # Found a total loss: the region's total-loss adjuster inspected it.
                        adjuster, total_loss = by_region[(region, "total_loss")], True
                        rows["inspections"].append(
                            {
                                "claim_id": claim_id,
                                "adjuster_id": adjuster,
                                "scheduled_on": _day(-rng.randint(1, 3)),
                                "location": f"{rng.randint(10, 990)} {rng.choice(_STREETS)}",
                                "status": "completed",
                            }
                        )
                    elif adjuster is not None and rng.random() < 0.5:
                        done = status == "closed" or rng.random() < 0.6
                        rows["inspections"].append(
                            {
                                "claim_id": claim_id,
                                "adjuster_id": adjuster,
                                "scheduled_on": _day(-rng.randint(1, 3) if done else rng.randint(2, 9)),
                                "location": f"{rng.randint(10, 990)} {rng.choice(_STREETS)}",
                                "status": "completed" if done else "scheduled",
                            }
                        )
                    if status == "open" and "rental" in kinds and coverage in m.RENTAL_COVERAGES and rng.random() < 0.1:
                        rate, days = kinds["rental"][2] or 30.0, rng.randint(3, 10)
                        rows["rental_authorizations"].append(
                            {
                                "claim_id": claim_id,
                                "daily_rate": rate,
                                "days": days,
                                "total": round(rate * days, 2),
                                "status": "authorized",
                                "authorized_on": occurred,
                            }
                        )
                    if status == "closed":
                        rows["payments"].append(
                            {
                                "claim_id": claim_id,
                                "kind": "repair",
                                "amount": float(rng.randint(6, 60) * 100),
                                "payee": f"{first} {last}",
                                "status": "issued",
                                "issued_on": _day(-1),
                            }
                        )
                    if loss == "third_party":
                        rows["claim_parties"].append(
                            {
                                "claim_id": claim_id,
                                "role": "third_party",
                                "name": f"{rng.choice(_FIRST)} {rng.choice(_LAST)}",
                                "phone": f"555-{rng.randint(200, 999)}-{rng.randint(1000, 9999)}",
                                "insurer": rng.choice(_INSURERS),
                                "vehicle_plate": f"{rng.choice('ABCDEFGH')}{rng.randint(100, 999)}-{rng.randint(10, 99)}",  # noqa: E501
                            }
                        )
                    rows["claims"].append(
                        {
                            "claim_id": claim_id,
                            "policy_id": policy_id,
                            "incident_id": incident_id,
                            "vehicle_id": vehicle["vehicle_id"],
                            "coverage": coverage,
                            "status": status,
                            "deductible": deductible,
                            "contact_phone": holder["phone"],
                            "contact_email": holder["email"],
                            "opened_on": occurred,
                            "adjuster_id": adjuster,
                            "total_loss": total_loss,
                            "valuation": None,
                        }
                    )
    order = (
        "policyholders", "policies", "vehicles", "drivers", "coverages", "adjusters", "incidents", "claims",
        "claim_parties", "inspections", "rental_authorizations", "payments",
    )  # fmt: skip
    for name in order:
        if rows[name]:
            connection.execute(insert(m.metadata.tables[name]), rows[name])


def _coverages(rng: random.Random) -> dict[str, tuple[float, float, float | None, int | None]]:
    """A policy's coverages: kind -> (limit, deductible, rental per-day limit, rental max days)."""
    kinds: dict[str, tuple[float, float, float | None, int | None]] = {
        "liability": (float(rng.choice((100000, 300000, 500000))), 0.0, None, None)
    }
    if rng.random() < 0.9:
        kinds["collision"] = (float(rng.choice((40000, 60000))), float(rng.choice((500, 1000))), None, None)
    if rng.random() < 0.8:
        kinds["comprehensive"] = (float(rng.choice((40000, 60000))), float(rng.choice((250, 500))), None, None)
    if rng.random() < 0.5:
        kinds["glass"] = (2000.0, 100.0, None, None)
    if rng.random() < 0.7:
        per_day, days = float(rng.choice((30, 40, 50))), rng.choice((21, 30))
        kinds["rental"] = (per_day * days, 0.0, per_day, days)
    if rng.random() < 0.5:
        kinds["roadside"] = (150.0, 0.0, None, None)
    return kinds
