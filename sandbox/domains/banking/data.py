"""The seeded banking data as plain dicts for the scenario generators (read once per template database)."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlalchemy import Connection, Engine, select

from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.banking import models as m
from passhat.sandbox.domains.banking.rules import within_dispute_window

Row = dict[str, Any]
Intent = dict[str, Any]

REFUSAL = r"(cannot|can't|can not|unable to|not able to|no longer)"
"""A refusal, as a response pattern."""


@dataclass(frozen=True)
class BankData:
    """Every row of the starting state, indexed the way the task types look things up."""

    customers: dict[str, Row]
    accounts: dict[str, Row]
    holders: dict[str, list[Row]]
    held: dict[str, list[str]]
    cards: dict[str, Row]
    cards_of: dict[str, list[Row]]
    transactions: dict[str, Row]
    by_account: dict[str, list[Row]]
    merchants: dict[str, Row]
    disputed: dict[str, Row]
    credits: dict[int, Row]
    waivers: dict[str, list[Row]]

    def primary_accounts(self, customer_id: str) -> list[Row]:
        """The accounts the customer holds as primary holder, by id."""
        return [
            self.accounts[a]
            for a in self.held[customer_id]
            if any(h["customer_id"] == customer_id and h["role"] == "primary" for h in self.holders[a])
        ]

    def owner(self, account_id: str) -> str:
        """The primary holder of an account."""
        return next(str(h["customer_id"]) for h in self.holders[account_id] if h["role"] == "primary")

    def active_cards(self, customer_id: str) -> list[Row]:
        return [c for c in self.cards_of[customer_id] if c["status"] == "active"]

    def unique(self, customer_id: str, charge: Mapping[str, Any]) -> bool:
        """Whether the charge's description, amount and date name it alone among the customer's accounts."""
        same = [
            t
            for a in self.held[customer_id]
            for t in self.by_account[a]
            if (t["description"], t["amount"], t["posted_on"])
            == (charge["description"], charge["amount"], charge["posted_on"])
        ]
        return len(same) == 1

    def open_charge(self, transaction: Mapping[str, Any]) -> bool:
        """A charge that can be disputed: a purchase or ATM withdrawal in the window, not disputed yet."""
        return (
            transaction["kind"] in ("purchase", "atm_withdrawal")
            and within_dispute_window(transaction)
            and transaction["transaction_id"] not in self.disputed
        )

    def recurring(self, transaction: Mapping[str, Any]) -> bool:
        merchant = self.merchants.get(transaction.get("merchant_id") or "")
        return bool(merchant and merchant["recurring"])

    def category(self, transaction: Mapping[str, Any]) -> str:
        merchant = self.merchants.get(transaction.get("merchant_id") or "")
        return str(merchant["category"]) if merchant else ""


def load(connection: Connection) -> BankData:
    """Read the starting state into a BankData."""

    def rows(table: Any, *order: Any) -> list[Row]:
        return [dict(row) for row in connection.execute(select(table).order_by(*order)).mappings()]

    holders: dict[str, list[Row]] = {}
    held: dict[str, list[str]] = {}
    for row in rows(m.account_holders, m.account_holders.c.holder_id):
        holders.setdefault(row["account_id"], []).append(row)
        held.setdefault(row["customer_id"], []).append(row["account_id"])
    cards_of: dict[str, list[Row]] = {}
    cards = {}
    for row in rows(m.cards, m.cards.c.card_id):
        cards[row["card_id"]] = row
        cards_of.setdefault(row["customer_id"], []).append(row)
    by_account: dict[str, list[Row]] = {}
    transactions = {}
    for row in rows(m.transactions, m.transactions.c.posted_on, m.transactions.c.transaction_id):
        transactions[row["transaction_id"]] = row
        by_account.setdefault(row["account_id"], []).append(row)
    waivers: dict[str, list[Row]] = {}
    for row in rows(m.fee_waivers, m.fee_waivers.c.waiver_id):
        waivers.setdefault(row["customer_id"], []).append(row)
    return BankData(
        customers={row["customer_id"]: row for row in rows(m.customers, m.customers.c.customer_id)},
        accounts={row["account_id"]: row for row in rows(m.accounts, m.accounts.c.account_id)},
        holders=holders,
        held={customer: sorted(accounts) for customer, accounts in held.items()},
        cards=cards,
        cards_of=cards_of,
        transactions=transactions,
        by_account=by_account,
        merchants={row["merchant_id"]: row for row in rows(m.merchants, m.merchants.c.merchant_id)},
        disputed={row["transaction_id"]: row for row in rows(m.disputes, m.disputes.c.dispute_id)},
        credits={row["dispute_id"]: row for row in rows(m.provisional_credits, m.provisional_credits.c.credit_id)},
        waivers=waivers,
    )


_CACHE: weakref.WeakKeyDictionary[Engine, BankData] = weakref.WeakKeyDictionary()


def data_for(connection: Connection) -> BankData:
    """The starting state behind `connection`, loaded once per template database."""
    engine = connection.engine
    if engine not in _CACHE:
        _CACHE[engine] = load(connection)
    return _CACHE[engine]


def identity(data: BankData, customer_id: str, card: Mapping[str, Any] | None = None) -> Intent:
    """What a caller knows to verify themselves: last name, a card's last four digits, date of birth."""
    customer = data.customers[customer_id]
    chosen = card or (data.active_cards(customer_id) or data.cards_of[customer_id])[0]
    return {
        "customer_id": customer_id,
        "last_name": customer["last_name"],
        "first_name": customer["first_name"],
        "card_last_four": chosen["last_four"],
        "date_of_birth": customer["date_of_birth"],
    }


def charge_of(transaction: Mapping[str, Any]) -> Intent:
    """How a customer names a charge: its description, amount and date, and the ids the check needs."""
    return {
        "transaction_id": transaction["transaction_id"],
        "account_id": transaction["account_id"],
        "charge": transaction["description"],
        "amount": transaction["amount"],
        "date": transaction["posted_on"],
    }


def facts_of(intent: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    """The customer's facts: the identity they verify with, plus the named intent keys."""
    return {key: intent[key] for key in ("last_name", "card_last_four", "date_of_birth", *keys) if key in intent}


def first(rows: list[Row], test: Callable[[Row], bool]) -> Row | None:
    """The first row passing `test`."""
    return next((row for row in rows if test(row)), None)


ASKED_AS: Mapping[str, tuple[str, ...]] = {
    "last_name": ("last name", "surname", "full name", "your name"),
    "card_last_four": ("last four", "last 4", "card ending", "ends in", "card number"),
    "date_of_birth": ("date of birth", "birth date", "birthday", "born"),
    "charge": ("which charge", "merchant", "description", "which transaction", "what charge"),
    "amount": ("amount", "how much"),
    "date": ("what date", "which date", "when was", "date of the", "posted"),
    "dates": ("dates", "which days", "when were"),
    "cancelled_on": ("cancel", "when did you cancel"),
    "destination": ("destination", "where are you", "which country", "where will"),
    "start_date": ("start", "leave", "depart", "dates"),
    "end_date": ("end", "return", "back", "dates"),
    "reason": ("reason", "why"),
}
"""The words a banking agent uses to ask for a customer's facts (the scripted customer answers to these)."""

bank_script = partial(CustomerScript, asked_as=ASKED_AS, unknown=("customer_id", "account_id", "transaction_id"))
"""A CustomerScript in the bank's words; customers do not know the bank's internal ids."""
