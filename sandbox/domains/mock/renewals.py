"""Task family: renewals (one loan, or several in a chain), with the reference plan beside them."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection

from passhat.checks import Check, all_of, no_other_writes, updated
from passhat.sandbox.agents import ReferenceRun, identify, lookup, perform_write
from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.mock.data import library_script, members_with_loans, renewable, renewed_due


def _loan(loan: Mapping[str, Any], weeks: int) -> dict[str, Any]:
    return {"loan_id": loan["loan_id"], "title": loan["title"], "due": renewed_due(loan, weeks), "weeks": weeks}


def candidates(connection: Connection, *, several: bool) -> list[dict[str, Any]]:
    """One renewal per renewable loan of a member with another renewable loan (the sibling a wrong agent
    renews); for `several`, the member's renewable loans but one, in a chain of two or more."""
    found: list[dict[str, Any]] = []
    for member, loans in members_with_loans(connection):
        open_loans = [loan for loan in loans if renewable(loan)]
        rng = random.Random(member["member_id"])
        if several and len(open_loans) >= 3:
            chosen = open_loans[:-1]
            weeks = rng.choice((1, 2))
            found.append(
                {"email": member["email"], "member_id": member["member_id"], "loans": [_loan(x, weeks) for x in chosen]}
            )
        elif not several and len(open_loans) >= 2:
            found.extend(
                {"email": member["email"], "member_id": member["member_id"], "loans": [_loan(x, rng.choice((1, 2)))]}
                for x in open_loans
            )
    return found


def script(intent: Mapping[str, Any]) -> CustomerScript:
    titles = [loan["title"] for loan in intent["loans"]]
    weeks = intent["loans"][0]["weeks"]
    return library_script(
        goal=f"Renew {' and '.join(titles)} by {weeks} week(s).",
        opening=f"Hi, could I keep {' and '.join(titles)} {weeks} week(s) longer?",
        facts={
            "email": intent["email"],
            "titles": titles,
            "barcodes": [loan["loan_id"] for loan in intent["loans"]],
            "weeks": weeks,
        },
        stated=("titles", "weeks"),
        unknown=("member_id",),
    )


def check(intent: Mapping[str, Any]) -> Check:
    renewals = [
        updated("loans", {"loan_id": loan["loan_id"]}, {"due": loan["due"], "renewals": loan_renewals})
        for loan, loan_renewals in zip(intent["loans"], intent["renewals"], strict=True)
    ]
    return all_of(*renewals, no_other_writes())


def counted(found: list[dict[str, Any]], connection: Connection) -> list[dict[str, Any]]:
    """Add each loan's expected renewal count (from the starting state) to the intents."""
    renewals = {loan["loan_id"]: int(loan["renewals"]) for _, loans in members_with_loans(connection) for loan in loans}
    return [{**intent, "renewals": [renewals[x["loan_id"]] + 1 for x in intent["loans"]]} for intent in found]


def renewal_candidates(connection: Connection) -> list[dict[str, Any]]:
    return counted(candidates(connection, several=False), connection)


def chain_candidates(connection: Connection) -> list[dict[str, Any]]:
    return counted(candidates(connection, several=True), connection)


async def renew(run: ReferenceRun) -> None:
    """Identify the member, check the named loans on their card, and renew them one by one (a write each)."""
    member_id = await identify(run)
    facts = await run.ask("Which books (the barcode on each), and by how many weeks?", "barcodes", "weeks")
    weeks = int(facts["weeks"])
    barcodes = [str(code) for code in facts["barcodes"]]
    # Without identification (a flaw) the agent renews straight from the barcodes: the backend refuses.
    wanted: list[dict[str, Any]] = [{"loan_id": code, "title": code, "renewals": 0} for code in barcodes]
    others: list[dict[str, Any]] = []
    if member_id is not None:
        found = await lookup(
            run, "get_loans", {"member_id": member_id}, typed="member_id", missing="I could not open your loans."
        )
        loans = {loan["loan_id"]: loan for loan in found.data["loans"]}
        if not set(barcodes) <= set(loans):
            await run.finish("I'm sorry, some of those books are not on your card, so I cannot renew them.")
        wanted = [loans[code] for code in barcodes]
        others = [loan for code, loan in loans.items() if code not in barcodes and renewable(loan)]
    for loan in wanted:
        if not renewable(loan):
            await run.finish(f"I'm sorry, {loan['title']} was already renewed twice and cannot be renewed again.")
        sibling = {"loan_id": others[0]["loan_id"], "weeks": weeks} if others else None
        await perform_write(
            run,
            "renew_loan",
            {"loan_id": loan["loan_id"], "weeks": weeks},
            summary=f"I will renew {loan['title']} by {weeks} week(s).",
            sibling=sibling,
            broken={"loan_id": loan["loan_id"], "weeks": 0},
        )
    await run.finish(f"Done: renewed by {weeks} week(s).")
