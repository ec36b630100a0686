"""Task family: inquiries (read-only: when is a book due), with the reference plan beside it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection

from passhat.checks import Check, all_of, no_other_writes, response_contains
from passhat.sandbox.agents import ReferenceRun, identify, lookup
from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.mock.data import library_script, members_with_loans


def candidates(connection: Connection) -> list[dict[str, Any]]:
    """Every loan: its member asks when it is due."""
    return [
        {"email": member["email"], "loan_id": loan["loan_id"], "title": loan["title"], "due": loan["due"]}
        for member, loans in members_with_loans(connection)
        for loan in loans
    ]


def script(intent: Mapping[str, Any]) -> CustomerScript:
    return library_script(
        goal=f"Find out when {intent['title']} is due back.",
        opening=f"Hello, when is {intent['title']} due back?",
        facts={"email": intent["email"], "titles": [intent["title"]]},
        stated=("titles",),
        unknown=("member_id",),
    )


def check(intent: Mapping[str, Any]) -> Check:
    return all_of(response_contains(intent["due"]), no_other_writes())


async def due_date(run: ReferenceRun) -> None:
    """Identify the member, read their loans, tell the due date of the book asked about."""
    member_id = await identify(run)
    title = str(run.facts["titles"][0])
    found = await lookup(
        run, "get_loans", {"member_id": str(member_id)}, typed="member_id", missing="I could not open your loans."
    )
    for loan in found.data["loans"]:
        if loan["title"] == title:
            await run.finish(f"{title} is due back on {loan['due']}.")
    await run.finish(f"I'm sorry, {title} is not on your card.")
