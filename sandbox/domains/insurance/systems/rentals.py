"""The rentals system: rental cars authorized while a claimed vehicle is off the road."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.insurance import models as m
from passhat.sandbox.domains.insurance.systems.common import InsuranceSystem, new_id


class Rentals(InsuranceSystem):
    """Rental authorizations on open claims, within the policy's rental coverage."""

    @tool("write")
    async def authorize_rental(self, claim_id: int, daily_rate: float, days: int) -> dict[str, Any]:
        """Authorize a rental car on an open collision or comprehensive claim of a policy with rental coverage.

        daily_rate may not exceed the coverage's per-day limit, nor days its maximum; one rental per claim.
        """
        claim, policy = self._claim(claim_id)
        if daily_rate <= 0 or days < 1:
            raise ToolError("invalid_value", "daily_rate must be positive and days at least 1")
        rental = self._coverages(policy["policy_id"]).get("rental")
        if rental is None:
            raise ToolError("coverage_not_applicable", f"policy {policy['policy_id']} has no rental coverage")
        if claim["coverage"] not in m.RENTAL_COVERAGES:
            raise ToolError("coverage_not_applicable", f"a {claim['coverage']} claim does not include a rental")
        if daily_rate > (rental["per_day_limit"] or 0) or days > (rental["max_days"] or 0):
            raise ToolError(
                "rental_limit_exceeded",
                f"rental coverage pays up to ${rental['per_day_limit']:.0f} a day for up to {rental['max_days']} days",
            )
        if self.rows(m.rental_authorizations, claim_id=claim_id):
            raise ToolError("already_recorded", f"claim {claim_id} already has a rental authorization")
        total = round(float(daily_rate) * int(days), 2)
        result = self.db.execute(
            insert(m.rental_authorizations).values(
                claim_id=claim_id,
                daily_rate=float(daily_rate),
                days=int(days),
                total=total,
                status="authorized",
                authorized_on=m.TODAY,
            )
        )
        self.db.commit()
        return {"authorization_id": new_id(result), "claim_id": claim_id, "total": total}


system = System("rentals", "Rental car authorizations on claims.", ("rental_authorizations",), Rentals)
