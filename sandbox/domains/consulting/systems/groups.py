"""Groups / SSO: groups and memberships (what a person can sign in to), and access requests with approvals."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, insert, update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import ConsultingSystem, require


class Groups(ConsultingSystem):
    """SSO groups (everyone, role, department and project groups) and access-request approvals."""

    NAME = "groups"

    @tool("lookup")
    async def list_groups(self, kind: str) -> dict[str, Any]:
        """Groups of a kind: everyone, role, department or project."""
        require(kind=kind)
        return {"kind": kind, "groups": self.rows(m.groups, kind=kind.strip())}

    @tool("lookup")
    async def get_group_memberships(self, employee_id: str) -> dict[str, Any]:
        """The groups an employee is a member of."""
        employee = self._subject(employee_id)
        return {
            "employee_id": employee["employee_id"],
            "memberships": self.rows(m.group_memberships, employee_id=employee["employee_id"]),
        }

    @tool("write")
    async def add_group_member(self, employee_id: str, group_id: str) -> dict[str, Any]:
        """Add an employee to a group; needs their directory account."""
        require(employee_id=employee_id, group_id=group_id)
        employee = self._subject(employee_id)
        self._account_of(employee["employee_id"])
        group = self._found(m.groups, "group", group_id=group_id.strip())
        if self.row(m.group_memberships, employee_id=employee["employee_id"], group_id=group["group_id"]):
            raise ToolError("already_exists", f"{employee_id} is already in {group_id}")
        values = {"group_id": group["group_id"], "employee_id": employee["employee_id"], "added_at": m.TODAY}
        self._write(
            employee["employee_id"], "add_group_member", group["group_id"], insert(m.group_memberships).values(values)
        )
        return values

    @tool("write")
    async def remove_group_member(self, employee_id: str, group_id: str) -> dict[str, Any]:
        """Remove an employee from a group."""
        require(employee_id=employee_id, group_id=group_id)
        employee = self._subject(employee_id)
        row = self.row(m.group_memberships, employee_id=employee["employee_id"], group_id=group_id.strip())
        if row is None:
            raise ToolError("no_such_record", f"{employee_id} is not in {group_id}")
        statement = delete(m.group_memberships).where(m.group_memberships.c.membership_id == row["membership_id"])
        self._write(employee["employee_id"], "remove_group_member", row["group_id"], statement)
        return {"employee_id": employee["employee_id"], "group_id": row["group_id"], "removed": True}

    @tool("lookup")
    async def get_access_requests(self, employee_id: str) -> dict[str, Any]:
        """An employee's access requests to client projects, each with its approvals."""
        employee = self._subject(employee_id)
        requests = self.rows(m.access_requests, employee_id=employee["employee_id"])
        return {
            "employee_id": employee["employee_id"],
            "requests": [{**r, "approvals": self.rows(m.approvals, request_id=r["request_id"])} for r in requests],
        }

    @tool("write")
    async def close_access_request(self, employee_id: str, request_id: str) -> dict[str, Any]:
        """Mark an approved access request fulfilled, once the access it asked for is in place."""
        require(employee_id=employee_id, request_id=request_id)
        employee = self._subject(employee_id)
        request = self.row(m.access_requests, request_id=request_id.strip(), employee_id=employee["employee_id"])
        if request is None:
            raise ToolError("no_such_record", f"{employee_id} has no access request {request_id}")
        if request["status"] != "approved":
            raise ToolError("not_permitted", f"access request {request_id} is {request['status']}, not approved")
        change = (
            update(m.access_requests)
            .where(m.access_requests.c.request_id == request["request_id"])
            .values(status="fulfilled")
        )
        self._write(employee["employee_id"], "close_access_request", request["request_id"], change)
        return {**request, "status": "fulfilled"}


system = System(
    "groups",
    "Groups / SSO: groups, memberships, and access requests with their approvals.",
    ("groups", "group_memberships", "access_requests", "approvals"),
    Groups,
)
