"""Directory / identity: accounts and MFA devices, and the identity provider's audit log of every change."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select, update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import ConsultingSystem, display_name, one_of, require

ACCOUNT_STATUS_NEEDS = {"disabled": ("terminated",), "suspended": ("on_leave",), "active": ("active", "pending_start")}
"""The HRIS status each account status needs: HR records the change first, the directory follows."""


class Directory(ConsultingSystem):
    """Sign-in accounts (one per person), their MFA devices, and the audit log."""

    NAME = "directory"

    def _username(self, employee: dict[str, Any]) -> str:
        base = f"{employee['first_name'][0]}{employee['last_name']}".lower().replace(" ", "").replace("-", "")
        taken = set(
            self.db.execute(select(m.accounts.c.username).where(m.accounts.c.username.like(f"{base}%"))).scalars()
        )
        return next(f"{base}{n or ''}" for n in range(len(taken) + 1) if f"{base}{n or ''}" not in taken)

    @tool("lookup")
    async def get_directory_account(self, employee_id: str) -> dict[str, Any]:
        """An employee's sign-in account (username, display name, status, expiry) and their MFA devices."""
        employee = self._subject(employee_id)
        account = self._account_of(employee["employee_id"])
        return {**account, "mfa_devices": self.rows(m.mfa_devices, employee_id=employee["employee_id"])}

    @tool("write")
    async def create_directory_account(self, employee_id: str) -> dict[str, Any]:
        """Create a new hire's sign-in account (needed by every other system); a contractor's expires on
        their HRIS end date. The employee must be pending_start or active in HRIS."""
        employee = self._subject(employee_id)
        if employee["status"] not in ("pending_start", "active"):
            raise ToolError("hris_not_updated", f"HRIS shows {employee_id} as {employee['status']}")
        if self.row(m.accounts, employee_id=employee["employee_id"]) is not None:
            raise ToolError("already_exists", f"{employee_id} already has a directory account")
        values = {
            "account_id": f"acc-{employee['employee_id']}",
            "employee_id": employee["employee_id"],
            "username": self._username(employee),
            "display_name": display_name(employee),
            "status": "active",
            "expires_on": employee["end_date"] if employee["employment_type"] == "contractor" else None,
            "mfa_enrollment_required": True,
        }
        self._write(
            employee["employee_id"], "create_directory_account", values["account_id"], insert(m.accounts).values(values)
        )
        return values

    @tool("write")
    async def set_account_status(self, employee_id: str, status: str) -> dict[str, Any]:
        """Activate, suspend or disable an account; HRIS must already show the matching status (terminated
        for disabled, on_leave for suspended, active for active)."""
        require(employee_id=employee_id, status=status)
        one_of("status", status, ACCOUNT_STATUS_NEEDS)
        employee = self._subject(employee_id)
        account = self._account_of(employee["employee_id"])
        if employee["status"] not in ACCOUNT_STATUS_NEEDS[status]:
            raise ToolError(
                "hris_not_updated",
                f"HRIS shows {employee_id} as {employee['status']}: record the change in HRIS before setting {status}",
            )
        if account["status"] == status:
            raise ToolError("already_exists", f"the account of {employee_id} is already {status}")
        change = update(m.accounts).where(m.accounts.c.employee_id == employee["employee_id"]).values(status=status)
        self._write(employee["employee_id"], "set_account_status", status, change)
        return {**account, "status": status}

    @tool("write")
    async def set_account_expiry(self, employee_id: str, expires_on: str) -> dict[str, Any]:
        """Move a contractor's account expiry; it may not be later than their HRIS end date."""
        require(employee_id=employee_id, expires_on=expires_on)
        employee = self._subject(employee_id)
        account = self._account_of(employee["employee_id"])
        if employee["employment_type"] != "contractor":
            raise ToolError("not_permitted", f"{employee_id} is not a contractor; employee accounts do not expire")
        if expires_on > (employee["end_date"] or ""):
            raise ToolError("hris_not_updated", f"HRIS end date is {employee['end_date']}: extend the contract first")
        change = (
            update(m.accounts).where(m.accounts.c.employee_id == employee["employee_id"]).values(expires_on=expires_on)
        )
        self._write(employee["employee_id"], "set_account_expiry", expires_on, change)
        return {**account, "expires_on": expires_on}

    @tool("write")
    async def rename_account(self, employee_id: str, display_name: str) -> dict[str, Any]:
        """Change an account's display name to the employee's name as HRIS now records it."""
        require(employee_id=employee_id, display_name=display_name)
        employee = self._subject(employee_id)
        account = self._account_of(employee["employee_id"])
        if display_name.strip() != f"{employee['first_name']} {employee['last_name']}":
            raise ToolError(
                "hris_not_updated", f"HRIS records the name {employee['first_name']} {employee['last_name']}"
            )
        change = (
            update(m.accounts)
            .where(m.accounts.c.employee_id == employee["employee_id"])
            .values(display_name=display_name.strip())
        )
        self._write(employee["employee_id"], "rename_account", display_name.strip(), change)
        return {**account, "display_name": display_name.strip()}

    @tool("write")
    async def revoke_mfa_device(self, employee_id: str, mfa_id: int) -> dict[str, Any]:
        """Revoke one of an employee's MFA devices (a lost phone); their other devices keep working."""
        employee = self._subject(employee_id)
        device = self.row(m.mfa_devices, mfa_id=mfa_id, employee_id=employee["employee_id"])
        if device is None or device["status"] != "active":
            raise ToolError("no_such_record", f"{employee_id} has no active MFA device {mfa_id}")
        change = update(m.mfa_devices).where(m.mfa_devices.c.mfa_id == mfa_id).values(status="revoked")
        self._write(employee["employee_id"], "revoke_mfa_device", str(mfa_id), change)
        return {**device, "status": "revoked"}

    @tool("write")
    async def require_mfa_enrollment(self, employee_id: str) -> dict[str, Any]:
        """Make the employee enrol a new MFA device at their next sign-in (after an MFA reset)."""
        employee = self._subject(employee_id)
        account = self._account_of(employee["employee_id"])
        if account["mfa_enrollment_required"]:
            raise ToolError("already_exists", f"{employee_id} must already enrol a new MFA device")
        change = (
            update(m.accounts)
            .where(m.accounts.c.employee_id == employee["employee_id"])
            .values(mfa_enrollment_required=True)
        )
        self._write(employee["employee_id"], "require_mfa_enrollment", "mfa", change)
        return {**account, "mfa_enrollment_required": True}

    @tool("lookup")
    async def search_audit_log(self, employee_id: str) -> dict[str, Any]:
        """Every audited change to an employee's records, oldest first: who, which system, what, when."""
        employee = self._subject(employee_id)
        return {
            "employee_id": employee["employee_id"],
            "entries": self.rows(m.audit_log, employee_id=employee["employee_id"]),
        }


system = System(
    "directory",
    "Directory / identity provider: sign-in accounts, MFA devices and the audit log of every change.",
    ("accounts", "mfa_devices", "audit_log"),
    Directory,
)
