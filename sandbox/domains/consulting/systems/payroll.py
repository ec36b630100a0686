"""Payroll: one payroll record per employee (legal name, salary, cost center, status). Salaries are confidential."""

from __future__ import annotations

from typing import Any

from sqlalchemy import update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import ConsultingSystem, display_name, one_of, require

PAYROLL_STATUS_NEEDS = {"final": "terminated", "unpaid_leave": "on_leave", "active": "active"}
"""The HRIS status each payroll status needs."""


class Payroll(ConsultingSystem):
    """Payroll records: read only by HR or the employee's manager (the requester's authority)."""

    NAME = "payroll"

    def _record(self, employee_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        employee = self._subject(employee_id)
        return employee, self._found(m.payroll_records, "payroll record", employee_id=employee["employee_id"])

    def _set(
        self, employee: dict[str, Any], record: dict[str, Any], action: str, target: str, **values: Any
    ) -> dict[str, Any]:
        change = (
            update(m.payroll_records).where(m.payroll_records.c.payroll_id == record["payroll_id"]).values(**values)
        )
        self._write(employee["employee_id"], action, target, change)
        return {**record, **values}

    @tool("lookup")
    async def get_payroll_record(self, employee_id: str) -> dict[str, Any]:
        """An employee's payroll record, salary included: confidential to HR and the employee's manager."""
        return self._record(employee_id)[1]

    @tool("write")
    async def set_payroll_status(self, employee_id: str, status: str) -> dict[str, Any]:
        """Set payroll to final (last pay today, after a termination), unpaid_leave (during a leave of
        absence) or active; HRIS must already show the matching status."""
        require(employee_id=employee_id, status=status)
        one_of("status", status, PAYROLL_STATUS_NEEDS)
        employee, record = self._record(employee_id)
        if employee["status"] != PAYROLL_STATUS_NEEDS[status]:
            raise ToolError("hris_not_updated", f"HRIS shows {employee_id} as {employee['status']}")
        if record["status"] == status:
            raise ToolError("already_exists", f"payroll of {employee_id} is already {status}")
        final = m.TODAY if status == "final" else None
        return self._set(employee, record, "set_payroll_status", status, status=status, final_pay_date=final)

    @tool("write")
    async def set_payroll_cost_center(self, employee_id: str, cost_center: str) -> dict[str, Any]:
        """Charge an employee's pay to their HRIS department's cost center (after a transfer)."""
        require(employee_id=employee_id, cost_center=cost_center)
        employee, record = self._record(employee_id)
        if cost_center != m.DEPARTMENTS[employee["department"]]:
            raise ToolError("hris_not_updated", f"HRIS department {employee['department']} has another cost center")
        return self._set(employee, record, "set_payroll_cost_center", cost_center, cost_center=cost_center)

    @tool("write")
    async def set_payroll_legal_name(self, employee_id: str, legal_name: str) -> dict[str, Any]:
        """Change the legal name payslips carry to the name HRIS now records."""
        require(employee_id=employee_id, legal_name=legal_name)
        employee, record = self._record(employee_id)
        if legal_name.strip() != display_name(employee):
            raise ToolError("hris_not_updated", f"HRIS records the name {display_name(employee)}")
        return self._set(employee, record, "set_payroll_legal_name", legal_name.strip(), legal_name=legal_name.strip())


system = System(
    "payroll", "Payroll: payroll records, salaries (confidential), cost centers.", ("payroll_records",), Payroll
)
