"""The support system: hand-offs to a human agent (notes) and the calculator."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert

from passhat.sandbox.domain import System, ToolError, evaluate_arithmetic, tool
from passhat.sandbox.domains.travel import models as m
from passhat.sandbox.domains.travel.systems.common import TravelSystem, required


class Support(TravelSystem):
    """The agent's desk: transfers and arithmetic."""

    @tool("write")
    async def transfer_to_human(self, summary: str, customer_id: str = "") -> dict[str, Any]:
        """Hand the conversation to a human agent with a summary (for what the policy sends to a person)."""
        required(summary=summary)
        self.db.execute(
            insert(m.notes).values(customer_id=customer_id or None, kind="transfer", body=summary, created_at=m.NOW)
        )
        self.db.commit()
        return {"transferred": True}

    @tool("other")
    async def calculate(self, expression: str) -> dict[str, Any]:
        """Evaluate an arithmetic expression (numbers, + - * / and parentheses), rounded to 2 decimals."""
        try:
            value = evaluate_arithmetic(expression)
        except (SyntaxError, ValueError, ZeroDivisionError) as exc:
            raise ToolError("bad_request", f"cannot evaluate {expression!r}: {exc}") from exc
        return {"result": round(value, 2)}


system = System("support", "Transfers to a human agent, and a calculator.", ("notes",), Support)
