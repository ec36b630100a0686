"""Task family: inquiries about a past dispute (read-only: its status and decision date)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection

from passhat.checks import Check, all_of, no_other_writes, response_contains
from passhat.sandbox.agents import ReferenceRun, lookup
from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.banking.data import Intent, bank_script, charge_of, data_for, facts_of, identity
from passhat.sandbox.domains.banking.steps import money, verified_profile

STATUS_WORDS: Mapping[str, str] = {
    "open": "open",
    "under_review": "under review",
    "resolved_in_favor": "resolved in your favour",
    "denied": "denied",
}
"""How an agent says a dispute's status."""


def status_candidates(connection: Connection) -> list[Intent]:
    """Every past dispute, named by its charge's description and amount (unique among the customer's)."""
    data = data_for(connection)
    found: list[Intent] = []
    for transaction_id, row in sorted(data.disputed.items()):
        charge = data.transactions[transaction_id]
        customer_id = row["customer_id"]
        if not data.unique(customer_id, charge):
            continue
        credit = data.credits.get(row["dispute_id"])
        found.append(
            {
                **identity(data, customer_id),
                **charge_of(charge),
                "dispute_id": row["dispute_id"],
                "status": row["status"],
                "decision_due": row["decision_due"],
                "provisional_credit": credit["amount"] if credit else None,
            }
        )
    return found


def status_script(intent: Mapping[str, Any]) -> CustomerScript:
    what = f"{money(intent['amount'])} from {intent['charge']}"
    return bank_script(
        goal=f"Find out where my dispute about the {what} charge stands and when it will be decided.",
        opening=f"Hello, what's happening with my dispute about the {what} charge?",
        facts=facts_of(intent, "charge", "amount", "date"),
        stated=("charge", "amount"),
    )


def status_check(intent: Mapping[str, Any]) -> Check:
    status = STATUS_WORDS[intent["status"]].replace("your favour", "your favou?r")
    return all_of(no_other_writes(), response_contains(intent["decision_due"], patterns=[status]))


async def dispute_status(run: ReferenceRun) -> None:
    """Read-only: the status and decision date of the caller's dispute about the charge they name."""
    customer_id, _ = await verified_profile(run)
    found = await lookup(
        run,
        "list_disputes",
        {"customer_id": customer_id},
        typed="customer_id",
        missing="I'm sorry, I could not open your disputes right now.",
    )
    for row in found.data["disputes"]:
        if (
            str(row["description"]).lower() == str(run.facts.get("charge", "")).lower()
            and abs(float(row["amount"]) - float(run.facts.get("amount", 0))) < 0.005
        ):
            credit = (
                f" A provisional credit of {money(row['provisional_credit'])} is on your account."
                if row["provisional_credit"]
                else ""
            )
            await run.finish(
                f"Your dispute {row['dispute_id']} about {money(row['amount'])} from {row['description']} is "
                f"{STATUS_WORDS[row['status']]}; the decision is due by {row['decision_due']}.{credit}"
            )
    await run.finish("I'm sorry, I cannot find a dispute about that charge on your accounts.")
