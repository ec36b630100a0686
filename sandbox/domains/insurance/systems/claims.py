"""The claims system: incidents (first notice of loss), claims, the parties to them, and claim handling."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select, update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.insurance import models as m
from passhat.sandbox.domains.insurance.systems.common import (
    InsuranceSystem,
    active_on,
    new_id,
    parse_date,
    phone_ok,
    required,
    today,
)

LOSS_KINDS = tuple(m.COVERAGE_FOR_LOSS)
PARTY_ROLES = ("third_party", "witness", "passenger")


class Claims(InsuranceSystem):
    """Claims of verified policyholders: recording a loss, filing and maintaining the claim."""

    @tool("lookup")
    async def find_claims(self, policy_id: str) -> dict[str, Any]:
        """Every claim on a policy, with its status, coverage, vehicle and the incident's kind and date."""
        policy = self._policy(policy_id)
        query = (
            select(m.claims, m.incidents.c.kind, m.incidents.c.occurred_on)
            .join(m.incidents, m.incidents.c.incident_id == m.claims.c.incident_id)
            .where(m.claims.c.policy_id == policy["policy_id"])
            .order_by(m.claims.c.claim_id)
        )
        found = [
            {
                key: row[key]
                for key in ("claim_id", "status", "coverage", "vehicle_id", "kind", "occurred_on", "total_loss")
            }
            for row in self.db.execute(query).mappings()
        ]
        return {"policy_id": policy["policy_id"], "claims": found}

    @tool("lookup")
    async def get_claim(self, claim_id: int) -> dict[str, Any]:
        """A claim by number with its incident, parties, adjuster, inspections, rental and payments.

        Any verified caller can look a claim up; share it only with the policyholder it belongs to.
        """
        self._caller()
        claim = self.row(m.claims, claim_id=claim_id)
        if claim is None:
            raise ToolError("claim_not_found", f"no claim {claim_id}")
        policy = self.row(m.policies, policy_id=claim["policy_id"]) or {}
        return {
            **claim,
            "policyholder_id": policy.get("policyholder_id"),
            "incident": self.row(m.incidents, incident_id=claim["incident_id"]),
            "parties": self.rows(m.claim_parties, claim_id=claim_id),
            "inspections": self.rows(m.inspections, claim_id=claim_id),
            "rental_authorizations": self.rows(m.rental_authorizations, claim_id=claim_id),
            "payments": self.rows(m.payments, claim_id=claim_id),
        }

    @tool("write")
    async def report_incident(
        self,
        policy_id: str,
        vehicle_id: str,
        kind: str,
        occurred_on: str,
        location: str,
        description: str,
        police_report_number: str = "",
    ) -> dict[str, Any]:
        """Record a loss (first notice of loss) on a vehicle of the policy. Returns the incident_id.

        kind: collision, glass, theft or third_party (the policyholder damaged someone else's property).
        occurred_on: YYYY-MM-DD, the policy must have been active that day. A theft needs the police report
        number. An incident that already has an open claim is not recorded twice.
        """
        policy = self._policy(policy_id)
        key = policy["policy_id"]
        vehicle = self.row(m.vehicles, vehicle_id=vehicle_id)
        if vehicle is None or vehicle["policy_id"] != key:
            raise ToolError("vehicle_not_found", f"no vehicle {vehicle_id} on policy {key}")
        if kind not in LOSS_KINDS:
            raise ToolError("invalid_value", f"kind must be one of: {', '.join(LOSS_KINDS)}")
        day = parse_date(occurred_on, "occurred_on")
        if day > today():
            raise ToolError("invalid_value", "occurred_on is in the future")
        where, what = required(location, "location"), required(description, "description")
        if not active_on(policy, day.isoformat()):
            raise ToolError("policy_not_active", f"policy {key} was not active on {day.isoformat()}")
        report = police_report_number.strip()
        if kind == "theft" and not report:
            raise ToolError("police_report_required", "a theft needs the police report number")
        for claim in self.rows(m.claims, vehicle_id=vehicle_id):
            incident = self.row(m.incidents, incident_id=claim["incident_id"]) or {}
            if claim["status"] == "open" and incident.get("occurred_on") == day.isoformat():
                raise ToolError(
                    "open_claim_exists",
                    f"claim {claim['claim_id']} is already open for this vehicle's loss on {day.isoformat()}",
                )
        result = self.db.execute(
            insert(m.incidents).values(
                policy_id=key,
                vehicle_id=vehicle_id,
                kind=kind,
                occurred_on=day.isoformat(),
                location=where,
                description=what,
                police_report_number=report or None,
                reported_on=m.TODAY,
            )
        )
        self.db.commit()
        incident_id = new_id(result)
        return {"incident_id": incident_id, "policy_id": key, "vehicle_id": vehicle_id}

    @tool("write")
    async def file_claim(self, policy_id: str, incident_id: int, coverage: str, contact_phone: str) -> dict[str, Any]:
        """Open a claim for a recorded incident under the coverage that applies. Returns the claim_id.

        coverage: collision (collisions), glass or comprehensive (glass), comprehensive (theft), liability
        (damage to a third party). Glass claims under glass coverage carry no deductible. One open claim per
        incident.
        """
        policy = self._policy(policy_id)
        key = policy["policy_id"]
        incident = self.row(m.incidents, incident_id=incident_id)
        if incident is None or incident["policy_id"] != key:
            raise ToolError(
                "incident_not_recorded", f"no incident {incident_id} on policy {key}: record it with report_incident"
            )
        if not phone_ok(contact_phone):
            raise ToolError("invalid_value", "contact_phone must be a phone number with at least ten digits")
        if not active_on(policy, incident["occurred_on"]):
            raise ToolError("policy_not_active", f"policy {key} was not active on {incident['occurred_on']}")
        held = self._coverages(key)
        applies = m.COVERAGE_FOR_LOSS[incident["kind"]]
        if coverage not in applies or coverage not in held:
            offered = [kind for kind in applies if kind in held]
            hint = f"; it can go under: {', '.join(offered)}" if offered else "; the policy has no coverage for it"
            raise ToolError("coverage_not_applicable", f"{coverage!r} does not cover a {incident['kind']} loss{hint}")
        if any(c["status"] == "open" for c in self.rows(m.claims, incident_id=incident_id)):
            raise ToolError("open_claim_exists", f"incident {incident_id} already has an open claim")
        holder = self.row(m.policyholders, policyholder_id=policy["policyholder_id"]) or {}
        deductible = 0.0 if coverage == "glass" else float(held[coverage]["deductible"])
        result = self.db.execute(
            insert(m.claims).values(
                policy_id=key,
                incident_id=incident_id,
                vehicle_id=incident["vehicle_id"],
                coverage=coverage,
                status="open",
                deductible=deductible,
                contact_phone=contact_phone.strip(),
                contact_email=holder.get("email", ""),
                opened_on=m.TODAY,
                adjuster_id=None,
                total_loss=False,
                valuation=None,
            )
        )
        self.db.commit()
        claim_id = new_id(result)
        return {"claim_id": claim_id, "coverage": coverage, "deductible": deductible, "status": "open"}

    @tool("write")
    async def add_claim_party(
        self, claim_id: int, role: str, name: str, phone: str, insurer: str, vehicle_plate: str
    ) -> dict[str, Any]:
        """Add a person involved to an open claim. role: third_party, witness or passenger."""
        self._claim(claim_id)
        if role not in PARTY_ROLES:
            raise ToolError("invalid_value", f"role must be one of: {', '.join(PARTY_ROLES)}")
        person = required(name, "name")
        if not phone_ok(phone):
            raise ToolError("invalid_value", "phone must be a phone number with at least ten digits")
        result = self.db.execute(
            insert(m.claim_parties).values(
                claim_id=claim_id,
                role=role,
                name=person,
                phone=phone.strip(),
                insurer=insurer.strip(),
                vehicle_plate=vehicle_plate.strip().upper(),
            )
        )
        self.db.commit()
        return {"party_id": new_id(result), "claim_id": claim_id}

    @tool("write")
    async def update_claim_contact(
        self, claim_id: int, contact_phone: str = "", contact_email: str = ""
    ) -> dict[str, Any]:
        """Change the phone and/or email the adjuster uses to reach the policyholder about an open claim."""
        self._claim(claim_id)
        values: dict[str, str] = {}
        if contact_phone.strip():
            if not phone_ok(contact_phone):
                raise ToolError("invalid_value", "contact_phone must be a phone number with at least ten digits")
            values["contact_phone"] = contact_phone.strip()
        if contact_email.strip():
            if "@" not in contact_email:
                raise ToolError("invalid_value", "contact_email must be an email address")
            values["contact_email"] = contact_email.strip().lower()
        if not values:
            raise ToolError("invalid_value", "give contact_phone, contact_email or both")
        self.db.execute(update(m.claims).where(m.claims.c.claim_id == claim_id).values(**values))
        self.db.commit()
        return {"claim_id": claim_id, **values}

    @tool("write")
    async def assign_adjuster(self, claim_id: int, adjuster_id: str) -> dict[str, Any]:
        """Assign an adjuster of the policyholder's region to an open claim that has none (auto_damage
        adjusters inspect damage; total_loss adjusters handle total losses)."""
        claim, policy = self._claim(claim_id)
        adjuster = self.row(m.adjusters, adjuster_id=adjuster_id)
        if adjuster is None:
            raise ToolError("adjuster_not_found", f"no adjuster {adjuster_id}")
        holder = self.row(m.policyholders, policyholder_id=policy["policyholder_id"]) or {}
        if adjuster["region"] != holder.get("region"):
            raise ToolError(
                "adjuster_out_of_region",
                f"{adjuster_id} covers the {adjuster['region']} region, not {holder.get('region')}",
            )
        if claim["adjuster_id"] is not None:
            raise ToolError("already_recorded", f"claim {claim_id} already has adjuster {claim['adjuster_id']}")
        self.db.execute(update(m.claims).where(m.claims.c.claim_id == claim_id).values(adjuster_id=adjuster_id))
        self.db.commit()
        return {"claim_id": claim_id, "adjuster_id": adjuster_id, "adjuster": adjuster["name"]}

    @tool("write")
    async def record_total_loss_valuation(self, claim_id: int, valuation: float) -> dict[str, Any]:
        """Record the valuation of a vehicle the adjuster found a total loss: its actual cash value."""
        claim, _ = self._claim(claim_id)
        if not claim["total_loss"]:
            raise ToolError("not_total_loss", f"claim {claim_id} has no total-loss finding from the adjuster")
        vehicle = self.row(m.vehicles, vehicle_id=claim["vehicle_id"]) or {}
        value = float(vehicle.get("actual_cash_value") or 0.0)
        if round(float(valuation), 2) != round(value, 2):
            raise ToolError(
                "valuation_not_acv", "a total loss is valued at the vehicle's actual cash value (see get_policy)"
            )
        self.db.execute(update(m.claims).where(m.claims.c.claim_id == claim_id).values(valuation=value))
        self.db.commit()
        return {"claim_id": claim_id, "valuation": value, "deductible": claim["deductible"]}


system = System(
    "claims",
    "Incidents, claims and claim parties: first notice of loss and claim handling.",
    ("incidents", "claims", "claim_parties"),
    Claims,
)
