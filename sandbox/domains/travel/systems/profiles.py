"""The profiles system: customers and their loyalty accounts; identifies the caller."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.travel import models as m
from passhat.sandbox.domains.travel.systems.common import TravelSystem, required


class Profiles(TravelSystem):
    """Customer profiles: finding (and so identifying) a customer, their loyalty tier and miles."""

    @tool("lookup")
    async def find_customer_by_email(self, email: str) -> dict[str, Any]:
        """Find a customer by the email on their profile and identify them for this session. Returns the
        customer_id."""
        required(email=email)
        row = self.row(m.customers, email=email.strip().lower())
        if row is None:
            raise ToolError("no_such_record", f"no customer with email {email}")
        self.session.identified.add(row["customer_id"])
        return {"customer_id": row["customer_id"]}

    @tool("lookup")
    async def find_customer_by_reservation(self, reservation_id: str, last_name: str) -> dict[str, Any]:
        """Identify the holder of a reservation by its six-character code and the holder's last name.
        Returns the customer_id."""
        required(reservation_id=reservation_id, last_name=last_name)
        query = (
            select(m.customers.c.customer_id)
            .join(m.reservations, m.reservations.c.customer_id == m.customers.c.customer_id)
            .where(
                m.reservations.c.reservation_id == reservation_id.strip().upper(),
                func.lower(m.customers.c.last_name) == last_name.strip().lower(),
            )
        )
        found = self.db.execute(query).scalar()
        if found is None:
            raise ToolError("no_such_record", f"no reservation {reservation_id} held by someone named {last_name}")
        self.session.identified.add(found)
        return {"customer_id": found}

    @tool("lookup")
    async def get_customer(self, customer_id: str) -> dict[str, Any]:
        """An identified customer's profile: contact details, loyalty tier and miles, and their reservations
        (code and status)."""
        row = self._customer(customer_id)
        account = self.row(m.loyalty_accounts, customer_id=customer_id) or {}
        reservations = self.db.execute(
            select(m.reservations.c.reservation_id, m.reservations.c.status)
            .where(m.reservations.c.customer_id == customer_id)
            .order_by(m.reservations.c.reservation_id)
        )
        return {
            **row,
            "loyalty": {k: account.get(k) for k in ("loyalty_id", "tier", "miles")},
            "reservations": [{"reservation_id": r, "status": s} for r, s in reservations],
        }


system = System(
    "profiles",
    "Customer profiles and loyalty accounts (tier and miles); identifies the caller.",
    ("customers", "loyalty_accounts"),
    Profiles,
)
