"""The accounts system: balances, holders, transactions, transfers and fee waivers."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, insert, select, update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.banking import models as m
from passhat.sandbox.domains.banking.rules import balance_after_credit, recent_waiver, statement_date
from passhat.sandbox.domains.banking.systems.common import BankSystem, same_amount


class Accounts(BankSystem):
    """Core banking for the verified caller's accounts."""

    @tool("lookup")
    async def get_account(self, account_id: str) -> dict[str, Any]:
        """An account the caller holds: balance, every holder (bank record: name, role, phone, email) and the
        caller's fee waivers of the last two years."""
        account = self._account(account_id)
        holders = self.db.execute(
            select(
                m.account_holders.c.customer_id,
                m.account_holders.c.role,
                m.customers.c.first_name,
                m.customers.c.last_name,
                m.customers.c.phone,
                m.customers.c.email,
            )
            .join(m.customers, m.customers.c.customer_id == m.account_holders.c.customer_id)
            .where(m.account_holders.c.account_id == account_id)
            .order_by(m.account_holders.c.holder_id)
        ).mappings()
        return {
            **account,
            "holders": [dict(row) for row in holders],
            "fee_waivers": self._waivers(self._caller()),
        }

    @tool("lookup")
    async def list_transactions(self, account_id: str) -> dict[str, Any]:
        """Every transaction of an account the caller holds: date, description, amount, kind, card, merchant
        category (and whether it bills monthly), the statement it appears on, and its status (posted or waived)."""
        self._account(account_id)
        rows = self.db.execute(
            select(m.transactions, m.merchants.c.category.label("merchant_category"), m.merchants.c.recurring)
            .outerjoin(m.merchants, m.merchants.c.merchant_id == m.transactions.c.merchant_id)
            .where(m.transactions.c.account_id == account_id)
            .order_by(m.transactions.c.posted_on, m.transactions.c.transaction_id)
        ).mappings()
        return {"account_id": account_id, "transactions": [dict(row) for row in rows]}

    @tool("write")
    async def transfer_between_accounts(
        self, from_account_id: str, to_account_id: str, amount: float
    ) -> dict[str, Any]:
        """Move money between two of the caller's own checking or savings accounts (not credit cards)."""
        source, target = self._account(from_account_id), self._account(to_account_id)
        if from_account_id == to_account_id:
            raise ToolError("invalid_request", "the two accounts must differ")
        if "credit_card" in (source["kind"], target["kind"]):
            raise ToolError("transfer_not_allowed", "transfers move money between checking and savings accounts only")
        if not amount > 0:
            raise ToolError("invalid_request", f"amount must be positive (got {amount})")
        amount = round(float(amount), 2)
        if source["balance"] < amount:
            raise ToolError("insufficient_funds", f"{from_account_id} holds {source['balance']:.2f}")
        for account, kind, delta, other in (
            (source, "transfer_out", -amount, to_account_id),
            (target, "transfer_in", amount, from_account_id),
        ):
            self.db.execute(
                update(m.accounts)
                .where(m.accounts.c.account_id == account["account_id"])
                .values(balance=round(account["balance"] + delta, 2))
            )
            self._post(account["account_id"], kind, amount, f"Transfer {'to' if delta < 0 else 'from'} {other}")
        self.db.commit()
        return {"from_account_id": from_account_id, "to_account_id": to_account_id, "amount": amount}

    @tool("write")
    async def waive_fee(self, transaction_id: str, amount: float) -> dict[str, Any]:
        """Waive (refund) a fee, once per customer in 12 months; `amount` is the fee's amount, as confirmed.

        The account must not be overdrawn: bring it to a non-negative balance first.
        """
        caller = self._caller()
        fee = self._transaction(transaction_id)
        if fee["kind"] != "fee":
            raise ToolError("invalid_request", f"{transaction_id} is not a fee; dispute charges with open_dispute")
        same_amount(amount, fee["amount"], "fee")
        if fee["status"] == "waived":
            raise ToolError("already_waived", f"fee {transaction_id} was already waived")
        last = recent_waiver(self._waivers(caller))
        if last is not None:
            raise ToolError(
                "waiver_limit_reached",
                f"one fee waiver per 12 months: the last was on {last['waived_on']}",
            )
        account = self._account(fee["account_id"])
        if account["kind"] != "credit_card" and account["balance"] < 0:
            raise ToolError(
                "account_overdrawn",
                f"{account['account_id']} is overdrawn ({account['balance']:.2f}); bring it to zero or more first",
            )
        self.db.execute(
            update(m.transactions).where(m.transactions.c.transaction_id == transaction_id).values(status="waived")
        )
        balance = balance_after_credit(account, fee["amount"])
        self.db.execute(
            update(m.accounts).where(m.accounts.c.account_id == account["account_id"]).values(balance=balance)
        )
        self.db.execute(
            insert(m.fee_waivers).values(
                customer_id=caller,
                account_id=account["account_id"],
                transaction_id=transaction_id,
                amount=fee["amount"],
                waived_on=m.TODAY,
            )
        )
        self.db.commit()
        return {"transaction_id": transaction_id, "waived": fee["amount"], "balance": balance}

    def _waivers(self, customer_id: str) -> list[dict[str, Any]]:
        rows = self.db.execute(
            select(m.fee_waivers).where(m.fee_waivers.c.customer_id == customer_id).order_by(m.fee_waivers.c.waived_on)
        ).mappings()
        return [dict(row) for row in rows]

    def _post(self, account_id: str, kind: str, amount: float, description: str) -> None:
        count = self.db.execute(select(func.count()).select_from(m.transactions)).scalar() or 0
        self.db.execute(
            insert(m.transactions).values(
                transaction_id=f"T{900000 + count}",
                account_id=account_id,
                kind=kind,
                description=description,
                amount=amount,
                posted_on=m.TODAY,
                statement_date=statement_date(m.TODAY),
                status="posted",
            )
        )


system = System(
    "accounts",
    "Accounts, their transactions and merchants, transfers and fee waivers.",
    ("accounts", "transactions", "merchants", "fee_waivers"),
    Accounts,
)
