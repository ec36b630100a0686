"""Email: one mailbox per person, its address and aliases."""

from __future__ import annotations

from typing import Any

from sqlalchemy import update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import PersonAccounts, new_account, require


class Email(PersonAccounts):
    """Mailboxes: created for a new hire at their HRIS work email, renamed when their name changes."""

    NAME = "email"

    TABLE = m.mailboxes
    KEY = "mailbox_id"
    STATUSES = ("active", "suspended", "disabled")
    WHAT = "mailbox"

    @tool("lookup")
    async def get_mailbox(self, employee_id: str) -> dict[str, Any]:
        """An employee's mailbox: address, aliases and status."""
        return self._get_record(employee_id)

    @tool("write")
    async def set_mailbox_status(self, employee_id: str, status: str) -> dict[str, Any]:
        """Set the mailbox's status (active, suspended, disabled); offboarding turns it off, a leave
        suspends it where it can be suspended, a return or rehire makes it active."""
        return self._set_record_status("set_mailbox_status", employee_id, status)

    @tool("write")
    async def create_mailbox(self, employee_id: str) -> dict[str, Any]:
        """Create a new hire's mailbox at their HRIS work email; needs their directory account."""
        employee = self._subject(employee_id)
        self._account_of(employee["employee_id"])
        if self.row(m.mailboxes, employee_id=employee["employee_id"]) is not None:
            raise ToolError("already_exists", f"{employee_id} already has a mailbox")
        address = employee["work_email"]
        insert = new_account(
            m.mailboxes, "mailbox_id", "mbx", employee["employee_id"], address=address, aliases="", status="active"
        )
        self._write(employee["employee_id"], "create_mailbox", address, insert)
        return {"employee_id": employee["employee_id"], "address": address, "status": "active"}

    @tool("write")
    async def rename_mailbox(self, employee_id: str, new_address: str) -> dict[str, Any]:
        """Move a mailbox to a new address after a name change (first.last@firm.example, from the HRIS name);
        the old address stays as an alias so mail keeps arriving."""
        require(employee_id=employee_id, new_address=new_address)
        employee = self._subject(employee_id)
        mailbox = self._found(m.mailboxes, "mailbox", employee_id=employee["employee_id"])
        expected = f"{employee['first_name']}.{employee['last_name']}@firm.example".lower().replace(" ", "")
        if new_address.strip().lower() != expected:
            raise ToolError(
                "hris_not_updated", f"HRIS records the name {employee['first_name']} {employee['last_name']}"
            )
        if self.row(m.mailboxes, address=expected) is not None:
            raise ToolError("already_exists", f"the address {expected} is taken")
        aliases = ",".join(a for a in (mailbox["aliases"], mailbox["address"]) if a)
        change = (
            update(m.mailboxes)
            .where(m.mailboxes.c.mailbox_id == mailbox["mailbox_id"])
            .values(address=expected, aliases=aliases)
        )
        self._write(employee["employee_id"], "rename_mailbox", expected, change)
        return {**mailbox, "address": expected, "aliases": aliases}


system = System("email", "Email: mailboxes, their addresses and aliases.", ("mailboxes",), Email)
