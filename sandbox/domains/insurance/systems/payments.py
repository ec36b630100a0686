"""The payments system: claim payments."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.insurance import models as m
from passhat.sandbox.domains.insurance.systems.common import InsuranceSystem, new_id


class Payments(InsuranceSystem):
    """Payments on claims: the total-loss settlement."""

    @tool("write")
    async def issue_total_loss_payment(self, claim_id: int, amount: float) -> dict[str, Any]:
        """Pay a valued total loss to the policyholder: the valuation minus the claim's deductible. The claim
        is then settled. The valuation must be recorded first (record_total_loss_valuation)."""
        claim, policy = self._claim(claim_id)
        if claim["valuation"] is None:
            raise ToolError("valuation_missing", f"claim {claim_id} has no total-loss valuation recorded yet")
        due = round(float(claim["valuation"]) - float(claim["deductible"]), 2)
        if round(float(amount), 2) != due:
            raise ToolError("amount_mismatch", "the payment is the valuation minus the claim's deductible")
        if any(p["kind"] == "total_loss" for p in self.rows(m.payments, claim_id=claim_id)):
            raise ToolError("already_recorded", f"claim {claim_id} was already paid")
        holder = self.row(m.policyholders, policyholder_id=policy["policyholder_id"]) or {}
        result = self.db.execute(
            insert(m.payments).values(
                claim_id=claim_id,
                kind="total_loss",
                amount=due,
                payee=f"{holder.get('first_name', '')} {holder.get('last_name', '')}".strip(),
                status="issued",
                issued_on=m.TODAY,
            )
        )
        self.db.execute(update(m.claims).where(m.claims.c.claim_id == claim_id).values(status="settled"))
        self.db.commit()
        return {"payment_id": new_id(result), "claim_id": claim_id, "amount": due}


system = System("payments", "Claim payments.", ("payments",), Payments)
