"""Badge access: one building badge per person, for their office site."""

from __future__ import annotations

from typing import Any

from sqlalchemy import update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import PersonAccounts, display_name, new_account, require


class Badges(PersonAccounts):
    """Building badges: issued for the HRIS site, printed with the HRIS name; a contractor's expires."""

    NAME = "badges"

    TABLE = m.badges
    KEY = "badge_id"
    STATUSES = ("active", "suspended", "disabled")
    WHAT = "building badge"

    @tool("lookup")
    async def get_badge(self, employee_id: str) -> dict[str, Any]:
        """An employee's building badge: site, printed name, status and expiry."""
        return self._get_record(employee_id)

    @tool("write")
    async def set_badge_status(self, employee_id: str, status: str) -> dict[str, Any]:
        """Set the building badge's status (active, suspended, disabled); offboarding turns it off, a leave
        suspends it where it can be suspended, a return or rehire makes it active."""
        return self._set_record_status("set_badge_status", employee_id, status)

    def _badge(self, employee_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        employee = self._subject(employee_id)
        return employee, self._found(m.badges, "badge", employee_id=employee["employee_id"])

    @tool("write")
    async def issue_badge(self, employee_id: str, site: str) -> dict[str, Any]:
        """Issue a new hire's badge for their HRIS site; a contractor's expires on their HRIS end date."""
        require(employee_id=employee_id, site=site)
        employee = self._subject(employee_id)
        if site != employee["location"]:
            raise ToolError("invalid_request", f"HRIS places {employee_id} at {employee['location']}, not {site}")
        if self.row(m.badges, employee_id=employee["employee_id"]) is not None:
            raise ToolError("already_exists", f"{employee_id} already has a badge")
        expires = employee["end_date"] if employee["employment_type"] == "contractor" else None
        values = {"site": site, "printed_name": display_name(employee), "status": "active", "expires_on": expires}
        self._write(
            employee["employee_id"],
            "issue_badge",
            site,
            new_account(m.badges, "badge_id", "bdg", employee["employee_id"], **values),
        )
        return {"employee_id": employee["employee_id"], **values}

    @tool("write")
    async def reprint_badge(self, employee_id: str, printed_name: str) -> dict[str, Any]:
        """Reprint a badge with the name HRIS now records (after a name change)."""
        require(employee_id=employee_id, printed_name=printed_name)
        employee, badge = self._badge(employee_id)
        if printed_name.strip() != display_name(employee):
            raise ToolError("hris_not_updated", f"HRIS records the name {display_name(employee)}")
        change = (
            update(m.badges).where(m.badges.c.badge_id == badge["badge_id"]).values(printed_name=printed_name.strip())
        )
        self._write(employee["employee_id"], "reprint_badge", printed_name.strip(), change)
        return {**badge, "printed_name": printed_name.strip()}

    @tool("write")
    async def set_badge_expiry(self, employee_id: str, expires_on: str) -> dict[str, Any]:
        """Move a contractor's badge expiry; not later than their HRIS end date."""
        require(employee_id=employee_id, expires_on=expires_on)
        employee, badge = self._badge(employee_id)
        if employee["employment_type"] != "contractor":
            raise ToolError("not_permitted", f"{employee_id} is not a contractor; employee badges do not expire")
        if expires_on > (employee["end_date"] or ""):
            raise ToolError("hris_not_updated", f"HRIS end date is {employee['end_date']}: extend the contract first")
        change = update(m.badges).where(m.badges.c.badge_id == badge["badge_id"]).values(expires_on=expires_on)
        self._write(employee["employee_id"], "set_badge_expiry", expires_on, change)
        return {**badge, "expires_on": expires_on}


system = System("badges", "Badge access: building badges by site.", ("badges",), Badges)
