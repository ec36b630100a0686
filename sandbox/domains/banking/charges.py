"""Task family: disputed charges (duplicate, refund not received, cancelled subscription, ATM cash not
dispensed) and a dispute past its window (must refuse).

One plan serves every dispute reason: find the charge, make sure it is not disputed yet and still within 60 days
of its statement, open the dispute and, where the policy gives one, the provisional credit (a chain of two
writes: the credit needs the open dispute).
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from sqlalchemy import Connection

from passhat.checks import Check, all_of, inserted, no_other_writes, response_contains, updated
from passhat.sandbox.agents import ReferenceRun, perform_write
from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.banking import models as m
from passhat.sandbox.domains.banking.data import (
    REFUSAL,
    BankData,
    Intent,
    Row,
    bank_script,
    charge_of,
    data_for,
    facts_of,
    identity,
)
from passhat.sandbox.domains.banking.rules import (
    CHARGEBACK_KINDS,
    balance_after_credit,
    credit_amount_allowed,
    day,
    decision_due,
    is_twin,
    within_dispute_window,
)
from passhat.sandbox.domains.banking.steps import (
    disputed_ids,
    find_charge,
    find_charges,
    money,
    sibling_charge,
    verified_profile,
)

_STORIES: Mapping[str, str] = {
    "duplicate": "I was charged twice",
    "refund_not_received": "I returned the item weeks ago and the merchant never refunded me",
    "cancelled_subscription": "I cancelled that subscription and was still charged",
    "atm_not_dispensed": "the ATM never gave me the cash",
}


def _ids(data: BankData, customer_id: str) -> list[str]:
    return [a["account_id"] for a in data.primary_accounts(customer_id)]


def _intent(data: BankData, customer_id: str, charge: Row, reason: str) -> Intent:
    account = data.accounts[charge["account_id"]]
    credit = credit_amount_allowed(reason, charge["amount"])
    card = data.cards.get(charge["card_id"] or "")
    return {
        **identity(data, customer_id),
        **charge_of(charge),
        "reason": reason,
        "merchant_id": charge["merchant_id"],
        "network": card["network"] if card else None,
        "chargeback": charge["kind"] in CHARGEBACK_KINDS,
        "credit": credit,
        "balance_after": balance_after_credit(account, charge["amount"]) if credit else None,
    }


def _siblings(data: BankData, charge: Row, test: Callable[[Row], bool]) -> list[Row]:
    return [
        t
        for t in data.by_account[charge["account_id"]]
        if t["transaction_id"] != charge["transaction_id"] and data.open_charge(t) and test(t)
    ]


def _plain_purchase(data: BankData, transaction: Row) -> bool:
    return transaction["kind"] == "purchase" and not data.recurring(transaction)


def refund_candidates(connection: Connection) -> list[Intent]:
    """Open purchases from shops (not subscriptions), with another open purchase on the account."""
    data = data_for(connection)
    found: list[Intent] = []
    for customer_id in sorted(data.customers):
        for account_id in _ids(data, customer_id):
            for charge in data.by_account[account_id]:
                if data.category(charge) != "retail" or not data.open_charge(charge):
                    continue
                if data.unique(customer_id, charge) and _siblings(data, charge, partial(_plain_purchase, data)):
                    found.append(_intent(data, customer_id, charge, "refund_not_received"))
    return found


def duplicate_candidates(connection: Connection) -> list[Intent]:
    """The later of two identical open charges (same merchant and amount within 3 days)."""
    data = data_for(connection)
    found: list[Intent] = []
    for customer_id in sorted(data.customers):
        for account_id in _ids(data, customer_id):
            rows = data.by_account[account_id]
            for charge in rows:
                twins = [t for t in rows if is_twin(charge, t)]
                if len(twins) != 1 or not data.open_charge(charge) or not data.open_charge(twins[0]):
                    continue
                original = twins[0]
                if (original["posted_on"], original["transaction_id"]) > (
                    charge["posted_on"],
                    charge["transaction_id"],
                ):
                    continue
                dates = [original["posted_on"], charge["posted_on"]]
                same = [
                    t
                    for a in data.held[customer_id]
                    for t in data.by_account[a]
                    if (t["description"], t["amount"]) == (charge["description"], charge["amount"])
                    and t["posted_on"] in dates
                ]
                if len(same) == 2:
                    intent = _intent(data, customer_id, charge, "duplicate")
                    found.append({**intent, "dates": dates, "original_id": original["transaction_id"]})
    return found


def subscription_candidates(connection: Connection) -> list[Intent]:
    """A subscription's latest charge, cancelled between the previous charge and it, on an account with another
    subscription charge after the cancellation (what a wrong agent disputes)."""
    data = data_for(connection)
    found: list[Intent] = []
    for customer_id in sorted(data.customers):
        for account_id in _ids(data, customer_id):
            rows = data.by_account[account_id]
            for charge in rows:
                if not data.recurring(charge) or not data.open_charge(charge) or not data.unique(customer_id, charge):
                    continue
                same = [t for t in rows if t["merchant_id"] == charge["merchant_id"]]
                if same[-1] is not charge or len(same) < 2:
                    continue
                previous = day(same[-2]["posted_on"])
                gap = (day(charge["posted_on"]) - previous).days
                cancelled = previous + dt.timedelta(days=random.Random(charge["transaction_id"]).randint(1, gap - 1))

                def later(t: Row, after: str = cancelled.isoformat()) -> bool:
                    return data.recurring(t) and t["kind"] == "purchase" and t["posted_on"] > after

                if _siblings(data, charge, later):
                    intent = _intent(data, customer_id, charge, "cancelled_subscription")
                    found.append({**intent, "cancelled_on": cancelled.isoformat()})
    return found


def atm_candidates(connection: Connection) -> list[Intent]:
    """Open ATM withdrawals, on accounts with another open ATM withdrawal."""
    data = data_for(connection)
    found: list[Intent] = []
    for customer_id in sorted(data.customers):
        for account_id in _ids(data, customer_id):
            for charge in data.by_account[account_id]:
                if charge["kind"] != "atm_withdrawal" or not data.open_charge(charge):
                    continue
                if data.unique(customer_id, charge) and _siblings(
                    data, charge, lambda t: t["kind"] == "atm_withdrawal"
                ):
                    found.append(_intent(data, customer_id, charge, "atm_not_dispensed"))
    return found


def expired_candidates(connection: Connection) -> list[Intent]:
    """Shop purchases whose statement is more than 60 days old, never disputed."""
    data = data_for(connection)
    found: list[Intent] = []
    for customer_id in sorted(data.customers):
        for account_id in _ids(data, customer_id):
            for charge in data.by_account[account_id]:
                if charge["kind"] != "purchase" or data.category(charge) != "retail":
                    continue
                if within_dispute_window(charge) or charge["transaction_id"] in data.disputed:
                    continue
                if data.unique(customer_id, charge):
                    found.append(
                        {
                            **_intent(data, customer_id, charge, "refund_not_received"),
                            "statement_date": charge["statement_date"],
                        }
                    )
    return found


def dispute_script(intent: Mapping[str, Any]) -> CustomerScript:
    reason = intent["reason"]
    what = f"{money(intent['amount'])} from {intent['charge']}"
    facts = facts_of(intent, "charge", "amount", "date", "dates", "cancelled_on")
    if reason == "duplicate":
        first, second = intent["dates"]
        when = f"on {first} and again on {second}"
        facts.pop("date", None)
        stated: tuple[str, ...] = ("charge", "amount", "dates")
    else:
        when = f"on {intent['date']}"
        stated = ("charge", "amount", "date")
    opening = f"Hi, {_STORIES[reason]}: {what} {when}."
    if reason == "cancelled_subscription":
        opening += f" I cancelled on {intent['cancelled_on']}."
        stated += ("cancelled_on",)
    return bank_script(
        goal=f"Dispute {what} {when} ({_STORIES[reason]}) and get my money back.",
        opening=opening,
        facts=facts,
        stated=stated,
    )


def dispute_check(intent: Mapping[str, Any]) -> Check:
    """The dispute on the right charge with the right reason, its chargeback, and the credit the policy gives."""
    amount = intent["amount"]
    row = {
        "transaction_id": intent["transaction_id"],
        "account_id": intent["account_id"],
        "customer_id": intent["customer_id"],
        "reason": intent["reason"],
        "amount": amount,
        "status": "open",
        "decision_due": decision_due(),
    }
    if intent.get("cancelled_on"):
        row["cancelled_on"] = intent["cancelled_on"]
    steps = [inserted("disputes", row)]
    if intent["chargeback"]:
        steps.append(
            inserted(
                "chargebacks", {"merchant_id": intent["merchant_id"], "network": intent["network"], "amount": amount}
            )
        )
    if intent["credit"]:
        steps += [
            inserted("provisional_credits", {"account_id": intent["account_id"], "amount": amount, "status": "issued"}),
            updated("accounts", {"account_id": intent["account_id"]}, {"balance": intent["balance_after"]}),
        ]
    return all_of(*steps, no_other_writes())


def expired_check(intent: Mapping[str, Any]) -> Check:
    # The refusal carries its fact: the statement the charge appeared on, from which the 60 days run.
    return all_of(no_other_writes(), response_contains(intent["statement_date"], patterns=[REFUSAL, r"60 days"]))


_SIBLING_TESTS: Mapping[str, Callable[[Row, Mapping[str, Any]], bool]] = {
    "duplicate": lambda t, facts: t["kind"] == "purchase",
    "refund_not_received": lambda t, facts: t["kind"] == "purchase" and not t.get("recurring"),
    "cancelled_subscription": lambda t, facts: (
        bool(t.get("recurring")) and t["kind"] == "purchase" and str(t["posted_on"]) > str(facts.get("cancelled_on"))
    ),
    "atm_not_dispensed": lambda t, facts: t["kind"] == "atm_withdrawal",
}


async def dispute(run: ReferenceRun, reason: str) -> None:
    """Open a dispute of `reason` on the charge the customer names and, within the limit, credit it."""
    customer_id, profile = await verified_profile(run)
    if reason == "duplicate":
        await run.ask("Which charge is it: the merchant, the amount and both dates?", "charge", "amount", "dates")
        found, rows = await find_charges(run, profile, [str(d) for d in run.facts.get("dates", [])])
        found.sort(key=lambda t: (t["posted_on"], t["transaction_id"]))
        if len(found) < 2:
            await run.finish("I'm sorry, I can only see one such charge, so there is no duplicate to dispute.")
        charge, original = found[-1], found[0]
    else:
        await run.ask("Which charge is it: the merchant, the amount and the date?", "charge", "amount", "date")
        charge, rows = await find_charge(run, profile)
        original = None
    disputed = await disputed_ids(run, customer_id)
    if charge["transaction_id"] in disputed:
        await run.finish("That charge is already disputed; I can tell you the status of that dispute.")
    if not within_dispute_window(charge):
        await run.finish(
            f"I'm sorry, I cannot open a dispute for this charge: it appeared on your {charge['statement_date']} "
            f"statement, and disputes must be filed within {m.DISPUTE_WINDOW_DAYS} days of the statement."
        )
    amount = float(charge["amount"])
    arguments: dict[str, Any] = {"transaction_id": charge["transaction_id"], "reason": reason, "amount": amount}
    if reason == "cancelled_subscription":
        arguments["cancelled_on"] = str(run.facts.get("cancelled_on", ""))
    test = _SIBLING_TESTS[reason]
    wrong = original or sibling_charge(rows, charge, disputed, lambda t: test(t, run.facts))
    sibling = {**arguments, "transaction_id": wrong["transaction_id"], "amount": wrong["amount"]} if wrong else None
    opened = await perform_write(
        run,
        "open_dispute",
        arguments,
        summary=f"I will open a dispute ({reason.replace('_', ' ')}) for {money(amount)} from "
        f"{charge['description']} on {charge['posted_on']}.",
        sibling=sibling,
        broken={**arguments, "reason": "other"},
    )
    dispute_id = opened.data["dispute_id"]
    said = f"Dispute {dispute_id} is open; a decision is due by {opened.data['decision_due']}."
    if credit_amount_allowed(reason, amount):
        await perform_write(
            run,
            "issue_provisional_credit",
            {"dispute_id": dispute_id, "amount": amount},
            summary=f"I will credit {money(amount)} to your account provisionally while we investigate.",
            broken={"dispute_id": dispute_id, "amount": 0},
        )
        said += f" {money(amount)} is credited provisionally."
    await run.finish(f"Done. {said}")
