"""Task family: fees. A courtesy fee reversal, an overdraft fee (a chain: cover the overdraft from savings,
then waive the fee) and a second waiver within 12 months (must refuse).

The backend enforces the order: a fee on an overdrawn account cannot be waived (`account_overdrawn`, a
precondition), so an agent that skips the transfer is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
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
from passhat.sandbox.domains.banking.rules import balance_after_credit, recent_waiver
from passhat.sandbox.domains.banking.steps import find_charge, money, verified_profile


def _fees(data: BankData, account_id: str, *, overdraft: bool | None = None) -> list[Row]:
    return [
        t
        for t in data.by_account[account_id]
        if t["kind"] == "fee"
        and t["status"] == "posted"
        and (overdraft is None or (t["fee_type"] == "overdraft") == overdraft)
    ]


def _fee_intent(data: BankData, customer_id: str, fee: Row) -> Intent:
    return {**identity(data, customer_id), **charge_of(fee), "fee_type": fee["fee_type"]}


def reversal_candidates(connection: Connection, *, second: bool = False) -> list[Intent]:
    """Posted fees (not overdraft) on accounts that are not overdrawn, with another posted fee on the account
    (the one a wrong agent waives); for `second`, of customers who had a waiver in the last 12 months."""
    data = data_for(connection)
    found: list[Intent] = []
    for customer_id in sorted(data.customers):
        last = recent_waiver(data.waivers.get(customer_id, []))
        if (last is not None) != second:
            continue
        for account in data.primary_accounts(customer_id):
            if account["kind"] != "credit_card" and account["balance"] < 0:
                continue
            fees = _fees(data, account["account_id"], overdraft=False)
            for fee in fees:
                if len(fees) < 2 or not data.unique(customer_id, fee):
                    continue
                intent = _fee_intent(data, customer_id, fee)
                if second and last is not None:
                    intent["last_waived_on"] = last["waived_on"]
                else:
                    intent["balance_after"] = balance_after_credit(account, fee["amount"])
                found.append(intent)
    return found


def overdraft_candidates(connection: Connection) -> list[Intent]:
    """Overdraft fees on overdrawn checking accounts whose owner has savings to cover the overdraft, no waiver
    in the last 12 months, and another posted fee on the account."""
    data = data_for(connection)
    found: list[Intent] = []
    for customer_id in sorted(data.customers):
        if recent_waiver(data.waivers.get(customer_id, [])) is not None:
            continue
        accounts = data.primary_accounts(customer_id)
        savings = next((a for a in accounts if a["kind"] == "savings"), None)
        for account in accounts:
            if account["kind"] != "checking" or account["balance"] >= 0 or savings is None:
                continue
            needed = round(-account["balance"], 2)
            others = _fees(data, account["account_id"], overdraft=False)
            if savings["balance"] < needed or not others:
                continue
            for fee in _fees(data, account["account_id"], overdraft=True):
                if data.unique(customer_id, fee):
                    found.append(
                        {
                            **_fee_intent(data, customer_id, fee),
                            "savings_id": savings["account_id"],
                            "transfer": needed,
                            "savings_after": round(savings["balance"] - needed, 2),
                            "balance_after": round(fee["amount"], 2),
                            "cover_from": "savings",
                        }
                    )
    return found


def reversal_script(intent: Mapping[str, Any]) -> CustomerScript:
    what = f"the {money(intent['amount'])} {intent['charge'].lower()} from {intent['date']}"
    return bank_script(
        goal=f"Get {what} refunded as a courtesy.",
        opening=f"Hi, could you refund {what}? I've been a customer for years.",
        facts=facts_of(intent, "charge", "amount", "date"),
        stated=("charge", "amount", "date"),
    )


def overdraft_script(intent: Mapping[str, Any]) -> CustomerScript:
    what = f"the {money(intent['amount'])} overdraft fee from {intent['date']}"
    return bank_script(
        goal=f"Get {what} waived; move whatever is needed from my savings to cover the overdraft.",
        opening=f"Hi, I was hit with {what}. Please move what's needed from my savings to cover it and waive the fee.",
        facts=facts_of(intent, "charge", "amount", "date", "cover_from"),
        stated=("charge", "amount", "date", "cover_from"),
    )


def _waived(intent: Mapping[str, Any]) -> list[Check]:
    return [
        updated("transactions", {"transaction_id": intent["transaction_id"]}, {"status": "waived"}),
        inserted(
            "fee_waivers",
            {
                "customer_id": intent["customer_id"],
                "account_id": intent["account_id"],
                "transaction_id": intent["transaction_id"],
                "amount": intent["amount"],
                "waived_on": m.TODAY,
            },
        ),
        updated("accounts", {"account_id": intent["account_id"]}, {"balance": intent["balance_after"]}),
    ]


def reversal_check(intent: Mapping[str, Any]) -> Check:
    return all_of(*_waived(intent), no_other_writes())


def overdraft_check(intent: Mapping[str, Any]) -> Check:
    moved = intent["transfer"]
    return all_of(
        updated("accounts", {"account_id": intent["savings_id"]}, {"balance": intent["savings_after"]}),
        inserted("transactions", {"account_id": intent["savings_id"], "kind": "transfer_out", "amount": moved}),
        inserted("transactions", {"account_id": intent["account_id"], "kind": "transfer_in", "amount": moved}),
        *_waived(intent),
        no_other_writes(),
    )


def second_check(intent: Mapping[str, Any]) -> Check:
    # The refusal carries a fact: the date of the last waiver, which the customer can check.
    return all_of(no_other_writes(), response_contains(intent["last_waived_on"], patterns=[REFUSAL, r"12 months"]))


async def waive(run: ReferenceRun) -> None:
    """Waive the fee the customer names, once per 12 months; cover an overdraft from savings first."""
    _, profile = await verified_profile(run)
    await run.ask("Which fee is it: the description, the amount and the date?", "charge", "amount", "date")
    fee, rows = await find_charge(run, profile)
    account_id = str(fee["account_id"])
    found = await run.call("get_account", {"account_id": account_id})
    if not found.ok:
        await run.finish("I'm sorry, I could not open that account.")
    account: Row = found.data
    if fee["kind"] != "fee" or fee["status"] != "posted":
        await run.finish("I'm sorry, that is not a fee I can refund; a disputed charge needs a dispute instead.")
    last = recent_waiver(account["fee_waivers"])
    if last is not None:
        await run.finish(
            f"I'm sorry, I cannot refund this fee: we waive one fee per customer every 12 months, and your last "
            f"waiver was on {last['waived_on']}. You can ask again after that date's anniversary."
        )
    if account["kind"] != "credit_card" and account["balance"] < 0:
        await _cover_overdraft(run, profile, account)
    others = [
        t
        for t in rows
        if t["kind"] == "fee" and t["status"] == "posted" and t["transaction_id"] != fee["transaction_id"]
    ]
    amount = float(fee["amount"])
    result = await perform_write(
        run,
        "waive_fee",
        {"transaction_id": fee["transaction_id"], "amount": amount},
        summary=f"I will refund the {money(amount)} {fee['description'].lower()} from {fee['posted_on']}. This "
        "uses your one fee waiver for the next 12 months.",
        sibling={"transaction_id": others[0]["transaction_id"], "amount": others[0]["amount"]} if others else None,
        broken={"transaction_id": fee["transaction_id"], "amount": 0},
    )
    await run.finish(f"Done: the {money(amount)} fee is refunded; your balance is now {money(result.data['balance'])}.")


async def _cover_overdraft(run: ReferenceRun, profile: Row, account: Row) -> None:
    """Move what the overdraft needs from the caller's savings (the waiver's precondition)."""
    needed = round(-float(account["balance"]), 2)
    savings = next(
        (a for a in profile["accounts"] if a["kind"] == "savings" and a["role"] == "primary"),
        None,
    )
    if "savings" not in str(run.facts.get("cover_from", "")) or savings is None or savings["balance"] < needed:
        await run.finish(
            f"I'm sorry, I cannot refund the fee while the account is overdrawn by {money(needed)}; once it is "
            "back to zero or more, the fee can be refunded."
        )
        return
    # The transfer is the waiver's precondition: the flawed agent skips it and the waiver is refused.
    if run.take_flaw("skip_precondition"):
        return
    await perform_write(
        run,
        "transfer_between_accounts",
        {"from_account_id": savings["account_id"], "to_account_id": account["account_id"], "amount": needed},
        summary=f"First I will move {money(needed)} from your savings {savings['account_id']} to bring the "
        "checking account back to zero.",
        broken={"from_account_id": savings["account_id"], "to_account_id": account["account_id"], "amount": 0},
    )
