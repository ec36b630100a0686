"""A deterministic banking data generator: the same (seed, size) always gives the same database.

Customers hold a checking account (some jointly with another customer), often a credit card and a savings
account; their cards, four months of transactions (purchases, subscriptions, ATM withdrawals, fees, a few
duplicate charges and overdrafts), past disputes, fee waivers, replacements, travel notices and fraud flags.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from typing import Any

from sqlalchemy import Connection, insert

from passhat.sandbox.domain import DomainError
from passhat.sandbox.domains.banking import models as m
from passhat.sandbox.domains.banking.rules import day, statement_date

SIZES: dict[str, int] = {"small": 120, "default": 600}
"""Customers per seed size."""

_FIRST = (
    "Ava", "Liam", "Noah", "Emma", "Olivia", "Mia", "Lucas", "Yusuf", "Sofia", "Mei", "Omar", "Ines", "Ravi",
    "Chloe", "Mateo", "Aisha", "Ethan", "Nora", "Hugo", "Lena", "Daniel", "Priya", "Ivan", "Zara", "Leo",
)  # fmt: skip
_LAST = (
    "Garcia", "Smith", "Chen", "Patel", "Kim", "Novak", "Silva", "Muller", "Rossi", "Haddad", "Okafor", "Larsen",
    "Ito", "Moreau", "Kowalski", "Brown", "Lopez", "Nguyen", "Sato", "Schmidt", "Costa", "Ahmed", "Jensen",
)  # fmt: skip
_STREETS = ("Oak", "Maple", "Cedar", "Pine", "Elm", "Lake", "Hill", "River", "Park", "Willow")
_CITIES = (("Austin", "TX", "787"), ("Denver", "CO", "802"), ("Boston", "MA", "021"), ("Portland", "OR", "972"))

MERCHANTS: tuple[tuple[str, str, str, bool], ...] = (
    ("M01", "Northwind Outfitters", "retail", False),
    ("M02", "Blue Harbor Books", "retail", False),
    ("M03", "Cobalt Electronics", "retail", False),
    ("M04", "Greenleaf Grocers", "retail", False),
    ("M05", "Summit Sporting Goods", "retail", False),
    ("M06", "Lumen Home Store", "retail", False),
    ("M07", "Trattoria Verde", "dining", False),
    ("M08", "Copper Kettle Cafe", "dining", False),
    ("M09", "Sakura Sushi Bar", "dining", False),
    ("M10", "SkyBridge Airlines", "travel", False),
    ("M11", "Harborview Hotels", "travel", False),
    ("M12", "Roadrunner Car Rental", "travel", False),
    ("M13", "Streamly", "subscription", True),
    ("M14", "Tunebox Music", "subscription", True),
    ("M15", "CloudVault Storage", "subscription", True),
    ("M16", "FitPulse Gym", "subscription", True),
    ("M17", "Daily Ledger News", "subscription", True),
    ("M18", "Harbor Bank ATM Main St", "atm", False),
    ("M19", "QuickCash ATM Station Sq", "atm", False),
    ("M20", "QuickCash ATM Airport", "atm", False),
)
_RETAIL = [row for row in MERCHANTS if row[2] in ("retail", "dining")]
_TRAVEL = [row for row in MERCHANTS if row[2] == "travel"]
_SUBSCRIPTIONS = [row for row in MERCHANTS if row[3]]
_ATMS = [row for row in MERCHANTS if row[2] == "atm"]
_SUBSCRIPTION_PRICE = {"M13": 15.49, "M14": 10.99, "M15": 2.99, "M16": 39.0, "M17": 8.5}
_FEES = {
    "monthly_maintenance": ("Monthly maintenance fee", 12.0),
    "overdraft": ("Overdraft fee", 35.0),
    "atm": ("Out-of-network ATM fee", 3.0),
    "late_payment": ("Late payment fee", 29.0),
    "foreign_transaction": ("Foreign transaction fee", 0.0),
}
_START = dt.date(2026, 2, 1)
_END = dt.date(2026, 5, 31)
_WINDOW_START = dt.date(2026, 3, 29)  # the first posting date whose statement is still within 60 days


class _Ids:
    """Sequential ids; account ids and card last fours end in an even digit, so a typo never hits a real one."""

    def __init__(self, rng: random.Random, cards: int) -> None:
        self._account = 10000
        self._transaction = 100000
        self._card = 0
        self._fours = iter(rng.sample([n for n in range(1000, 10000) if n % 2 == 0], cards))

    def account(self) -> str:
        self._account += 2
        return f"A{self._account}"

    def transaction(self) -> str:
        self._transaction += 1
        return f"T{self._transaction}"

    def card(self) -> tuple[str, str]:
        self._card += 1
        return f"K{self._card:05d}", str(next(self._fours))


def _dates(rng: random.Random, start: dt.date, end: dt.date, count: int) -> list[dt.date]:
    span = (end - start).days
    return sorted(start + dt.timedelta(days=rng.randint(0, span)) for _ in range(count))


def _months() -> Iterator[dt.date]:
    month = _START
    while month <= _END:
        yield month
        month = (month.replace(day=28) + dt.timedelta(days=4)).replace(day=1)


class _Builder:
    def __init__(self, seed: int, size: str) -> None:
        self.rng = random.Random(f"banking/{seed}/{size}")
        self.count = SIZES[size]
        self.ids = _Ids(self.rng, self.count * 3)
        self.rows: dict[str, list[dict[str, Any]]] = {table: [] for table in m.metadata.tables}
        self.checking: dict[str, str] = {}
        self.by_account: dict[str, list[dict[str, Any]]] = {}
        self.savings: dict[str, str] = {}

    def add(self, table: str, **row: Any) -> dict[str, Any]:
        self.rows[table].append(row)
        return row

    def transaction(self, account_id: str, posted: dt.date, kind: str, amount: float, **extra: Any) -> dict[str, Any]:
        merchant = extra.pop("merchant", None)
        description = merchant[1] if merchant else extra.pop("description")
        row = self.add(
            "transactions",
            transaction_id=self.ids.transaction(),
            account_id=account_id,
            card_id=extra.pop("card_id", None),
            merchant_id=merchant[0] if merchant else None,
            kind=kind,
            fee_type=extra.pop("fee_type", None),
            description=description,
            amount=round(amount, 2),
            posted_on=posted.isoformat(),
            statement_date=statement_date(posted.isoformat()),
            status=extra.pop("status", "posted"),
        )
        self.by_account.setdefault(account_id, []).append(row)
        return row

    def fee(self, account_id: str, posted: dt.date, fee_type: str, amount: float | None = None) -> dict[str, Any]:
        description, price = _FEES[fee_type]
        return self.transaction(account_id, posted, "fee", amount or price, description=description, fee_type=fee_type)

    def customer(self, index: int) -> None:
        rng = self.rng
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        city, state, prefix = rng.choice(_CITIES)
        customer_id = f"C{1000 + index}"
        born = dt.date(1950, 1, 1) + dt.timedelta(days=rng.randint(0, 18000))
        self.add(
            "customers",
            customer_id=customer_id,
            first_name=first,
            last_name=last,
            date_of_birth=born.isoformat(),
            email=f"{first}.{last}{index}@example.com".lower(),
            phone=f"+1-555-{rng.randint(200, 999)}-{rng.randint(1000, 9999)}",
            address=f"{rng.randint(10, 999)} {rng.choice(_STREETS)} St, {city}, {state} {prefix}{rng.randint(10, 99)}",
        )
        overdrawn = rng.random() < 0.4
        checking = self.account(customer_id, "checking", "Everyday Checking", rng.uniform(300, 6000))
        self.checking[customer_id] = checking["account_id"]
        debit = self.card(customer_id, checking["account_id"], "debit", "Visa")
        self.spend(checking["account_id"], debit, rng.randint(10, 16), _RETAIL, (4, 240))
        self.subscriptions(checking["account_id"], debit)
        self.atm(checking["account_id"], debit)
        if rng.random() < 0.65:
            for month in _months():
                self.fee(checking["account_id"], month + dt.timedelta(days=1), "monthly_maintenance")
        if rng.random() < 0.3:
            self.duplicate(checking["account_id"])
        if rng.random() < 0.7:
            card_account = self.account(customer_id, "credit_card", "Rewards Credit Card", rng.uniform(0, 2500))
            credit = self.card(customer_id, card_account["account_id"], "credit", rng.choice(("Visa", "Mastercard")))
            self.spend(card_account["account_id"], credit, rng.randint(6, 10), _RETAIL, (8, 300))
            self.spend(card_account["account_id"], credit, rng.randint(1, 3), _TRAVEL, (180, 1400))
            self.subscriptions(card_account["account_id"], credit)
            if rng.random() < 0.5:
                self.fee(card_account["account_id"], _dates(rng, _START, _END, 1)[0], "late_payment")
            if rng.random() < 0.5:
                posted = _dates(rng, _START, _END, 1)[0]
                self.fee(card_account["account_id"], posted, "foreign_transaction", rng.uniform(3, 30))
            if rng.random() < 0.15:
                self.duplicate(card_account["account_id"])
        if rng.random() < 0.6:
            savings = self.account(customer_id, "savings", "High-Yield Savings", rng.uniform(800, 20000))
            self.savings[customer_id] = savings["account_id"]
            for month in _months():
                self.transaction(
                    savings["account_id"], month + dt.timedelta(days=27), "deposit", 4.1, description="Interest"
                )
            if overdrawn:
                checking["balance"] = -round(rng.uniform(15, 260), 2)
                self.fee(checking["account_id"], _dates(rng, dt.date(2026, 5, 5), _END, 1)[0], "overdraft")
        for month in _months():
            for payday in (1, 15):
                posted = month.replace(day=payday)
                self.transaction(checking["account_id"], posted, "deposit", 2150.0, description="Payroll deposit")

    def account(self, customer_id: str, kind: str, nickname: str, balance: float) -> dict[str, Any]:
        opened = dt.date(2015, 1, 1) + dt.timedelta(days=self.rng.randint(0, 3650))
        row = self.add(
            "accounts",
            account_id=self.ids.account(),
            kind=kind,
            nickname=nickname,
            balance=round(balance, 2),
            opened_on=opened.isoformat(),
            status="open",
        )
        self.add("account_holders", account_id=row["account_id"], customer_id=customer_id, role="primary")
        return row

    def card(self, customer_id: str, account_id: str, kind: str, network: str) -> dict[str, Any]:
        card_id, last_four = self.ids.card()
        status = "locked" if self.rng.random() < 0.04 else "active"
        return self.add(
            "cards",
            card_id=card_id,
            account_id=account_id,
            customer_id=customer_id,
            kind=kind,
            network=network,
            last_four=last_four,
            expires=f"{self.rng.randint(1, 12):02d}/{self.rng.randint(27, 31)}",
            status=status,
            status_reason="misplaced" if status == "locked" else None,
        )

    def spend(
        self,
        account_id: str,
        card: dict[str, Any],
        count: int,
        merchants: list[tuple[str, str, str, bool]],
        amounts: tuple[float, float],
    ) -> None:
        for posted in _dates(self.rng, _START, _END, count):
            merchant = self.rng.choice(merchants)
            amount = self.rng.uniform(*amounts)
            self.transaction(account_id, posted, "purchase", amount, merchant=merchant, card_id=card["card_id"])

    def subscriptions(self, account_id: str, card: dict[str, Any]) -> None:
        chosen = self.rng.sample(_SUBSCRIPTIONS, self.rng.choice((1, 2, 2, 3)))
        for merchant in chosen:
            billing_day = self.rng.randint(3, 26)
            for month in _months():
                posted = month.replace(day=billing_day)
                price = _SUBSCRIPTION_PRICE[merchant[0]]
                self.transaction(account_id, posted, "purchase", price, merchant=merchant, card_id=card["card_id"])

    def atm(self, account_id: str, card: dict[str, Any]) -> None:
        dates = _dates(self.rng, _START, _WINDOW_START, 1) + _dates(
            self.rng, _WINDOW_START, _END, self.rng.randint(2, 4)
        )
        for posted in dates:
            merchant = self.rng.choice(_ATMS)
            amount = float(self.rng.choice((20, 40, 60, 80, 100, 120, 200, 300)))
            self.transaction(account_id, posted, "atm_withdrawal", amount, merchant=merchant, card_id=card["card_id"])
            if merchant[0] != "M18":
                self.fee(account_id, posted, "atm")

    def duplicate(self, account_id: str) -> None:
        purchases = [
            t
            for t in self.by_account.get(account_id, [])
            if t["kind"] == "purchase"
            and not _is_subscription(t)
            and _WINDOW_START <= day(t["posted_on"]) <= _END - dt.timedelta(days=2)
        ]
        if not purchases:
            return
        original = self.rng.choice(purchases)
        posted = day(original["posted_on"]) + dt.timedelta(days=self.rng.randint(1, 2))
        merchant = next(row for row in MERCHANTS if row[0] == original["merchant_id"])
        self.transaction(
            account_id, posted, "purchase", original["amount"], merchant=merchant, card_id=original["card_id"]
        )

    def joint_holders(self) -> None:
        customers = [row["customer_id"] for row in self.rows["customers"]]
        taken: set[str] = set()
        for index, customer_id in enumerate(customers):
            partner = customers[(index + 7) % len(customers)]
            if partner in taken or customer_id in taken or self.rng.random() >= 0.3:
                continue
            taken.update((customer_id, partner))
            self.add("account_holders", account_id=self.checking[customer_id], customer_id=partner, role="joint")

    def history(self) -> None:
        """Past disputes (with credits and chargebacks), fee waivers, replacements, travel notices and flags."""
        rng = self.rng
        holders = {r["account_id"]: r["customer_id"] for r in self.rows["account_holders"] if r["role"] == "primary"}
        by_account: dict[str, list[dict[str, Any]]] = {}
        for row in self.rows["transactions"]:
            by_account.setdefault(row["account_id"], []).append(row)
        cards = {row["card_id"]: row for row in self.rows["cards"]}
        overdrawn = {row["account_id"] for row in self.rows["accounts"] if row["balance"] < 0}
        dispute_id = 0
        for customer in self.rows["customers"]:
            customer_id = customer["customer_id"]
            accounts = [a for a, c in holders.items() if c == customer_id]
            purchases = [t for a in accounts for t in by_account.get(a, []) if t["kind"] == "purchase"]
            if purchases and rng.random() < 0.3:
                disputed = rng.choice(purchases)
                dispute_id += 1
                opened = min(day(disputed["posted_on"]) + dt.timedelta(days=rng.randint(4, 20)), day(m.TODAY))
                status = rng.choice(("open", "under_review", "under_review", "resolved_in_favor", "denied"))
                reason = rng.choice(("refund_not_received", "unauthorized"))
                self.add(
                    "disputes",
                    dispute_id=dispute_id,
                    transaction_id=disputed["transaction_id"],
                    account_id=disputed["account_id"],
                    customer_id=customer_id,
                    reason=reason,
                    amount=disputed["amount"],
                    status=status,
                    opened_on=opened.isoformat(),
                    decision_due=(opened + dt.timedelta(days=m.DECISION_DAYS)).isoformat(),
                    cancelled_on=None,
                    notes="",
                )
                card = cards[disputed["card_id"]]
                self.add(
                    "chargebacks",
                    dispute_id=dispute_id,
                    merchant_id=disputed["merchant_id"],
                    network=card["network"],
                    amount=disputed["amount"],
                    status={"resolved_in_favor": "won", "denied": "lost"}.get(status, "filed"),
                    filed_on=opened.isoformat(),
                )
                if reason == "unauthorized" and disputed["amount"] <= m.PROVISIONAL_CREDIT_LIMIT:
                    self.add(
                        "provisional_credits",
                        dispute_id=dispute_id,
                        account_id=disputed["account_id"],
                        amount=disputed["amount"],
                        status={"resolved_in_favor": "final", "denied": "reversed"}.get(status, "issued"),
                        issued_on=opened.isoformat(),
                    )
            fees = [
                t
                for a in accounts
                if a not in overdrawn
                for t in by_account.get(a, [])
                if t["kind"] == "fee" and t["status"] == "posted"
            ]
            draw = rng.random()
            if fees and draw < 0.35 and not overdrawn & set(accounts):  # a waiver within the last 12 months
                waived = rng.choice(fees)
                waived["status"] = "waived"
                when = min(day(waived["posted_on"]) + dt.timedelta(days=rng.randint(1, 6)), day(m.TODAY))
                self._waiver(customer_id, waived, when)
            elif draw < 0.5:  # a waiver long ago: it no longer counts
                account = self.checking[customer_id]
                posted = dt.date(2025, 1, 2) + dt.timedelta(days=rng.randint(0, 100))
                old = self.fee(account, posted, "monthly_maintenance")
                old["status"] = "waived"
                self._waiver(customer_id, old, posted + dt.timedelta(days=3))
            own_cards = [c for c in self.rows["cards"] if c["customer_id"] == customer_id]
            if rng.random() < 0.15:
                card = rng.choice(own_cards)
                ordered = dt.date(2025, 6, 1) + dt.timedelta(days=rng.randint(0, 200))
                self.add(
                    "card_replacements",
                    card_id=card["card_id"],
                    reason="damaged",
                    ship_to=customer["address"],
                    status="shipped",
                    ordered_on=ordered.isoformat(),
                )
            if rng.random() < 0.2:
                card = rng.choice(own_cards)
                start = dt.date(2025, 7, 1) + dt.timedelta(days=rng.randint(0, 240))
                self.add(
                    "travel_notices",
                    card_id=card["card_id"],
                    destination=rng.choice(("Mexico", "Japan", "Portugal", "Canada")),
                    start_date=start.isoformat(),
                    end_date=(start + dt.timedelta(days=rng.randint(4, 20))).isoformat(),
                    created_on=(start - dt.timedelta(days=5)).isoformat(),
                )
            if rng.random() < 0.08:
                card = rng.choice(own_cards)
                self.add(
                    "fraud_flags",
                    customer_id=customer_id,
                    card_id=card["card_id"],
                    reason="suspicious_login",
                    status="closed",
                    raised_on=(dt.date(2025, 3, 1) + dt.timedelta(days=rng.randint(0, 300))).isoformat(),
                )

    def _waiver(self, customer_id: str, fee: dict[str, Any], when: dt.date) -> None:
        self.add(
            "fee_waivers",
            customer_id=customer_id,
            account_id=fee["account_id"],
            transaction_id=fee["transaction_id"],
            amount=fee["amount"],
            waived_on=when.isoformat(),
        )


def _is_subscription(transaction: dict[str, Any]) -> bool:
    return any(row[0] == transaction["merchant_id"] and row[3] for row in MERCHANTS)


def seed(connection: Connection, seed: int = 0, size: str = "small") -> None:
    """Fill an empty banking database, reproducibly from (seed, size)."""
    if size not in SIZES:
        raise DomainError(f"banking has no seed size {size!r}; choose one of {', '.join(SIZES)}")
    builder = _Builder(seed, size)
    for merchant_id, name, category, recurring in MERCHANTS:
        builder.add("merchants", merchant_id=merchant_id, name=name, category=category, recurring=recurring)
    for index in range(builder.count):
        builder.customer(index)
    builder.joint_holders()
    builder.history()
    for table in m.metadata.sorted_tables:
        rows = builder.rows[table.name]
        if rows:
            connection.execute(insert(table), rows)
