"""The circulation system: loans, their due dates and renewals (the `loans` table)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import select, update

from passhat.sandbox.domain import System, SystemBackend, ToolError, tool
from passhat.sandbox.domains.mock import models as m


class Circulation(SystemBackend):
    """Loans of identified members."""

    def _verified(self, member_id: str) -> None:
        if member_id not in self.session.identified:
            raise ToolError("member_not_verified", "identify the member first (find_member_by_email)")

    @tool("lookup")
    async def get_loans(self, member_id: str) -> dict[str, Any]:
        """An identified member's loans: title, due date and renewals so far."""
        self._verified(member_id)
        rows = self.db.execute(select(m.loans).where(m.loans.c.member_id == member_id).order_by(m.loans.c.loan_id))
        return {"member_id": member_id, "loans": [dict(row) for row in rows.mappings()]}

    @tool("write")
    async def renew_loan(self, loan_id: str, weeks: int) -> dict[str, Any]:
        """Extend a loan by 1 or 2 weeks (a loan can be renewed at most twice)."""
        loan = self.db.execute(select(m.loans).where(m.loans.c.loan_id == loan_id)).mappings().first()
        if loan is None:
            raise ToolError("no_such_record", f"loan {loan_id} not found")
        self._verified(loan["member_id"])
        if weeks not in (1, 2):
            raise ToolError("bad_request", "weeks must be 1 or 2")
        if loan["renewals"] >= m.RENEWAL_LIMIT:
            raise ToolError("renewal_limit_reached", f"loan {loan_id} was already renewed {m.RENEWAL_LIMIT} times")
        due = (dt.date.fromisoformat(loan["due"]) + dt.timedelta(weeks=weeks)).isoformat()
        values = {"due": due, "renewals": loan["renewals"] + 1}
        self.db.execute(update(m.loans).where(m.loans.c.loan_id == loan_id).values(**values))
        self.db.commit()
        return {"loan_id": loan_id, **values}


system = System("circulation", "Loans, due dates and renewals.", ("loans",), Circulation)
