"""The baggage system: checked bags per passenger, and their fees."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.travel import models as m
from passhat.sandbox.domains.travel import rules
from passhat.sandbox.domains.travel.systems.common import TravelSystem, required


class Baggage(TravelSystem):
    """Checked bags: the fee schedule by tier and cabin, and adding bags to a passenger."""

    def _quote(self, reservation_id: str, passenger_id: str, bags: int) -> tuple[dict[str, Any], list[float]]:
        required(passenger_id=passenger_id)
        if not 1 <= bags <= rules.MAX_BAGS:
            raise ToolError("bad_request", f"bags must be between 1 and {rules.MAX_BAGS}")
        reservation = self._reservation(reservation_id, confirmed=True)
        code = reservation["reservation_id"]
        if not any(s["status"] == "booked" for s in self._segments(code)):
            raise ToolError("already_flown", f"reservation {code} has no segment left to fly")
        if passenger_id not in {p["passenger_id"] for p in self._passengers(code)}:
            raise ToolError("no_such_record", f"passenger {passenger_id} is not on reservation {code}")
        before = sum(1 for b in self.rows(m.baggage, reservation_id=code) if b["passenger_id"] == passenger_id)
        if before + bags > rules.MAX_BAGS:
            raise ToolError("bag_limit", f"a passenger may check {rules.MAX_BAGS} bags; {passenger_id} has {before}")
        cabin = self._fare(reservation["fare_id"])["cabin"]
        return reservation, rules.bag_fees(self._tier(reservation["customer_id"]), cabin, before, bags)

    @tool("lookup")
    async def quote_bags(self, reservation_id: str, passenger_id: str, bags: int) -> dict[str, Any]:
        """The fee of `bags` more checked bags for a passenger (by the holder's tier and the cabin)."""
        _, fees = self._quote(reservation_id, passenger_id, bags)
        return {"passenger_id": passenger_id, "fees": fees, "total": round(sum(fees), 2)}

    @tool("write")
    async def add_checked_bags(self, reservation_id: str, passenger_id: str, bags: int) -> dict[str, Any]:
        """Add 1 to 3 checked bags to a passenger (at most 3 in all); the fees are charged to the card."""
        reservation, fees = self._quote(reservation_id, passenger_id, bags)
        code = reservation["reservation_id"]
        for fee in fees:
            self.db.execute(
                insert(m.baggage).values(reservation_id=code, passenger_id=passenger_id, fee=fee, created_at=m.NOW)
            )
        total = round(sum(fees), 2)
        if total > 0:
            self.db.execute(
                insert(m.payments).values(
                    reservation_id=code, kind="charge", method="card", amount=total, purpose="bags", created_at=m.NOW
                )
            )
        self.db.commit()
        return {"passenger_id": passenger_id, "bags_added": bags, "fees": fees, "charged": total}


system = System("baggage", "Checked bags per passenger and their fees.", ("baggage",), Baggage)
