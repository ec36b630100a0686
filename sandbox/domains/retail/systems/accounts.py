"""The accounts system: customers, their addresses and payment methods; identifies the caller."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.retail import models as m
from passhat.sandbox.domains.retail.systems.common import RetailSystem


class Accounts(RetailSystem):
    """Customer accounts: finding (and so identifying) a customer, their profile, their saved addresses."""

    @tool("lookup")
    async def find_customer_by_email(self, email: str) -> dict[str, Any]:
        """Find a customer by email and identify them for this session. Returns the customer_id."""
        row = self.row(m.customers, email=email.strip().lower())
        if row is None:
            raise ToolError("not_found", f"no customer with email {email}")
        self.session.identified.add(row["customer_id"])
        return {"customer_id": row["customer_id"]}

    @tool("lookup")
    async def find_customer_by_name_zip(self, first_name: str, last_name: str, zip: str) -> dict[str, Any]:
        """Find a customer by first and last name and the zip of one of their addresses; identifies them."""
        query = (
            select(m.customers.c.customer_id)
            .join(m.addresses, m.addresses.c.customer_id == m.customers.c.customer_id)
            .where(
                m.customers.c.first_name == first_name.strip().title(),
                m.customers.c.last_name == last_name.strip().title(),
                m.addresses.c.zip == zip.strip(),
            )
        )
        found = sorted({row[0] for row in self.db.execute(query)})
        if not found:
            raise ToolError("not_found", f"no customer named {first_name} {last_name} with zip {zip}")
        if len(found) > 1:
            raise ToolError("invalid_argument", "several customers match; ask for the email instead")
        self.session.identified.add(found[0])
        return {"customer_id": found[0]}

    @tool("lookup")
    async def get_customer(self, customer_id: str) -> dict[str, Any]:
        """Profile of an identified customer: contact details, addresses, payment methods and order ids."""
        row = self.row(m.customers, customer_id=customer_id)
        if row is None:
            raise ToolError("not_found", f"customer {customer_id} not found")
        if customer_id not in self.session.identified:
            raise ToolError(
                "precondition_failed", "identify the customer first (find_customer_by_email or _by_name_zip)"
            )
        addresses = self.rows(m.addresses, customer_id=customer_id)
        methods = self.rows(m.payment_methods, customer_id=customer_id)
        orders = self.db.execute(
            select(m.orders.c.order_id, m.orders.c.status).where(m.orders.c.customer_id == customer_id)
        )
        return {
            **row,
            "addresses": addresses,
            "payment_methods": [{k: v for k, v in p.items() if v is not None} for p in methods],
            "orders": [{"order_id": o, "status": s} for o, s in orders],
        }

    @tool("write")
    async def modify_customer_address(
        self,
        customer_id: str,
        address_id: str,
        address1: str,
        address2: str,
        city: str,
        state: str,
        country: str,
        zip: str,
    ) -> dict[str, Any]:
        """Change one of an identified customer's saved addresses (orders keep their shipping address)."""
        if self.row(m.customers, customer_id=customer_id) is None:
            raise ToolError("not_found", f"customer {customer_id} not found")
        if customer_id not in self.session.identified:
            raise ToolError(
                "precondition_failed", "identify the customer first (find_customer_by_email or _by_name_zip)"
            )
        address = self.row(m.addresses, address_id=address_id)
        if address is None or address["customer_id"] != customer_id:
            raise ToolError("not_found", f"address {address_id} not found for customer {customer_id}")
        if not (address1.strip() and city.strip() and zip.strip()):
            raise ToolError("invalid_argument", "address1, city and zip are required")
        values = {
            "address1": address1,
            "address2": address2,
            "city": city,
            "state": state,
            "country": country,
        }
        self.db.execute(update(m.addresses).where(m.addresses.c.address_id == address_id).values(zip=zip, **values))
        self.db.commit()
        return {"customer_id": customer_id, "address_id": address_id, "zip": zip, **values}


system = System(
    "accounts",
    "Customer accounts: identity, profile, saved addresses and payment methods.",
    ("customers", "addresses", "payment_methods"),
    Accounts,
)
