"""The customers system: policyholders; verifies the caller."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.insurance import models as m
from passhat.sandbox.domains.insurance.systems.common import InsuranceSystem


class Customers(InsuranceSystem):
    """Policyholders: finding (and so verifying) the caller, and their profile."""

    @tool("lookup")
    async def find_policyholder_by_email(self, email: str) -> dict[str, Any]:
        """Find a policyholder by email and verify them as the caller of this session. Returns policyholder_id."""
        row = self.row(m.policyholders, email=email.strip().lower())
        if row is None:
            raise ToolError("policyholder_not_found", f"no policyholder with email {email}")
        self.session.identified.add(row["policyholder_id"])
        return {"policyholder_id": row["policyholder_id"]}

    @tool("lookup")
    async def find_policyholder_by_policy(self, policy_id: str, last_name: str) -> dict[str, Any]:
        """Find a policyholder by a policy number (e.g. AUT-482913-K) and their last name; verifies them."""
        query = (
            select(m.policyholders.c.policyholder_id)
            .join(m.policies, m.policies.c.policyholder_id == m.policyholders.c.policyholder_id)
            .where(
                m.policies.c.policy_id == policy_id.strip().upper(),
                func.lower(m.policyholders.c.last_name) == last_name.strip().lower(),
            )
        )
        found = self.db.execute(query).scalar()
        if found is None:
            raise ToolError("policyholder_not_found", f"no policy {policy_id} held by someone named {last_name}")
        self.session.identified.add(found)
        return {"policyholder_id": found}

    @tool("lookup")
    async def get_policyholder(self, policyholder_id: str) -> dict[str, Any]:
        """Profile of the verified policyholder: contact details, region and their policies."""
        row = self.row(m.policyholders, policyholder_id=policyholder_id)
        if row is None:
            self._caller()
            raise ToolError("policyholder_not_found", f"no policyholder {policyholder_id}")
        self._own(row["policyholder_id"], f"policyholder {policyholder_id}")
        policies = [
            {k: p[k] for k in ("policy_id", "status", "term_start", "term_end", "lapsed_on")}
            for p in self.rows(m.policies, policyholder_id=policyholder_id)
        ]
        return {**row, "policies": sorted(policies, key=lambda p: p["policy_id"])}


system = System("customers", "Policyholders and caller verification.", ("policyholders",), Customers)
