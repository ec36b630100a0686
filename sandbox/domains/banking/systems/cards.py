"""The cards system: card status (lock, block), replacements, travel notices and fraud flags."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import insert, select, update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.banking import models as m
from passhat.sandbox.domains.banking.rules import BLOCK_REASONS, LOCK_REASONS, REPLACEMENT_REASONS, day, today
from passhat.sandbox.domains.banking.systems.common import BankSystem, choice


class Cards(BankSystem):
    """The verified caller's cards."""

    @tool("write")
    async def lock_card(self, card_id: str, reason: str) -> dict[str, Any]:
        """Temporarily lock an active card (it can be unlocked later); reason: misplaced or customer_request."""
        card = self._card(card_id)
        choice(reason, LOCK_REASONS, "reason")
        if card["status"] != "active":
            raise ToolError("card_not_active", f"card {card_id} is {card['status']}, not active")
        self._set_status(card_id, "locked", reason)
        self.db.commit()
        return {"card_id": card_id, "status": "locked"}

    @tool("write")
    async def block_card(self, card_id: str, reason: str) -> dict[str, Any]:
        """Block a card for good (reason: fraud, lost or stolen); a fraud block also raises a fraud flag.

        A blocked card never works again: order a replacement.
        """
        card = self._card(card_id)
        choice(reason, BLOCK_REASONS, "reason")
        if card["status"] == "blocked":
            raise ToolError("card_not_active", f"card {card_id} is already blocked")
        self._set_status(card_id, "blocked", reason)
        if reason == "fraud":
            self.db.execute(
                insert(m.fraud_flags).values(
                    customer_id=card["customer_id"],
                    card_id=card_id,
                    reason="unauthorized_charge",
                    status="open",
                    raised_on=m.TODAY,
                )
            )
        self.db.commit()
        return {"card_id": card_id, "status": "blocked"}

    @tool("write")
    async def order_replacement_card(self, card_id: str, reason: str) -> dict[str, Any]:
        """Order a replacement for a card, mailed to the cardholder's address on file.

        reason: damaged (the card keeps working until the new one arrives), or fraud, lost or stolen (the card
        must be blocked first).
        """
        card = self._card(card_id)
        choice(reason, REPLACEMENT_REASONS, "reason")
        if reason == "damaged" and card["status"] == "blocked":
            raise ToolError("card_not_active", f"card {card_id} is blocked; order its replacement for the block reason")
        if reason != "damaged" and card["status"] != "blocked":
            raise ToolError("card_not_blocked", f"block card {card_id} before replacing it for {reason}")
        address = self.db.execute(
            select(m.customers.c.address).where(m.customers.c.customer_id == card["customer_id"])
        ).scalar()
        self.db.execute(
            insert(m.card_replacements).values(
                card_id=card_id, reason=reason, ship_to=address, status="ordered", ordered_on=m.TODAY
            )
        )
        self.db.commit()
        return {"card_id": card_id, "reason": reason, "ship_to": address, "arrives_in_days": 7}

    @tool("write")
    async def add_travel_notice(self, card_id: str, destination: str, start_date: str, end_date: str) -> dict[str, Any]:
        """Tell the fraud team a card will be used abroad: destination country and dates (YYYY-MM-DD, at most
        90 days, not in the past)."""
        card = self._card(card_id)
        if card["status"] != "active":
            raise ToolError("card_not_active", f"card {card_id} is {card['status']}, not active")
        try:
            start, end = day(start_date), day(end_date)
        except ValueError:
            raise ToolError("invalid_request", "start_date and end_date must be dates as YYYY-MM-DD") from None
        if not destination.strip():
            raise ToolError("invalid_request", "destination is required")
        if start < today() or end < start:
            raise ToolError("invalid_request", "the trip must start today or later and end on or after its start")
        if end - start > dt.timedelta(days=m.TRAVEL_NOTICE_MAX_DAYS):
            raise ToolError("invalid_request", f"a travel notice covers at most {m.TRAVEL_NOTICE_MAX_DAYS} days")
        self.db.execute(
            insert(m.travel_notices).values(
                card_id=card_id,
                destination=destination.strip(),
                start_date=start_date,
                end_date=end_date,
                created_on=m.TODAY,
            )
        )
        self.db.commit()
        return {"card_id": card_id, "destination": destination.strip(), "start_date": start_date, "end_date": end_date}

    def _set_status(self, card_id: str, status: str, reason: str) -> None:
        self.db.execute(update(m.cards).where(m.cards.c.card_id == card_id).values(status=status, status_reason=reason))


system = System(
    "cards",
    "Cards: lock and block, replacements, travel notices and fraud flags.",
    ("cards", "card_replacements", "travel_notices", "fraud_flags"),
    Cards,
)
