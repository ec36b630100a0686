"""The payments system: what was paid on each reservation, refunds, and travel credits."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import insert, select

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.travel import models as m
from passhat.sandbox.domains.travel import rules
from passhat.sandbox.domains.travel.systems.common import TravelSystem

CREDIT_VALIDITY = dt.timedelta(days=365)


class Payments(TravelSystem):
    """Money: charges and refunds per reservation, and the customer's travel credits."""

    @tool("lookup")
    async def get_payments(self, reservation_id: str) -> dict[str, Any]:
        """The charges and refunds of a reservation and what remains paid."""
        reservation = self._reservation(reservation_id)
        code = reservation["reservation_id"]
        rows = self.db.execute(
            select(m.payments).where(m.payments.c.reservation_id == code).order_by(m.payments.c.payment_id)
        )
        return {"reservation_id": code, "payments": [dict(r) for r in rows.mappings()], "paid": self._paid(code)}

    @tool("lookup")
    async def get_travel_credits(self, customer_id: str) -> dict[str, Any]:
        """An identified customer's travel credits: amount, status and expiry."""
        self._customer(customer_id)
        rows = self.db.execute(select(m.travel_credits).where(m.travel_credits.c.customer_id == customer_id))
        return {"customer_id": customer_id, "credits": [dict(r) for r in rows.mappings()]}

    def _settleable(self, reservation_id: str) -> dict[str, Any]:
        reservation = self._reservation(reservation_id)
        code = reservation["reservation_id"]
        if reservation["status"] != "cancelled":
            raise ToolError("not_cancelled", f"reservation {code} is not cancelled: cancel_reservation comes first")
        if self._paid(code) <= 0 or self.row(m.travel_credits, source_reservation_id=code) is not None:
            raise ToolError("already_settled", f"reservation {code} was already refunded or credited")
        return reservation

    @tool("write")
    async def refund_reservation(self, reservation_id: str) -> dict[str, Any]:
        """Refund everything paid on a cancelled reservation to the original card: allowed for a refundable
        fare, or for any fare within 24 hours of booking."""
        reservation = self._settleable(reservation_id)
        code = reservation["reservation_id"]
        fare = self._fare(reservation["fare_id"])
        if not (fare["refundable"] or rules.within_24h(reservation["booked_at"])):
            raise ToolError(
                "fare_rules",
                f"the {fare['fare_class']} fare is non-refundable after 24 hours: issue a travel credit instead",
            )
        amount = self._paid(code)
        self.db.execute(
            insert(m.payments).values(
                reservation_id=code, kind="refund", method="card", amount=amount, purpose="refund", created_at=m.NOW
            )
        )
        self.db.commit()
        return {"reservation_id": code, "refunded": amount, "method": "card"}

    @tool("write")
    async def issue_travel_credit(self, reservation_id: str) -> dict[str, Any]:
        """Turn what was paid on a cancelled non-refundable reservation (past its first 24 hours) into a
        travel credit for the holder, valid one year."""
        reservation = self._settleable(reservation_id)
        code = reservation["reservation_id"]
        fare = self._fare(reservation["fare_id"])
        if fare["refundable"] or rules.within_24h(reservation["booked_at"]):
            raise ToolError("fare_rules", "this reservation is refundable: use refund_reservation")
        amount = self._paid(code)
        expires = (dt.date.fromisoformat(m.TODAY) + CREDIT_VALIDITY).isoformat()
        self.db.execute(
            insert(m.travel_credits).values(
                customer_id=reservation["customer_id"],
                source_reservation_id=code,
                amount=amount,
                status="active",
                expires=expires,
            )
        )
        self.db.commit()
        return {"reservation_id": code, "credit": amount, "expires": expires}


system = System(
    "payments",
    "Payments per reservation (charges and refunds) and travel credits.",
    ("payments", "travel_credits"),
    Payments,
)
