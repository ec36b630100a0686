"""The adjusting system: adjusters and the inspections they carry out."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import insert, select

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.insurance import models as m
from passhat.sandbox.domains.insurance.systems.common import InsuranceSystem, new_id, parse_date, required, today

INSPECTION_WINDOW_DAYS = 30


class Adjusting(InsuranceSystem):
    """Adjusters by region and specialty, and damage inspections on open claims."""

    @tool("lookup")
    async def list_adjusters(self, region: str, specialty: str = "") -> dict[str, Any]:
        """Adjusters of a region (north, south, east, west, central), optionally of one specialty
        (auto_damage or total_loss)."""
        self._caller()
        query = select(m.adjusters).where(m.adjusters.c.region == region.strip().lower())
        if specialty.strip():
            query = query.where(m.adjusters.c.specialty == specialty.strip())
        found = [dict(row) for row in self.db.execute(query.order_by(m.adjusters.c.adjuster_id)).mappings()]
        if not found:
            raise ToolError("adjuster_not_found", f"no adjusters for region {region!r} {specialty}".strip())
        return {"region": region, "adjusters": found}

    @tool("write")
    async def schedule_inspection(self, claim_id: int, scheduled_on: str, location: str) -> dict[str, Any]:
        """Book the claim's adjuster to inspect the vehicle: a weekday within the next 30 days, at a location.

        The claim needs an assigned adjuster (assign_adjuster) first; one scheduled inspection per claim.
        """
        claim, _ = self._claim(claim_id)
        if claim["adjuster_id"] is None:
            raise ToolError("adjuster_not_assigned", f"claim {claim_id} has no adjuster: assign one first")
        day = parse_date(scheduled_on, "scheduled_on")
        if not today() < day <= today() + dt.timedelta(days=INSPECTION_WINDOW_DAYS) or day.weekday() >= 5:
            raise ToolError("invalid_value", "scheduled_on must be a weekday within the next 30 days")
        place = required(location, "location")
        if any(i["status"] == "scheduled" for i in self.rows(m.inspections, claim_id=claim_id)):
            raise ToolError("already_recorded", f"claim {claim_id} already has an inspection scheduled")
        result = self.db.execute(
            insert(m.inspections).values(
                claim_id=claim_id,
                adjuster_id=claim["adjuster_id"],
                scheduled_on=day.isoformat(),
                location=place,
                status="scheduled",
            )
        )
        self.db.commit()
        return {
            "inspection_id": new_id(result),
            "claim_id": claim_id,
            "adjuster_id": claim["adjuster_id"],
            "scheduled_on": day.isoformat(),
        }


system = System("adjusting", "Adjusters and vehicle inspections.", ("adjusters", "inspections"), Adjusting)
