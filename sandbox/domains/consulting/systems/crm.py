"""CRM: the firm's client accounts."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import ConsultingSystem, require


class Crm(ConsultingSystem):
    """Client accounts: who the firm works for (names, industries, status)."""

    NAME = "crm"

    @tool("lookup")
    async def find_client(self, name: str) -> dict[str, Any]:
        """Find a client account by name (case-insensitive)."""
        require(name=name)
        row = (
            self.db.execute(
                select(m.client_accounts).where(func.lower(m.client_accounts.c.name) == name.strip().lower())
            )
            .mappings()
            .first()
        )
        if row is None:
            raise ToolError("no_such_record", f"no client named {name}")
        return dict(row)

    @tool("lookup")
    async def get_client_account(self, client_id: str) -> dict[str, Any]:
        """A client account by id, with its projects."""
        require(client_id=client_id)
        client = self._found(m.client_accounts, "client", client_id=client_id.strip())
        return {**client, "projects": self.rows(m.projects, client_id=client["client_id"])}


system = System("crm", "CRM: client accounts.", ("client_accounts",), Crm)
