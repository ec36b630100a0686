"""The disputes system: disputes of card and ATM transactions, provisional credits and chargebacks."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select, update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.banking import models as m
from passhat.sandbox.domains.banking.rules import (
    CHARGEBACK_KINDS,
    CREDIT_REASONS,
    DISPUTE_REASONS,
    balance_after_credit,
    day,
    decision_due,
    is_twin,
    within_dispute_window,
)
from passhat.sandbox.domains.banking.systems.common import BankSystem, choice, same_amount


class Disputes(BankSystem):
    """Disputes the verified caller files on their accounts' transactions."""

    @tool("lookup")
    async def list_disputes(self, customer_id: str) -> dict[str, Any]:
        """The caller's disputes: the transaction (date, description), amount, reason, status, decision date,
        and any provisional credit."""
        caller = self._caller()
        if customer_id != caller:
            raise ToolError("no_such_customer", f"no customer {customer_id!r}: only the verified caller's own disputes")
        rows = self.db.execute(
            select(
                m.disputes,
                m.transactions.c.description,
                m.transactions.c.posted_on,
                m.provisional_credits.c.amount.label("provisional_credit"),
            )
            .join(m.transactions, m.transactions.c.transaction_id == m.disputes.c.transaction_id)
            .outerjoin(m.provisional_credits, m.provisional_credits.c.dispute_id == m.disputes.c.dispute_id)
            .where(m.disputes.c.customer_id == caller)
            .order_by(m.disputes.c.dispute_id)
        ).mappings()
        return {"customer_id": caller, "disputes": [dict(row) for row in rows]}

    @tool("write")
    async def open_dispute(
        self, transaction_id: str, reason: str, amount: float, cancelled_on: str = ""
    ) -> dict[str, Any]:
        """Dispute a card purchase or ATM withdrawal, within 60 days of the statement it appeared on.

        reason: unauthorized (the card must be blocked first), duplicate (only the second of two identical
        charges), refund_not_received, cancelled_subscription (give cancelled_on, YYYY-MM-DD, before the
        charge) or atm_not_dispensed. `amount` is the charge's amount. Card purchases are charged back to the
        merchant.
        """
        caller = self._caller()
        charge = self._transaction(transaction_id)
        choice(reason, DISPUTE_REASONS, "reason")
        same_amount(amount, charge["amount"], "charge")
        if charge["kind"] not in ("purchase", "atm_withdrawal"):
            raise ToolError("not_disputable", f"{transaction_id} is a {charge['kind']}; fees are waived, not disputed")
        if not within_dispute_window(charge):
            raise ToolError(
                "dispute_window_closed",
                f"{transaction_id} appeared on the {charge['statement_date']} statement, more than "
                f"{m.DISPUTE_WINDOW_DAYS} days ago",
            )
        taken = self.db.execute(select(m.disputes.c.dispute_id).where(m.disputes.c.transaction_id == transaction_id))
        if taken.first() is not None:
            raise ToolError("already_disputed", f"{transaction_id} is already disputed")
        self._fits(charge, reason, cancelled_on)
        values = {
            "transaction_id": transaction_id,
            "account_id": charge["account_id"],
            "customer_id": caller,
            "reason": reason,
            "amount": charge["amount"],
            "status": "open",
            "opened_on": m.TODAY,
            "decision_due": decision_due(),
            "cancelled_on": cancelled_on or None,
            "notes": "",
        }
        inserted = self.db.execute(insert(m.disputes).values(**values)).inserted_primary_key
        dispute_id = int(inserted[0]) if inserted is not None else 0
        if charge["kind"] in CHARGEBACK_KINDS:
            network = self.db.execute(select(m.cards.c.network).where(m.cards.c.card_id == charge["card_id"])).scalar()
            self.db.execute(
                insert(m.chargebacks).values(
                    dispute_id=dispute_id,
                    merchant_id=charge["merchant_id"],
                    network=network or "unknown",
                    amount=charge["amount"],
                    status="filed",
                    filed_on=m.TODAY,
                )
            )
        self.db.commit()
        return {"dispute_id": dispute_id, **values}

    @tool("write")
    async def issue_provisional_credit(self, dispute_id: int, amount: float) -> dict[str, Any]:
        """Credit the disputed amount while an open dispute is investigated (unauthorized, duplicate and ATM
        disputes of at most 500.00; once per dispute)."""
        self._caller()
        dispute = self.row(m.disputes, dispute_id=dispute_id)
        if dispute is None or dispute["customer_id"] != self._caller():
            raise ToolError("no_such_dispute", f"no dispute {dispute_id} of the caller")
        same_amount(amount, dispute["amount"], "dispute")
        if dispute["status"] != "open":
            raise ToolError("credit_not_eligible", f"dispute {dispute_id} is {dispute['status']}, not open")
        if dispute["reason"] not in CREDIT_REASONS:
            raise ToolError("credit_not_eligible", f"{dispute['reason']} disputes get no provisional credit")
        if dispute["amount"] > m.PROVISIONAL_CREDIT_LIMIT:
            raise ToolError(
                "credit_limit_exceeded",
                f"provisional credit is limited to disputes of {m.PROVISIONAL_CREDIT_LIMIT:.2f} or less",
            )
        if self.db.execute(
            select(m.provisional_credits.c.credit_id).where(m.provisional_credits.c.dispute_id == dispute_id)
        ).first():
            raise ToolError("already_credited", f"dispute {dispute_id} already has a provisional credit")
        account = self._account(dispute["account_id"])
        balance = balance_after_credit(account, dispute["amount"])
        self.db.execute(
            update(m.accounts).where(m.accounts.c.account_id == account["account_id"]).values(balance=balance)
        )
        self.db.execute(
            insert(m.provisional_credits).values(
                dispute_id=dispute_id,
                account_id=account["account_id"],
                amount=dispute["amount"],
                status="issued",
                issued_on=m.TODAY,
            )
        )
        self.db.commit()
        return {"dispute_id": dispute_id, "credited": dispute["amount"], "balance": balance}

    def _fits(self, charge: dict[str, Any], reason: str, cancelled_on: str) -> None:
        """Refuse a reason the charge does not fit."""
        if reason == "atm_not_dispensed" and charge["kind"] != "atm_withdrawal":
            raise ToolError("not_disputable", "atm_not_dispensed is for ATM withdrawals")
        if reason != "atm_not_dispensed" and charge["kind"] != "purchase":
            raise ToolError("not_disputable", f"{reason} is for card purchases; use atm_not_dispensed")
        if reason == "unauthorized":
            status = self.db.execute(select(m.cards.c.status).where(m.cards.c.card_id == charge["card_id"])).scalar()
            if status != "blocked":
                raise ToolError("card_not_blocked", "block the card before disputing an unauthorized charge")
        if reason == "duplicate":
            others = self.db.execute(
                select(m.transactions).where(
                    m.transactions.c.account_id == charge["account_id"],
                    m.transactions.c.merchant_id == charge["merchant_id"],
                )
            ).mappings()
            twins = [t for t in map(dict, others) if is_twin(charge, t)]
            if not twins:
                raise ToolError("not_disputable", "no identical charge by the same merchant within 3 days")
        if reason == "cancelled_subscription":
            recurring = self.db.execute(
                select(m.merchants.c.recurring).where(m.merchants.c.merchant_id == charge["merchant_id"])
            ).scalar()
            if not recurring:
                raise ToolError("not_disputable", "cancelled_subscription is for recurring merchants")
            try:
                cancelled = day(cancelled_on)
            except ValueError:
                raise ToolError("invalid_request", "cancelled_on must be a date as YYYY-MM-DD") from None
            if cancelled >= day(charge["posted_on"]):
                raise ToolError("not_disputable", "the charge was made before the subscription was cancelled")


system = System(
    "disputes",
    "Disputes of card purchases and ATM withdrawals, provisional credits and chargebacks.",
    ("disputes", "provisional_credits", "chargebacks"),
    Disputes,
)
