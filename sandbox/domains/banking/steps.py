"""The steps every banking reference plan shares: verify the caller, open their profile, find a charge.

Plans read only what the customer said (`run.facts`) and what the tools return, never the scenario's intent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from passhat.sandbox.agents import ReferenceRun, identify, lookup
from passhat.sandbox.domains.banking.rules import within_dispute_window

Row = dict[str, Any]


async def verified_profile(run: ReferenceRun) -> tuple[str, Row]:
    """Verify the caller with both factors (as the domain declares), then read their profile.

    Without verification (the skip_precondition flaw) the profile read is refused and the plan ends there.
    """
    customer_id = await identify(run) or ""
    found = await run.call("get_customer", {"customer_id": customer_id})
    if not found.ok:
        await run.finish("I'm sorry, I cannot open your accounts: " + str(found.error_message))
    profile: Row = found.data
    return customer_id, profile


def same_charge(transaction: Mapping[str, Any], description: Any, amount: Any, dates: list[str]) -> bool:
    """Whether a transaction is the one the customer described."""
    try:
        wanted = round(float(amount), 2)
    except (TypeError, ValueError):
        return False
    return (
        str(transaction["description"]).lower() == str(description).lower()
        and abs(float(transaction["amount"]) - wanted) < 0.005
        and str(transaction["posted_on"]) in dates
    )


async def transactions_of(run: ReferenceRun, account_id: str) -> list[Row]:
    """One account's transactions (a lookup: the flawed agent mistypes the account id and gives up)."""
    listed = await lookup(
        run,
        "list_transactions",
        {"account_id": account_id},
        typed="account_id",
        missing="I'm sorry, I could not open that account's transactions.",
    )
    rows: list[Row] = listed.data["transactions"]
    return rows


async def find_charges(run: ReferenceRun, profile: Row, dates: list[str]) -> tuple[list[Row], list[Row]]:
    """The charges the customer described (their description and amount, on `dates`), searching the
    caller's accounts in turn, and every transaction of the account they are on."""
    for account in profile["accounts"]:
        rows = await transactions_of(run, str(account["account_id"]))
        found = [t for t in rows if same_charge(t, run.facts.get("charge"), run.facts.get("amount"), dates)]
        if found:
            return found, rows
    await run.finish(
        f"I'm sorry, I could not find a charge of {run.facts.get('amount')} from {run.facts.get('charge')} "
        "on your accounts. Could you check the statement and contact us again?"
    )
    raise AssertionError("unreachable")


async def find_charge(run: ReferenceRun, profile: Row) -> tuple[Row, list[Row]]:
    """The one charge the customer described (description, amount, date) and its account's transactions."""
    found, rows = await find_charges(run, profile, [str(run.facts.get("date"))])
    return found[0], rows


async def disputed_ids(run: ReferenceRun, customer_id: str) -> set[str]:
    """The transactions the caller already disputed (so no charge is disputed twice)."""
    found = await run.call("list_disputes", {"customer_id": customer_id})
    if not found.ok:
        await run.finish("I'm sorry, I could not open your disputes right now.")
    return {str(d["transaction_id"]) for d in found.data["disputes"]}


def sibling_charge(rows: list[Row], charge: Row, disputed: set[str], test: Callable[[Row], bool]) -> Row | None:
    """Another open charge of the same account passing `test`: what a wrong-entity agent disputes instead."""
    for row in rows:
        if (
            row["transaction_id"] != charge["transaction_id"]
            and row["transaction_id"] not in disputed
            and within_dispute_window(row)
            and test(row)
        ):
            return row
    return None


def card_by_digits(profile: Row, last_four: Any) -> Row | None:
    """The caller's card ending in `last_four`."""
    return next((c for c in profile["cards"] if str(c["last_four"]) == str(last_four)), None)


def other_active_card(profile: Row, card_id: str) -> Row | None:
    """Another active card of the caller (the wrong-entity target of a card action)."""
    return next((c for c in profile["cards"] if c["card_id"] != card_id and c["status"] == "active"), None)


def money(amount: Any) -> str:
    """An amount as the bank writes it."""
    return f"${float(amount):,.2f}"
