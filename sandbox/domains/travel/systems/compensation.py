"""The compensation system: vouchers for delayed or cancelled flights, once per segment."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.travel import models as m
from passhat.sandbox.domains.travel import rules
from passhat.sandbox.domains.travel.systems.common import TravelSystem, required


class Compensation(TravelSystem):
    """Delay compensation: the amount by delay length, tier and passengers; one voucher per segment."""

    def _assess(self, segment_id: str) -> tuple[dict[str, Any], dict[str, Any], float]:
        required(segment_id=segment_id)
        segment = self.row(m.segments, segment_id=segment_id.strip().upper())
        if segment is None:
            raise ToolError("no_such_record", f"segment {segment_id} not found")
        reservation = self._reservation(segment["reservation_id"])
        flight = self._flight(segment["flight_id"])
        if segment["status"] == "cancelled" or flight["status"] not in ("landed", "cancelled"):
            raise ToolError("not_eligible", f"segment {segment_id} was not flown (or its flight has not landed yet)")
        if self.rows(m.compensation_vouchers, segment_id=segment["segment_id"]):
            raise ToolError("already_compensated", f"segment {segment_id} was already compensated (once per segment)")
        passengers = len(self._passengers(reservation["reservation_id"]))
        amount = rules.compensation(
            flight["delay_minutes"], flight["status"], self._tier(reservation["customer_id"]), passengers
        )
        if amount <= 0:
            raise ToolError(
                "not_eligible",
                f"flight {flight['flight_id']} was {flight['delay_minutes']} minutes late; under 120 earns none",
            )
        return segment, reservation, amount

    @tool("lookup")
    async def check_compensation(self, segment_id: str) -> dict[str, Any]:
        """Whether a flown segment earns delay compensation, and how much (by the delay, the holder's tier and
        the passengers). Required before issue_compensation, in the same conversation."""
        segment, _, amount = self._assess(segment_id)
        self.checked_compensations.add(segment["segment_id"])
        return {"segment_id": segment["segment_id"], "eligible": True, "amount": amount}

    @tool("write")
    async def issue_compensation(self, segment_id: str) -> dict[str, Any]:
        """Issue the delay-compensation voucher of a segment checked with check_compensation (once per segment)."""
        segment, reservation, amount = self._assess(segment_id)
        if segment["segment_id"] not in self.checked_compensations:
            raise ToolError("eligibility_not_checked", "call check_compensation for this segment first")
        flight = self._flight(segment["flight_id"])
        reason = (
            "flight cancelled" if flight["status"] == "cancelled" else f"delay of {flight['delay_minutes']} minutes"
        )
        self.db.execute(
            insert(m.compensation_vouchers).values(
                customer_id=reservation["customer_id"],
                segment_id=segment["segment_id"],
                amount=amount,
                reason=reason,
                created_at=m.TODAY,
            )
        )
        self.db.commit()
        return {"segment_id": segment["segment_id"], "voucher_amount": amount, "reason": reason}


system = System(
    "compensation",
    "Vouchers for delayed or cancelled flights, by delay and loyalty tier, once per segment.",
    ("compensation_vouchers",),
    Compensation,
)
