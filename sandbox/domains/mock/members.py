"""The members system: who the caller is (the `members` table)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from passhat.sandbox.domain import System, SystemBackend, ToolError, tool
from passhat.sandbox.domains.mock import models as m


class Members(SystemBackend):
    """Member records; identifying a member marks them verified for the session."""

    @tool("lookup")
    async def find_member_by_email(self, email: str) -> dict[str, Any]:
        """Identify a member by the email on their library card (required before any change to their loans)."""
        row = self.db.execute(select(m.members).where(m.members.c.email == email)).mappings().first()
        if row is None:
            raise ToolError("no_such_record", f"no member with email {email}")
        self.session.identified.add(row["member_id"])
        return {"member_id": row["member_id"], "name": row["name"]}


system = System("members", "Library members and their cards.", ("members",), Members)
