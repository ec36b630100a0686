"""Staffing: client projects (each with a lead) and who is staffed on them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select, update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import ConsultingSystem, require


class Staffing(ConsultingSystem):
    """Projects and staffing assignments; staffing someone on a client's project needs the lead's approval."""

    NAME = "staffing"

    @tool("lookup")
    async def get_project(self, project_id: str) -> dict[str, Any]:
        """A project: its client, name, lead and status."""
        require(project_id=project_id)
        return self._found(m.projects, "project", project_id=project_id.strip())

    @tool("lookup")
    async def get_staffing(self, employee_id: str) -> dict[str, Any]:
        """An employee's staffing assignments, each with its project's client."""
        employee = self._subject(employee_id)
        rows = self.rows(m.staffing_assignments, employee_id=employee["employee_id"])
        clients = dict(self.db.execute(select(m.projects.c.project_id, m.projects.c.client_id)).all())
        return {
            "employee_id": employee["employee_id"],
            "assignments": [{**r, "client_id": clients.get(r["project_id"])} for r in rows],
        }

    @tool("write")
    async def add_staffing_assignment(self, employee_id: str, project_id: str, request_id: str) -> dict[str, Any]:
        """Staff an employee on a client project; needs their access request for it approved by the project's lead."""
        require(employee_id=employee_id, project_id=project_id, request_id=request_id)
        employee = self._subject(employee_id)
        project = self._found(m.projects, "project", project_id=project_id.strip())
        request = self.row(
            m.access_requests,
            request_id=request_id.strip(),
            employee_id=employee["employee_id"],
            project_id=project["project_id"],
        )
        approved = request is not None and self.row(
            m.approvals, request_id=request["request_id"], approver_id=project["lead_id"], decision="approved"
        )
        if not approved:
            raise ToolError(
                "approval_missing",
                f"no approval by {project['project_id']}'s lead {project['lead_id']} for this access request",
            )
        if self.row(
            m.staffing_assignments,
            employee_id=employee["employee_id"],
            project_id=project["project_id"],
            status="active",
        ):
            raise ToolError("already_exists", f"{employee_id} is already staffed on {project_id}")
        values = {
            "employee_id": employee["employee_id"],
            "project_id": project["project_id"],
            "start_date": m.TODAY,
            "end_date": None,
            "status": "active",
        }
        self._write(
            employee["employee_id"],
            "add_staffing_assignment",
            project["project_id"],
            insert(m.staffing_assignments).values(values),
        )
        return values

    @tool("write")
    async def end_staffing_assignment(self, employee_id: str, assignment_id: int) -> dict[str, Any]:
        """End an active staffing assignment today (rolling off a client, or leaving the firm)."""
        employee = self._subject(employee_id)
        row = self.row(
            m.staffing_assignments, assignment_id=assignment_id, employee_id=employee["employee_id"], status="active"
        )
        if row is None:
            raise ToolError("no_such_record", f"{employee_id} has no active staffing assignment {assignment_id}")
        change = (
            update(m.staffing_assignments)
            .where(m.staffing_assignments.c.assignment_id == assignment_id)
            .values(status="ended", end_date=m.TODAY)
        )
        self._write(employee["employee_id"], "end_staffing_assignment", row["project_id"], change)
        return {**row, "status": "ended", "end_date": m.TODAY}


system = System(
    "staffing",
    "Staffing: client projects, their leads, and staffing assignments.",
    ("projects", "staffing_assignments"),
    Staffing,
)
