"""Document storage: each client's shares and who may open them; nobody gets another client's shares."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select, update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import ConsultingSystem, one_of, require


class Documents(ConsultingSystem):
    """Client shares and share permissions; a permission needs an active staffing on that client."""

    NAME = "documents"

    @tool("lookup")
    async def get_share(self, share_id: str) -> dict[str, Any]:
        """A share: its client and name."""
        require(share_id=share_id)
        return self._found(m.shares, "share", share_id=share_id.strip())

    @tool("lookup")
    async def list_client_shares(self, client_id: str) -> dict[str, Any]:
        """A client's document shares: the id and name of each."""
        require(client_id=client_id)
        return {"client_id": client_id, "shares": self.rows(m.shares, client_id=client_id.strip())}

    @tool("lookup")
    async def get_share_permissions(self, employee_id: str) -> dict[str, Any]:
        """An employee's share permissions, each with its share's client."""
        employee = self._subject(employee_id)
        clients = dict(self.db.execute(select(m.shares.c.share_id, m.shares.c.client_id)).all())
        rows = self.rows(m.share_permissions, employee_id=employee["employee_id"])
        return {
            "employee_id": employee["employee_id"],
            "permissions": [{**r, "client_id": clients.get(r["share_id"])} for r in rows],
        }

    @tool("write")
    async def grant_share_permission(self, employee_id: str, share_id: str, level: str) -> dict[str, Any]:
        """Let an employee open a client share (read or edit); only while staffed on a project of that client."""
        require(employee_id=employee_id, share_id=share_id, level=level)
        one_of("level", level, ("read", "edit"))
        employee = self._subject(employee_id)
        share = self._found(m.shares, "share", share_id=share_id.strip())
        staffed = self.db.execute(
            select(m.staffing_assignments.c.assignment_id)
            .join(m.projects, m.projects.c.project_id == m.staffing_assignments.c.project_id)
            .where(
                m.staffing_assignments.c.employee_id == employee["employee_id"],
                m.staffing_assignments.c.status == "active",
                m.projects.c.client_id == share["client_id"],
            )
        ).first()
        if staffed is None:
            raise ToolError(
                "not_staffed_on_client", f"{employee_id} is not staffed on any project of client {share['client_id']}"
            )
        if self.row(
            m.share_permissions, employee_id=employee["employee_id"], share_id=share["share_id"], status="active"
        ):
            raise ToolError("already_exists", f"{employee_id} can already open {share_id}")
        values = {
            "share_id": share["share_id"],
            "employee_id": employee["employee_id"],
            "level": level,
            "status": "active",
        }
        self._write(
            employee["employee_id"],
            "grant_share_permission",
            share["share_id"],
            insert(m.share_permissions).values(values),
        )
        return values

    @tool("write")
    async def revoke_share_permission(self, employee_id: str, permission_id: int) -> dict[str, Any]:
        """Revoke one of an employee's share permissions."""
        employee = self._subject(employee_id)
        row = self.row(
            m.share_permissions, permission_id=permission_id, employee_id=employee["employee_id"], status="active"
        )
        if row is None:
            raise ToolError("no_such_record", f"{employee_id} has no active share permission {permission_id}")
        change = (
            update(m.share_permissions)
            .where(m.share_permissions.c.permission_id == permission_id)
            .values(status="revoked")
        )
        self._write(employee["employee_id"], "revoke_share_permission", row["share_id"], change)
        return {**row, "status": "revoked"}


system = System(
    "documents", "Document storage: client shares and share permissions.", ("shares", "share_permissions"), Documents
)
