"""The support system: hand-offs to a human (notes) and the calculator."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert

from passhat.sandbox.domain import System, ToolError, evaluate_arithmetic, tool
from passhat.sandbox.domains.insurance import models as m
from passhat.sandbox.domains.insurance.systems.common import InsuranceSystem


class Support(InsuranceSystem):
    """The agent's desk: transfers and arithmetic."""

    @tool("write")
    async def transfer_to_human(self, summary: str, policyholder_id: str = "") -> dict[str, Any]:
        """Hand the conversation to a human claims representative, with a summary of the request."""
        self.db.execute(
            insert(m.notes).values(
                policyholder_id=policyholder_id or None, kind="transfer", body=summary, created_on=m.TODAY
            )
        )
        self.db.commit()
        return {"transferred": True}

    @tool("other")
    async def calculate(self, expression: str) -> dict[str, Any]:
        """Evaluate an arithmetic expression (numbers, + - * / and parentheses), rounded to 2 decimals."""
        try:
            value = evaluate_arithmetic(expression)
        except (SyntaxError, ValueError, ZeroDivisionError) as exc:
            raise ToolError("invalid_value", f"cannot evaluate {expression!r}: {exc}") from None
        return {"result": round(value, 2)}


system = System("support", "Transfers to a human, and a calculator.", ("notes",), Support)
