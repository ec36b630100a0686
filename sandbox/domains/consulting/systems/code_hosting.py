"""Code hosting: access to the firm's engineering organisation, for engineering roles only."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import ConsultingSystem, one_of, require


class CodeHosting(ConsultingSystem):
    """Repository access grants: engineers get code hosting, others don't."""

    NAME = "code_hosting"

    @tool("lookup")
    async def get_repo_access(self, employee_id: str) -> dict[str, Any]:
        """An employee's code-hosting grants (organisation, permission, status)."""
        employee = self._subject(employee_id)
        return {
            "employee_id": employee["employee_id"],
            "access": self.rows(m.repo_access, employee_id=employee["employee_id"]),
        }

    @tool("write")
    async def grant_repo_access(self, employee_id: str, permission: str) -> dict[str, Any]:
        """Grant read or write access to the engineering organisation; only for engineering roles in HRIS."""
        require(employee_id=employee_id, permission=permission)
        one_of("permission", permission, ("read", "write"))
        employee = self._subject(employee_id)
        self._account_of(employee["employee_id"])
        if not m.ROLES[employee["role"]]["engineering"]:
            raise ToolError("not_permitted", f"code hosting is for engineering roles; HRIS shows {employee['role']}")
        if self.row(m.repo_access, employee_id=employee["employee_id"], status="active") is not None:
            raise ToolError("already_exists", f"{employee_id} already has code-hosting access")
        values = {
            "employee_id": employee["employee_id"],
            "org": m.CODE_ORG,
            "permission": permission,
            "status": "active",
        }
        self._write(employee["employee_id"], "grant_repo_access", m.CODE_ORG, insert(m.repo_access).values(values))
        return values

    @tool("write")
    async def revoke_repo_access(self, employee_id: str, access_id: int) -> dict[str, Any]:
        """Revoke one code-hosting grant (offboarding, or a move out of engineering)."""
        employee = self._subject(employee_id)
        grant = self.row(m.repo_access, access_id=access_id, employee_id=employee["employee_id"], status="active")
        if grant is None:
            raise ToolError("no_such_record", f"{employee_id} has no active code-hosting grant {access_id}")
        change = update(m.repo_access).where(m.repo_access.c.access_id == access_id).values(status="revoked")
        self._write(employee["employee_id"], "revoke_repo_access", grant["org"], change)
        return {**grant, "status": "revoked"}


system = System("code_hosting", "Code hosting: repository organisation access.", ("repo_access",), CodeHosting)
