"""Expenses: one expense profile per employee, with the cost center and approver claims go to."""

from __future__ import annotations

from typing import Any

from sqlalchemy import update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import PersonAccounts, new_account, require


def _matches_hris(employee: dict[str, Any], cost_center: str, approver_id: str) -> None:
    """The cost center is the HRIS department's and the approver the HRIS manager, or HRIS must change first."""
    wanted = (m.DEPARTMENTS[employee["department"]], employee["manager_id"])
    if (cost_center, approver_id) != wanted:
        raise ToolError(
            "hris_not_updated",
            f"HRIS shows department {employee['department']} (cost center {wanted[0]}) and manager {wanted[1]}",
        )


class Expenses(PersonAccounts):
    """Expense profiles; employees only (contractors invoice instead)."""

    NAME = "expenses"

    TABLE = m.expense_profiles
    KEY = "profile_id"
    STATUSES = ("active", "closed")
    WHAT = "expense profile"

    @tool("lookup")
    async def get_expense_profile(self, employee_id: str) -> dict[str, Any]:
        """An employee's expense profile: cost center, approver and status."""
        return self._get_record(employee_id)

    @tool("write")
    async def set_expense_profile_status(self, employee_id: str, status: str) -> dict[str, Any]:
        """Set the expense profile's status (active, closed); offboarding turns it off, a leave
        suspends it where it can be suspended, a return or rehire makes it active."""
        return self._set_record_status("set_expense_profile_status", employee_id, status)

    @tool("write")
    async def create_expense_profile(self, employee_id: str, cost_center: str, approver_id: str) -> dict[str, Any]:
        """Create an employee's expense profile: their department's cost center, their manager as approver."""
        require(employee_id=employee_id, cost_center=cost_center, approver_id=approver_id)
        employee = self._subject(employee_id)
        if employee["employment_type"] == "contractor":
            raise ToolError("not_permitted", "contractors invoice their expenses and get no expense profile")
        _matches_hris(employee, cost_center, approver_id)
        if self.row(m.expense_profiles, employee_id=employee["employee_id"]) is not None:
            raise ToolError("already_exists", f"{employee_id} already has an expense profile")
        values = {"cost_center": cost_center, "approver_id": approver_id, "status": "active"}
        statement = new_account(m.expense_profiles, "profile_id", "exp", employee["employee_id"], **values)
        self._write(employee["employee_id"], "create_expense_profile", cost_center, statement)
        return {"employee_id": employee["employee_id"], **values}

    @tool("write")
    async def update_expense_profile(self, employee_id: str, cost_center: str, approver_id: str) -> dict[str, Any]:
        """Point an expense profile at a new cost center and approver (after a transfer recorded in HRIS)."""
        require(employee_id=employee_id, cost_center=cost_center, approver_id=approver_id)
        employee = self._subject(employee_id)
        profile = self._found(m.expense_profiles, "expense profile", employee_id=employee["employee_id"])
        _matches_hris(employee, cost_center, approver_id)
        change = (
            update(m.expense_profiles)
            .where(m.expense_profiles.c.profile_id == profile["profile_id"])
            .values(cost_center=cost_center, approver_id=approver_id)
        )
        self._write(employee["employee_id"], "update_expense_profile", cost_center, change)
        return {**profile, "cost_center": cost_center, "approver_id": approver_id}


system = System("expenses", "Expenses: expense profiles, cost centers and approvers.", ("expense_profiles",), Expenses)
