"""Steps the insurance reference plans share: open the claim a caller names (verified, on their policy, still
open) and find the caller's other open claims, where a wrong-entity write lands.

The reference plans (how the offline ReferenceAgent, a simulation, handles each task type by the policy) live
beside their task family (`losses`, `claims_desk`, `policy_desk`). A plan reads only what the customer said
(`run.facts`) and what the tools return, never the scenario's intent.
"""

from __future__ import annotations

from typing import Any

from passhat.sandbox.agents import ReferenceRun, identify, lookup
from passhat.sandbox.domains.insurance.data import Row


async def open_claim(run: ReferenceRun, question: str, *keys: str) -> tuple[dict[str, Any], list[Row], Row]:
    """Verify the caller, open their policy, its claims and the claim they named (which must be open)."""
    await identify(run)
    facts = await run.ask(question, "policy_number", "claim_id", *keys)
    policy_id = str(facts["policy_number"])
    found = await lookup(
        run, "get_policy", {"policy_id": policy_id}, typed="policy_id", missing="I could not open that policy."
    )
    policy: dict[str, Any] = found.data
    listed = await run.call("find_claims", {"policy_id": policy_id})
    claims: list[Row] = listed.data["claims"] if listed.ok else []
    claim_id = int(facts["claim_id"])
    if claim_id not in {c["claim_id"] for c in claims}:
        await run.finish(f"I'm sorry, claim {claim_id} is not on policy {policy_id}, so I cannot act on it.")
    detail = await run.call("get_claim", {"claim_id": claim_id})
    claim: Row = detail.data if detail.ok else {}
    if claim.get("status") != "open":
        await run.finish(f"I'm sorry, claim {claim_id} is {claim.get('status', 'unavailable')}, so I cannot change it.")
    return policy, claims, claim


def open_siblings(claims: list[Row], claim_id: int) -> list[Row]:
    """The caller's other open claims on the policy (where a wrong-entity write lands)."""
    return [c for c in claims if c["claim_id"] != claim_id and c["status"] == "open"]


async def open_claim_after(run: ReferenceRun, holder_id: str | None) -> tuple[dict[str, Any], list[Row], Row]:
    """`open_claim` once the caller is verified (or not, under a flaw)."""
    facts = await run.ask(
        "Which policy and claim is it (the numbers), and what date and location suit you for the inspection?",
        "policy_number",
        "claim_id",
        "preferred_date",
        "inspection_location",
    )
    policy_id = str(facts["policy_number"])
    found = await lookup(
        run, "get_policy", {"policy_id": policy_id}, typed="policy_id", missing="I could not open that policy."
    )
    listed = await run.call("find_claims", {"policy_id": policy_id})
    claims: list[Row] = listed.data["claims"] if listed.ok else []
    claim_id = int(facts["claim_id"])
    if claim_id not in {c["claim_id"] for c in claims}:
        await run.finish(f"I'm sorry, claim {claim_id} is not on policy {policy_id}, so I cannot act on it.")
    detail = await run.call("get_claim", {"claim_id": claim_id})
    claim: Row = detail.data if detail.ok else {}
    if claim.get("status") != "open":
        await run.finish(f"I'm sorry, claim {claim_id} is not open, so I cannot book an inspection.")
    if claim.get("inspections") and any(i["status"] == "scheduled" for i in claim["inspections"]):
        await run.finish(f"Claim {claim_id} already has an inspection booked.")
    return found.data, claims, claim
