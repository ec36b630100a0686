"""HRIS: employees and their employment events; verifies the requester and their authority over the subject.

HRIS is the system of record: every other system's rules read the employee's role, department, manager,
status and end date from here, so an HR change comes first and the other systems follow it.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Executable, insert, update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import ConsultingSystem, one_of, require

_PUBLIC = ("employee_id", "first_name", "last_name", "work_email", "role", "department", "employment_type")


class Hris(ConsultingSystem):
    """Employee records, employment events, and who may ask for changes to whom."""

    NAME = "hris"

    def _event(self, employee_id: str, kind: str, detail: str, effective_date: str) -> Executable:
        return insert(m.employment_events).values(
            employee_id=employee_id,
            kind=kind,
            detail=detail,
            effective_date=effective_date,
            recorded_by=self.session.requester,
        )

    def _change(self, employee: dict[str, Any], action: str, target: str, event: Executable, **values: Any) -> None:
        change = update(m.employees).where(m.employees.c.employee_id == employee["employee_id"]).values(**values)
        self._write(employee["employee_id"], action, target, change, event)

    @tool("lookup")
    async def verify_requester(self, employee_id: str, work_email: str) -> dict[str, Any]:
        """Verify the person asking: their own employee id and work email must match an active employee.

        Required before anything else; returns the requester's id, name and whether they work in HR."""
        require(employee_id=employee_id, work_email=work_email)
        row = self.row(m.employees, employee_id=employee_id.strip(), work_email=work_email.strip().lower())
        if row is None:
            raise ToolError("no_such_employee", "no employee with that employee id and work email")
        if row["status"] != "active":
            raise ToolError("not_permitted", f"{employee_id} is not an active employee and cannot make requests")
        self.session.requester = row["employee_id"]
        return {
            "employee_id": row["employee_id"],
            "name": f"{row['first_name']} {row['last_name']}",
            "is_hr": row["is_hr"],
        }

    @tool("lookup")
    async def check_requester_authority(self, requester_id: str, employee_id: str) -> dict[str, Any]:
        """Grant the verified requester authority over an employee: only HR or the employee's manager may ask
        for changes to (or read) another employee's records, and nobody may ask for themselves."""
        require(requester_id=requester_id, employee_id=employee_id)
        if self.session.requester is None or self.session.requester != requester_id.strip():
            raise ToolError("requester_not_verified", "verify the requester first (verify_requester)")
        subject = self._employee(employee_id)
        requester = self._employee(requester_id)
        if subject["employee_id"] == requester["employee_id"]:
            raise ToolError("self_request", "requests about yourself go through your manager or HR")
        if requester["is_hr"]:
            relation = "hr"
        elif subject["manager_id"] == requester["employee_id"]:
            relation = "manager"
        else:
            raise ToolError(
                "not_hr_or_manager",
                f"{requester['employee_id']} is neither in HR nor the manager of {subject['employee_id']}",
            )
        self.session.identified.add(subject["employee_id"])
        return {"employee_id": subject["employee_id"], "relation": relation}

    @tool("lookup")
    async def get_employee(self, employee_id: str) -> dict[str, Any]:
        """An employee's HR record: name, role, department, manager, type, status, dates and site (no pay)."""
        employee = self._subject(employee_id)
        return {key: value for key, value in employee.items() if key != "is_hr"}

    @tool("lookup")
    async def find_employee(self, work_email: str) -> dict[str, Any]:
        """Look up a colleague's directory entry by work email: id, name, role and department only."""
        require(work_email=work_email)
        row = self.row(m.employees, work_email=work_email.strip().lower())
        if row is None:
            raise ToolError("no_such_employee", f"no employee with work email {work_email}")
        return {key: row[key] for key in _PUBLIC}

    @tool("write")
    async def change_role(self, employee_id: str, role: str, effective_date: str) -> dict[str, Any]:
        """Record a role change (an employment event); the role decides groups, licenses and code hosting."""
        require(employee_id=employee_id, role=role, effective_date=effective_date)
        one_of("role", role, m.ROLES)
        employee = self._subject(employee_id)
        if employee["role"] == role:
            raise ToolError("already_exists", f"{employee_id} already has role {role}")
        event = self._event(employee["employee_id"], "role_change", role, effective_date)
        self._change(employee, "change_role", role, event, role=role)
        return {"employee_id": employee["employee_id"], "role": role}

    @tool("write")
    async def transfer_department(
        self, employee_id: str, department: str, manager_id: str, effective_date: str
    ) -> dict[str, Any]:
        """Move an employee to another department under a new manager (an employment event)."""
        require(employee_id=employee_id, department=department, manager_id=manager_id, effective_date=effective_date)
        one_of("department", department, m.DEPARTMENTS)
        employee = self._subject(employee_id)
        manager = self._employee(manager_id)
        if manager["department"] != department or manager["status"] != "active":
            raise ToolError("not_permitted", f"{manager_id} is not an active manager in {department}")
        if employee["department"] == department:
            raise ToolError("already_exists", f"{employee_id} is already in {department}")
        event = self._event(employee["employee_id"], "transfer", f"{department} under {manager_id}", effective_date)
        self._change(employee, "transfer_department", department, event, department=department, manager_id=manager_id)
        return {"employee_id": employee["employee_id"], "department": department, "manager_id": manager_id}

    @tool("write")
    async def extend_contract(self, employee_id: str, end_date: str) -> dict[str, Any]:
        """Extend a contractor's contract to a later end date (their accounts expire on it)."""
        require(employee_id=employee_id, end_date=end_date)
        employee = self._subject(employee_id)
        if employee["employment_type"] != "contractor":
            raise ToolError("not_permitted", f"{employee_id} is not a contractor")
        if end_date <= (employee["end_date"] or ""):
            raise ToolError("invalid_request", f"the new end date must be after {employee['end_date']}")
        event = self._event(employee["employee_id"], "extension", end_date, m.TODAY)
        self._change(employee, "extend_contract", end_date, event, end_date=end_date)
        return {"employee_id": employee["employee_id"], "end_date": end_date}

    @tool("write")
    async def set_employment_status(self, employee_id: str, status: str, effective_date: str) -> dict[str, Any]:
        """Record a termination (terminated), a leave of absence (on_leave), or a return or rehire (active)."""
        require(employee_id=employee_id, status=status, effective_date=effective_date)
        one_of("status", status, ("active", "on_leave", "terminated"))
        employee = self._subject(employee_id)
        before = employee["status"]
        if before == status:
            raise ToolError("already_exists", f"{employee_id} is already {status}")
        kinds = {"terminated": "termination", "on_leave": "leave"}
        kind = kinds.get(status, "rehire" if before == "terminated" else "return")
        values: dict[str, Any] = {"status": status}
        if status == "terminated":
            values["end_date"] = effective_date
        if kind == "rehire":
            values.update(start_date=effective_date, end_date=None)
        event = self._event(employee["employee_id"], kind, status, effective_date)
        self._change(employee, "set_employment_status", status, event, **values)
        return {"employee_id": employee["employee_id"], **values}

    @tool("write")
    async def change_legal_name(self, employee_id: str, first_name: str, last_name: str) -> dict[str, Any]:
        """Record a legal name change; every other system then takes the new name from HRIS."""
        require(employee_id=employee_id, first_name=first_name, last_name=last_name)
        employee = self._subject(employee_id)
        name = f"{first_name.strip()} {last_name.strip()}"
        event = self._event(employee["employee_id"], "name_change", name, m.TODAY)
        self._change(
            employee, "change_legal_name", name, event, first_name=first_name.strip(), last_name=last_name.strip()
        )
        return {"employee_id": employee["employee_id"], "first_name": first_name, "last_name": last_name}


system = System(
    "hris",
    "HRIS, the system of record: employees (role, department, manager, status, dates) and employment events.",
    ("employees", "employment_events"),
    Hris,
)
