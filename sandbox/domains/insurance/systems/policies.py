"""The policy administration system: policies, their vehicles, drivers and coverages."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.insurance import models as m
from passhat.sandbox.domains.insurance.systems.common import InsuranceSystem, parse_date, required, today


def driver_surcharge(date_of_birth: str) -> float:
    """What a new driver adds to the annual premium: more for a driver under 25 today."""
    born = parse_date(date_of_birth, "date_of_birth")
    now = today()
    age = now.year - born.year - ((now.month, now.day) < (born.month, born.day))
    return m.YOUNG_DRIVER_SURCHARGE if age < m.YOUNG_DRIVER_AGE else m.DRIVER_SURCHARGE


class PolicyAdmin(InsuranceSystem):
    """Policies of verified policyholders: terms, premium, vehicles, drivers, coverages; mid-term changes."""

    @tool("lookup")
    async def get_policy(self, policy_id: str) -> dict[str, Any]:
        """A policy (by policy number, e.g. AUT-482913-K): status, term, lapse date, premium, vehicles (with
        actual cash value), drivers and coverages (limits, deductibles, rental per-day limit and max days)."""
        policy = self._policy(policy_id)
        key = policy["policy_id"]
        vehicles = sorted(self.rows(m.vehicles, policy_id=key), key=lambda v: v["vehicle_id"])
        drivers = sorted(self.rows(m.drivers, policy_id=key), key=lambda d: d["driver_id"])
        coverages = sorted(self._coverages(key).values(), key=lambda c: c["kind"])
        return {**policy, "vehicles": vehicles, "drivers": drivers, "coverages": coverages}

    @tool("write")
    async def add_driver(
        self,
        policy_id: str,
        first_name: str,
        last_name: str,
        license_number: str,
        date_of_birth: str,
        relationship: str,
    ) -> dict[str, Any]:
        """Add a driver to an active policy; the annual premium rises by the driver surcharge.

        date_of_birth: YYYY-MM-DD (the driver must be 16 or older). relationship: spouse, child or other.
        """
        policy = self._active_policy(policy_id)
        first, last = required(first_name, "first_name"), required(last_name, "last_name")
        license_number = required(license_number, "license_number").upper()
        born = parse_date(date_of_birth, "date_of_birth")
        if (today() - born).days < 16 * 365:
            raise ToolError("invalid_value", "a driver must be at least 16 years old")
        if relationship not in m.RELATIONSHIPS:
            raise ToolError("invalid_value", f"relationship must be one of: {', '.join(m.RELATIONSHIPS)}")
        key = policy["policy_id"]
        if any(d["license_number"] == license_number for d in self.rows(m.drivers, policy_id=key)):
            raise ToolError("already_recorded", f"license {license_number} is already a driver on {key}")
        surcharge = driver_surcharge(born.isoformat())
        premium = round(policy["premium"] + surcharge, 2)
        self.db.execute(
            insert(m.drivers).values(
                policy_id=key,
                first_name=first,
                last_name=last,
                license_number=license_number,
                date_of_birth=born.isoformat(),
                relationship=relationship,
                status="active",
                added_on=m.TODAY,
            )
        )
        self.db.execute(update(m.policies).where(m.policies.c.policy_id == key).values(premium=premium))
        self.db.commit()
        return {"policy_id": key, "premium": premium, "surcharge": surcharge}

    @tool("write")
    async def remove_vehicle(self, policy_id: str, vehicle_id: str, reason: str) -> dict[str, Any]:
        """Remove a vehicle from an active policy; the annual premium drops by the vehicle's share.

        reason: sold, no longer driven, or total loss. The last vehicle of a policy cannot be removed, nor a
        vehicle with an open claim.
        """
        policy = self._active_policy(policy_id)
        key = policy["policy_id"]
        vehicles = {v["vehicle_id"]: v for v in self.rows(m.vehicles, policy_id=key) if v["status"] == "active"}
        vehicle = vehicles.get(vehicle_id)
        if vehicle is None:
            raise ToolError("vehicle_not_found", f"no active vehicle {vehicle_id} on policy {key}")
        if reason not in m.REMOVAL_REASONS:
            raise ToolError("invalid_value", f"reason must be one of: {', '.join(m.REMOVAL_REASONS)}")
        if len(vehicles) == 1:
            raise ToolError("last_vehicle", f"{vehicle_id} is the only vehicle on {key}; cancel the policy instead")
        if any(c["status"] == "open" for c in self.rows(m.claims, vehicle_id=vehicle_id)):
            raise ToolError("vehicle_has_open_claim", f"{vehicle_id} has an open claim; it stays until it is settled")
        premium = round(policy["premium"] - vehicle["annual_premium"], 2)
        self.db.execute(
            update(m.vehicles)
            .where(m.vehicles.c.vehicle_id == vehicle_id)
            .values(status="removed", removed_on=m.TODAY, removal_reason=reason)
        )
        self.db.execute(update(m.policies).where(m.policies.c.policy_id == key).values(premium=premium))
        self.db.commit()
        return {"policy_id": key, "vehicle_id": vehicle_id, "premium": premium}


system = System(
    "policy_admin",
    "Policies: terms, premium, vehicles, drivers and coverages.",
    ("policies", "vehicles", "drivers", "coverages"),
    PolicyAdmin,
)
