"""What every insurance system shares: row lookups, who the caller is, and the rules about dates and terms.

Each system (`customers`, `policy_admin`, `claims`, `adjusting`, `rentals`, `payments`, `support`) is an
`InsuranceSystem`: one trial's connection and the session (which policyholders were verified), with the
backend's rules as helpers that raise `ToolError` in the domain's error vocabulary.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from sqlalchemy import CursorResult

from passhat.sandbox.domain import SystemBackend, ToolError
from passhat.sandbox.domains.insurance import models as m

ERRORS: dict[str, str] = {
    "policyholder_not_found": "not_found",
    "policy_not_found": "not_found",
    "vehicle_not_found": "not_found",
    "claim_not_found": "not_found",
    "adjuster_not_found": "not_found",
    "caller_not_verified": "precondition_failed",
    "incident_not_recorded": "precondition_failed",
    "police_report_required": "precondition_failed",
    "adjuster_not_assigned": "precondition_failed",
    "valuation_missing": "precondition_failed",
    "not_policyholder": "permission_denied",
    "policy_not_active": "not_allowed",
    "coverage_not_applicable": "not_allowed",
    "rental_limit_exceeded": "not_allowed",
    "claim_not_open": "not_allowed",
    "not_total_loss": "not_allowed",
    "adjuster_out_of_region": "not_allowed",
    "last_vehicle": "not_allowed",
    "open_claim_exists": "conflict",
    "vehicle_has_open_claim": "conflict",
    "already_recorded": "conflict",
    "invalid_value": "invalid_argument",
    "valuation_not_acv": "invalid_argument",
    "amount_mismatch": "invalid_argument",
}
"""The insurance error vocabulary: each error type the tools raise -> the classifier's category."""


def parse_date(value: str, name: str) -> dt.date:
    """An ISO date (YYYY-MM-DD), or an `invalid_value` refusal naming the argument."""
    try:
        return dt.date.fromisoformat(str(value).strip())
    except ValueError:
        raise ToolError("invalid_value", f"{name} must be a date as YYYY-MM-DD, got {value!r}") from None


def today() -> dt.date:
    """The sandbox's fixed today."""
    return dt.date.fromisoformat(m.TODAY)


def active_on(policy: dict[str, Any], day: str) -> bool:
    """Whether the policy covered `day`: inside its term and before any lapse."""
    if not policy["term_start"] <= day <= policy["term_end"]:
        return False
    return policy["lapsed_on"] is None or day < policy["lapsed_on"]


def phone_ok(phone: str) -> bool:
    """A phone number with at least ten digits."""
    return len(re.sub(r"\D", "", phone)) >= 10


def new_id(result: CursorResult[Any]) -> int:
    """The primary key of the row an insert just made."""
    key = result.inserted_primary_key
    if key is None:  # pragma: no cover - every insert here has an integer key
        raise RuntimeError("the insert returned no primary key")
    return int(key[0])


def required(value: str, name: str) -> str:
    """A non-blank text argument, stripped, or an `invalid_value` refusal."""
    if not str(value).strip():
        raise ToolError("invalid_value", f"{name} is required")
    return str(value).strip()


class InsuranceSystem(SystemBackend):
    """Base of the insurance systems: one trial's connection, the shared session, and the backend's rules."""

    def _caller(self) -> None:
        if not self.session.identified:
            raise ToolError(
                "caller_not_verified",
                "the caller has not been verified in this session: use find_policyholder_by_email or "
                "find_policyholder_by_policy first",
            )

    def _own(self, policyholder_id: str, what: str) -> None:
        self._caller()
        if policyholder_id not in self.session.identified:
            raise ToolError("not_policyholder", f"{what} belongs to another policyholder than the verified caller")

    def _policy(self, policy_id: str) -> dict[str, Any]:
        """A policy of the verified caller."""
        policy = self.row(m.policies, policy_id=str(policy_id).strip().upper())
        if policy is None:
            self._caller()
            raise ToolError("policy_not_found", f"no policy {policy_id}")
        self._own(policy["policyholder_id"], f"policy {policy['policy_id']}")
        return policy

    def _active_policy(self, policy_id: str) -> dict[str, Any]:
        policy = self._policy(policy_id)
        if policy["status"] != "active" or not active_on(policy, m.TODAY):
            raise ToolError("policy_not_active", f"policy {policy['policy_id']} is {policy['status']}")
        return policy

    def _coverages(self, policy_id: str) -> dict[str, dict[str, Any]]:
        return {c["kind"]: c for c in self.rows(m.coverages, policy_id=policy_id)}

    def _claim(self, claim_id: int, *, open_only: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
        """A claim of the verified caller, and its policy (refused unless open, when `open_only`)."""
        claim = self.row(m.claims, claim_id=claim_id)
        if claim is None:
            self._caller()
            raise ToolError("claim_not_found", f"no claim {claim_id}")
        policy = self.row(m.policies, policy_id=claim["policy_id"]) or {}
        self._own(str(policy.get("policyholder_id")), f"claim {claim_id}")
        if open_only and claim["status"] != "open":
            raise ToolError("claim_not_open", f"claim {claim_id} is {claim['status']}")
        return claim, policy
