"""What every consulting system shares: row lookups, the requester's authority, validation and the audit trail.

Each of the eighteen systems is a `ConsultingSystem`: one trial's connection and the session (who the verified
requester is, and over whom they were granted authority). A write goes through `_write`, which runs its
statements, appends the audit-log row every change leaves, and commits. `PersonAccounts` holds the lookup and
status rules of the systems with one account row per person (email, chat, issue tracker, VPN, ...).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from sqlalchemy import Executable, Table, insert, update

from passhat.sandbox.domain import SystemBackend, ToolError
from passhat.sandbox.domains.consulting import models as m

ERRORS: Mapping[str, str] = {
    "no_such_employee": "not_found",
    "no_such_record": "not_found",
    "requester_not_verified": "precondition_failed",
    "no_directory_account": "precondition_failed",
    "hris_not_updated": "precondition_failed",
    "not_staffed_on_client": "precondition_failed",
    "laptop_still_assigned": "precondition_failed",
    "not_hr_or_manager": "permission_denied",
    "self_request": "not_allowed",
    "not_permitted": "not_allowed",
    "approval_missing": "approval_required",
    "already_exists": "conflict",
    "invalid_request": "invalid_argument",
}
"""The consulting domain's error vocabulary, mapped onto the failure classifier's categories."""

NOT_VERIFIED = (
    "the requester is not verified for this employee: call verify_requester, then check_requester_authority "
    "for the employee, before reading or changing their records"
)


def require(**arguments: object) -> None:
    """Refuse empty required arguments (what a careless agent sends) as an invalid request."""
    missing = [name for name, value in arguments.items() if not str(value or "").strip()]
    if missing:
        raise ToolError("invalid_request", f"{', '.join(missing)} is required")


def one_of(name: str, value: str, allowed: Iterable[str]) -> str:
    """`value` if it is one of `allowed`, else an invalid request naming the allowed values."""
    choices = tuple(allowed)
    if value not in choices:
        raise ToolError("invalid_request", f"{name} must be one of {', '.join(choices)}, not {value!r}")
    return value


class ConsultingSystem(SystemBackend):
    """Base of the consulting systems: lookups, the requester's authority, and audited writes."""

    NAME: ClassVar[str] = ""
    """The system's name, as written in the audit log."""

    def _found(self, table: Table, what: str, **where: Any) -> dict[str, Any]:
        row = self.row(table, **where)
        if row is None:
            described = ", ".join(f"{k} {v}" for k, v in where.items())
            raise ToolError("no_such_record", f"no {what} with {described}")
        return row

    def _employee(self, employee_id: str) -> dict[str, Any]:
        require(employee_id=employee_id)
        row = self.row(m.employees, employee_id=employee_id.strip())
        if row is None:
            raise ToolError("no_such_employee", f"no employee with id {employee_id}")
        return row

    def _subject(self, employee_id: str) -> dict[str, Any]:
        """The employee, once the verified requester has been granted authority over them in this session."""
        employee = self._employee(employee_id)
        if self.session.requester is None or employee["employee_id"] not in self.session.identified:
            raise ToolError("requester_not_verified", NOT_VERIFIED)
        return employee

    def _account_of(self, employee_id: str) -> dict[str, Any]:
        account = self.row(m.accounts, employee_id=employee_id)
        if account is None:
            raise ToolError(
                "no_directory_account", f"{employee_id} has no directory account: create_directory_account first"
            )
        return account

    def _write(self, employee_id: str, action: str, target: str, *statements: Executable) -> None:
        """Run the statements, append the audit-log row of this change, commit."""
        for statement in statements:
            self.db.execute(statement)
        self.db.execute(
            insert(m.audit_log).values(
                actor_id=self.session.requester,
                employee_id=employee_id,
                system=self.NAME,
                action=action,
                target=target,
                created_at=m.TODAY,
            )
        )
        self.db.commit()


class PersonAccounts(ConsultingSystem):
    """Base of a system holding one account row per person (email, chat, issue tracker, VPN, expenses, badges).

    A subclass names its table, key column, the statuses its status tool accepts and the words for its row;
    its `get_...` and `set_..._status` tools call `_get_record` and `_set_record_status`.
    """

    TABLE: ClassVar[Table]
    KEY: ClassVar[str]
    STATUSES: ClassVar[tuple[str, ...]]
    WHAT: ClassVar[str]

    def _get_record(self, employee_id: str) -> dict[str, Any]:
        employee = self._subject(employee_id)
        row = self.row(self.TABLE, employee_id=employee["employee_id"])
        if row is None:
            raise ToolError("no_such_record", f"{employee_id} has no {self.WHAT}")
        return row

    def _set_record_status(self, action: str, employee_id: str, status: str) -> dict[str, Any]:
        require(employee_id=employee_id, status=status)
        one_of("status", status, self.STATUSES)
        employee = self._subject(employee_id)
        row = self._found(self.TABLE, self.WHAT, employee_id=employee["employee_id"])
        if row["status"] == status:
            raise ToolError("already_exists", f"the {self.WHAT} of {employee_id} is already {status}")
        change = update(self.TABLE).where(self.TABLE.c[self.KEY] == row[self.KEY]).values(status=status)
        self._write(employee["employee_id"], action, status, change)
        return {**row, "status": status}


def new_account(table: Table, key: str, prefix: str, employee_id: str, **values: Any) -> Executable:
    """The insert of a person's new account row, its id derived from the employee's."""
    return insert(table).values({key: f"{prefix}-{employee_id}", "employee_id": employee_id, **values})


def display_name(employee: Mapping[str, Any]) -> str:
    """The name shown in every system: first and last name from HRIS."""
    return f"{employee['first_name']} {employee['last_name']}"


def create_named(
    system: PersonAccounts,
    table: Table,
    key: str,
    prefix: str,
    action: str,
    employee_id: str,
    *,
    handle: bool = False,
) -> dict[str, Any]:
    """Create a person's account row shown under their HRIS name (chat, issue tracker); needs a directory account."""
    employee = system._subject(employee_id)
    account = system._account_of(employee["employee_id"])
    if system.row(table, employee_id=employee["employee_id"]) is not None:
        raise ToolError("already_exists", f"{employee_id} already has an account in {system.NAME}")
    values: dict[str, Any] = {"display_name": display_name(employee), "status": "active"}
    if handle:
        values["handle"] = account["username"]
    system._write(
        employee["employee_id"],
        action,
        values["display_name"],
        new_account(table, key, prefix, employee["employee_id"], **values),
    )
    return {"employee_id": employee["employee_id"], **values}


def rename_named(
    system: PersonAccounts, table: Table, key: str, action: str, employee_id: str, name: str
) -> dict[str, Any]:
    """Change a person's display name in `table` to the name HRIS records (the HR change comes first)."""
    require(employee_id=employee_id, display_name=name)
    employee = system._subject(employee_id)
    row = system._found(table, "account", employee_id=employee["employee_id"])
    if name.strip() != display_name(employee):
        raise ToolError("hris_not_updated", f"HRIS records the name {display_name(employee)}: change it there first")
    change = update(table).where(table.c[key] == row[key]).values(display_name=name.strip())
    system._write(employee["employee_id"], action, name.strip(), change)
    return {**row, "display_name": name.strip()}
