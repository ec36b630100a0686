"""The customers system: who is calling (two-factor verification) and what they hold."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.banking import models as m
from passhat.sandbox.domains.banking.systems.common import BankSystem


class Customers(BankSystem):
    """Customer records; a caller is verified by a card's last four digits and name, then the date of birth."""

    @tool("lookup")
    async def find_customer_by_card(self, last_name: str, card_last_four: str) -> dict[str, Any]:
        """First verification factor: the customer holding the card ending in `card_last_four`, by last name.

        Returns the customer id to verify with `verify_date_of_birth`; the caller is not verified yet.
        """
        row = (
            self.db.execute(
                select(m.customers.c.customer_id, m.customers.c.first_name)
                .join(m.cards, m.cards.c.customer_id == m.customers.c.customer_id)
                .where(
                    m.cards.c.last_four == card_last_four.strip(),
                    func.lower(m.customers.c.last_name) == last_name.strip().lower(),
                )
            )
            .mappings()
            .first()
        )
        if row is None:
            raise ToolError("no_matching_customer", "no customer with that last name holds a card with those digits")
        # The caller claims to be this customer; the date of birth must confirm it.
        self.session.requester = row["customer_id"]
        return {"customer_id": row["customer_id"], "first_name": row["first_name"], "verified": False}

    @tool("lookup")
    async def verify_date_of_birth(self, customer_id: str, date_of_birth: str) -> dict[str, Any]:
        """Second verification factor: the date of birth (YYYY-MM-DD) of the customer the card step found.

        Verifies the caller for this conversation; every account, card and dispute tool needs it.
        """
        if not customer_id or customer_id != self.session.requester:
            raise ToolError("verification_incomplete", "run find_customer_by_card for this customer first")
        born = self.db.execute(
            select(m.customers.c.date_of_birth).where(m.customers.c.customer_id == customer_id)
        ).scalar()
        if born != date_of_birth.strip():
            raise ToolError("identity_mismatch", "the date of birth does not match our records")
        self.session.identified.clear()
        self.session.identified.add(customer_id)
        return {"customer_id": customer_id, "verified": True}

    @tool("lookup")
    async def get_customer(self, customer_id: str) -> dict[str, Any]:
        """The verified caller's profile: contact details, the accounts they hold (with their role) and cards."""
        caller = self._caller()
        if customer_id != caller:
            raise ToolError("no_such_customer", f"no customer {customer_id!r}: only the verified caller's own profile")
        customer = self.row(m.customers, customer_id=caller) or {}
        held = self.db.execute(
            select(m.accounts, m.account_holders.c.role)
            .join(m.account_holders, m.account_holders.c.account_id == m.accounts.c.account_id)
            .where(m.account_holders.c.customer_id == caller)
            .order_by(m.accounts.c.account_id)
        ).mappings()
        cards = self.db.execute(
            select(m.cards).where(m.cards.c.customer_id == caller).order_by(m.cards.c.card_id)
        ).mappings()
        return {
            **customer,
            "accounts": [dict(row) for row in held],
            "cards": [dict(row) for row in cards],
        }


system = System(
    "customers",
    "Customer records and account holders: verification (two factors) and the caller's profile.",
    ("customers", "account_holders"),
    Customers,
)
