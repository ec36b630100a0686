"""The bank's rules, written once: the backend enforces them, scenario generators and reference plans read them.

Dates are ISO strings; 'today' is `models.TODAY`, so every trial reproduces.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from passhat.sandbox.domains.banking import models as m

STATEMENT_DAY = 28
"""Statements close on this day of every month."""

DISPUTE_REASONS: tuple[str, ...] = (
    "unauthorized",
    "duplicate",
    "refund_not_received",
    "cancelled_subscription",
    "atm_not_dispensed",
)
CREDIT_REASONS = frozenset({"unauthorized", "duplicate", "atm_not_dispensed"})
"""Dispute reasons that get a provisional credit (within `PROVISIONAL_CREDIT_LIMIT`)."""
CHARGEBACK_KINDS = frozenset({"purchase"})
"""Disputed card purchases are charged back to the merchant through the card network; ATM claims are not."""
LOCK_REASONS: tuple[str, ...] = ("misplaced", "customer_request")
BLOCK_REASONS: tuple[str, ...] = ("fraud", "lost", "stolen")
REPLACEMENT_REASONS: tuple[str, ...] = ("damaged", "fraud", "lost", "stolen")
DUPLICATE_DAYS = 3
"""Two charges of the same amount by the same merchant this close together are a duplicate pair."""


def day(value: str) -> dt.date:
    """An ISO date."""
    return dt.date.fromisoformat(value)


def today() -> dt.date:
    """The sandbox's fixed today."""
    return day(m.TODAY)


def days_since(value: str) -> int:
    """Whole days from `value` to today (negative for a future date)."""
    return (today() - day(value)).days


def statement_date(posted_on: str) -> str:
    """The statement a transaction posted on `posted_on` appears on (closing on the 28th)."""
    posted = day(posted_on)
    if posted.day <= STATEMENT_DAY:
        return posted.replace(day=STATEMENT_DAY).isoformat()
    year, month = (posted.year + 1, 1) if posted.month == 12 else (posted.year, posted.month + 1)
    return dt.date(year, month, STATEMENT_DAY).isoformat()


def within_dispute_window(transaction: Mapping[str, Any]) -> bool:
    """Whether a charge can still be disputed: within 60 days of its statement (or not yet on one)."""
    return days_since(str(transaction["statement_date"])) <= m.DISPUTE_WINDOW_DAYS


def recent_waiver(waivers: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The customer's fee waiver within the last 12 months, if any (one per 12 months is allowed)."""
    recent = [w for w in waivers if 0 <= days_since(str(w["waived_on"])) < m.WAIVER_PERIOD_DAYS]
    return max(recent, key=lambda w: str(w["waived_on"])) if recent else None


def credit_amount_allowed(reason: str, amount: float) -> bool:
    """Whether a dispute of this reason and amount gets a provisional credit."""
    return reason in CREDIT_REASONS and amount <= m.PROVISIONAL_CREDIT_LIMIT


def is_twin(one: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """Two different charges by the same merchant for the same amount within `DUPLICATE_DAYS` of each other."""
    return (
        one["transaction_id"] != other["transaction_id"]
        and one["kind"] == other["kind"] == "purchase"
        and one["merchant_id"] == other["merchant_id"]
        and abs(float(one["amount"]) - float(other["amount"])) < 0.005
        and abs((day(str(one["posted_on"])) - day(str(other["posted_on"]))).days) <= DUPLICATE_DAYS
    )


def balance_after_credit(account: Mapping[str, Any], amount: float) -> float:
    """An account's balance after money comes back to it (a credit card owes less, other accounts hold more)."""
    balance = float(account["balance"])
    return round(balance - amount if account["kind"] == "credit_card" else balance + amount, 2)


def decision_due() -> str:
    """When a dispute opened today is to be decided."""
    return (today() + dt.timedelta(days=m.DECISION_DAYS)).isoformat()
