"""What every banking system shares: the verified caller, and reading the rows a tool acts on."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from passhat.sandbox.domain import SystemBackend, ToolError
from passhat.sandbox.domains.banking import models as m

ERRORS: dict[str, str] = {
    "no_matching_customer": "not_found",
    "identity_mismatch": "not_found",
    "verification_incomplete": "precondition_failed",
    "caller_not_verified": "precondition_failed",
    "no_such_customer": "not_found",
    "no_such_account": "not_found",
    "no_such_transaction": "not_found",
    "no_such_card": "not_found",
    "no_such_dispute": "not_found",
    "card_not_blocked": "precondition_failed",
    "account_overdrawn": "precondition_failed",
    "card_not_active": "not_allowed",
    "dispute_window_closed": "not_allowed",
    "not_disputable": "not_allowed",
    "waiver_limit_reached": "not_allowed",
    "transfer_not_allowed": "not_allowed",
    "credit_not_eligible": "not_allowed",
    "credit_limit_exceeded": "not_allowed",
    "already_disputed": "conflict",
    "already_waived": "conflict",
    "already_credited": "conflict",
    "insufficient_funds": "insufficient_funds",
    "invalid_request": "invalid_argument",
}
"""The banking error vocabulary, mapped onto the failure classifier's categories."""


class BankSystem(SystemBackend):
    """A banking system's backend: every tool acts for the caller verified in this session (two factors)."""

    def _caller(self) -> str:
        """The verified caller's customer id, or the refusal every tool gives before verification."""
        if not self.session.identified:
            raise ToolError(
                "caller_not_verified",
                "verify the caller first: find_customer_by_card, then verify_date_of_birth",
            )
        return next(iter(self.session.identified))

    def _holds(self, customer_id: str, account_id: str) -> str | None:
        """The caller's role on an account (primary or joint), None when they do not hold it."""
        role = self.db.execute(
            select(m.account_holders.c.role).where(
                m.account_holders.c.account_id == account_id, m.account_holders.c.customer_id == customer_id
            )
        ).scalar()
        return str(role) if role is not None else None

    def _account(self, account_id: str) -> dict[str, Any]:
        """An account the verified caller holds (others do not exist, as far as the caller can tell)."""
        caller = self._caller()
        account = self.row(m.accounts, account_id=account_id)
        if account is None or self._holds(caller, account_id) is None:
            raise ToolError("no_such_account", f"no account {account_id!r} among the caller's accounts")
        return account

    def _transaction(self, transaction_id: str) -> dict[str, Any]:
        """A transaction on an account the verified caller holds."""
        caller = self._caller()
        found = self.row(m.transactions, transaction_id=transaction_id)
        if found is None or self._holds(caller, found["account_id"]) is None:
            raise ToolError("no_such_transaction", f"no transaction {transaction_id!r} on the caller's accounts")
        return found

    def _card(self, card_id: str) -> dict[str, Any]:
        """A card of the verified caller."""
        caller = self._caller()
        card = self.row(m.cards, card_id=card_id)
        if card is None or card["customer_id"] != caller:
            raise ToolError("no_such_card", f"no card {card_id!r} among the caller's cards")
        return card


def choice(value: str, allowed: tuple[str, ...], name: str) -> str:
    """`value` if it is one of `allowed`, else the invalid-request refusal naming them."""
    if value not in allowed:
        raise ToolError("invalid_request", f"{name} must be one of: {', '.join(allowed)} (got {value!r})")
    return value


def same_amount(given: float, expected: float, what: str) -> None:
    """Refuse an amount that is not the one on record (the caller confirms amounts before money moves)."""
    if abs(float(given) - float(expected)) >= 0.005:
        raise ToolError("invalid_request", f"amount must be {expected:.2f}, the {what}'s amount (got {given})")
