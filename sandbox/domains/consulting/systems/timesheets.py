"""Timesheets: time codes of client projects, and the weekly lines consultants book hours on."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import ConsultingSystem, require


class Timesheets(ConsultingSystem):
    """Time codes and timesheet lines; a line on a project's code needs a staffing assignment on it."""

    NAME = "timesheets"

    @tool("lookup")
    async def list_timesheet_codes(self, project_id: str) -> dict[str, Any]:
        """The time codes of a project."""
        require(project_id=project_id)
        return {"project_id": project_id, "codes": self.rows(m.timesheet_projects, project_id=project_id.strip())}

    @tool("lookup")
    async def get_timesheet_lines(self, employee_id: str) -> dict[str, Any]:
        """An employee's timesheet lines (code, week, hours, status)."""
        employee = self._subject(employee_id)
        return {
            "employee_id": employee["employee_id"],
            "lines": self.rows(m.timesheet_entries, employee_id=employee["employee_id"]),
        }

    @tool("write")
    async def open_timesheet_line(self, employee_id: str, code: str) -> dict[str, Any]:
        """Open this week's line on a project's time code; the employee must be staffed on that project."""
        require(employee_id=employee_id, code=code)
        employee = self._subject(employee_id)
        project = self._found(m.timesheet_projects, "time code", code=code.strip())
        if (
            self.row(
                m.staffing_assignments,
                employee_id=employee["employee_id"],
                project_id=project["project_id"],
                status="active",
            )
            is None
        ):
            raise ToolError(
                "not_staffed_on_client", f"{employee_id} is not staffed on {project['project_id']}: staff them first"
            )
        if (
            self.row(m.timesheet_entries, employee_id=employee["employee_id"], code=project["code"], status="open")
            is not None
        ):
            raise ToolError("already_exists", f"{employee_id} already has an open line on {code}")
        values = {
            "employee_id": employee["employee_id"],
            "code": project["code"],
            "week": m.TODAY,
            "hours": 0,
            "status": "open",
        }
        self._write(
            employee["employee_id"], "open_timesheet_line", project["code"], insert(m.timesheet_entries).values(values)
        )
        return values

    @tool("write")
    async def close_timesheet_line(self, employee_id: str, entry_id: int) -> dict[str, Any]:
        """Close an open timesheet line (the employee leaves the project or the firm)."""
        employee = self._subject(employee_id)
        line = self.row(m.timesheet_entries, entry_id=entry_id, employee_id=employee["employee_id"], status="open")
        if line is None:
            raise ToolError("no_such_record", f"{employee_id} has no open timesheet line {entry_id}")
        change = update(m.timesheet_entries).where(m.timesheet_entries.c.entry_id == entry_id).values(status="closed")
        self._write(employee["employee_id"], "close_timesheet_line", line["code"], change)
        return {**line, "status": "closed"}


system = System(
    "timesheets",
    "Timesheets: project time codes and weekly lines.",
    ("timesheet_projects", "timesheet_entries"),
    Timesheets,
)
