"""Task family: card services. Lock a misplaced card, replace a damaged one, add a travel notice.

Each acts on the card whose last four digits the caller gave; a wrong agent acts on their other card.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection

from passhat.checks import Check, all_of, inserted, no_other_writes, updated
from passhat.sandbox.agents import ReferenceRun, perform_write
from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.banking import models as m
from passhat.sandbox.domains.banking.data import Intent, bank_script, data_for, facts_of, identity
from passhat.sandbox.domains.banking.rules import today
from passhat.sandbox.domains.banking.steps import card_by_digits, other_active_card, verified_profile

_DESTINATIONS = ("Portugal", "Japan", "Mexico", "Canada", "Italy", "Kenya", "Peru", "Iceland")


def candidates(connection: Connection, *, travel: bool = False) -> list[Intent]:
    """Every active card of a customer with another active card (the one a wrong agent acts on)."""
    data = data_for(connection)
    found: list[Intent] = []
    for customer_id in sorted(data.customers):
        active = data.active_cards(customer_id)
        if len(active) < 2:
            continue
        for card in active:
            intent = {
                **identity(data, customer_id, card),
                "card_id": card["card_id"],
                "address": data.customers[customer_id]["address"],
            }
            if travel:
                rng = random.Random(card["card_id"])
                start = today() + dt.timedelta(days=rng.randint(3, 40))
                intent |= {
                    "destination": rng.choice(_DESTINATIONS),
                    "start_date": start.isoformat(),
                    "end_date": (start + dt.timedelta(days=rng.randint(4, 30))).isoformat(),
                }
            found.append(intent)
    return found


def lock_script(intent: Mapping[str, Any]) -> CustomerScript:
    return bank_script(
        goal=f"Lock my card ending {intent['card_last_four']} for now: I misplaced it (do not cancel it).",
        opening=f"Hi, I can't find my card ending {intent['card_last_four']}. Can you lock it for now? "
        "It's probably at home somewhere.",
        facts={**facts_of(intent), "reason": "misplaced"},
        stated=("card_last_four", "reason"),
    )


def lock_check(intent: Mapping[str, Any]) -> Check:
    return all_of(
        updated("cards", {"card_id": intent["card_id"]}, {"status": "locked", "status_reason": "misplaced"}),
        no_other_writes(),
    )


def replace_script(intent: Mapping[str, Any]) -> CustomerScript:
    return bank_script(
        goal=f"Get a replacement for my damaged card ending {intent['card_last_four']}; it still works.",
        opening=f"Hello, my card ending {intent['card_last_four']} is cracked and the chip barely reads. "
        "Can I get a new one?",
        facts={**facts_of(intent), "reason": "damaged"},
        stated=("card_last_four", "reason"),
    )


def replace_check(intent: Mapping[str, Any]) -> Check:
    row = {"card_id": intent["card_id"], "reason": "damaged", "ship_to": intent["address"], "ordered_on": m.TODAY}
    return all_of(inserted("card_replacements", {**row, "status": "ordered"}), no_other_writes())


def travel_script(intent: Mapping[str, Any]) -> CustomerScript:
    trip = f"{intent['destination']} from {intent['start_date']} to {intent['end_date']}"
    return bank_script(
        goal=f"Add a travel notice for my card ending {intent['card_last_four']}: {trip}.",
        opening=f"Hi, I'm travelling to {trip} and want my card ending {intent['card_last_four']} to work there.",
        facts=facts_of(intent, "destination", "start_date", "end_date"),
        stated=("card_last_four", "destination", "start_date", "end_date"),
    )


def travel_check(intent: Mapping[str, Any]) -> Check:
    row = {key: intent[key] for key in ("card_id", "destination", "start_date", "end_date")}
    return all_of(inserted("travel_notices", {**row, "created_on": m.TODAY}), no_other_writes())


async def _card(run: ReferenceRun) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The card the caller named (its last four digits) and their other active card."""
    _, profile = await verified_profile(run)
    card = card_by_digits(profile, run.facts.get("card_last_four"))
    if card is None:
        await run.finish("I'm sorry, I cannot find a card with those digits on your profile.")
        raise AssertionError("unreachable")
    return card, other_active_card(profile, str(card["card_id"]))


async def lock(run: ReferenceRun) -> None:
    """Lock the misplaced card (temporarily, not a block)."""
    card, other = await _card(run)
    if card["status"] != "active":
        await run.finish(f"Your card ending {card['last_four']} is already {card['status']}.")
    await perform_write(
        run,
        "lock_card",
        {"card_id": card["card_id"], "reason": "misplaced"},
        summary=f"I will lock your card ending {card['last_four']}; you can unlock it when you find it.",
        sibling={"card_id": other["card_id"], "reason": "misplaced"} if other else None,
        broken={"card_id": card["card_id"], "reason": "lost it somewhere"},
    )
    await run.finish(f"Done: the card ending {card['last_four']} is locked. Nothing else on it changes.")


async def replace(run: ReferenceRun) -> None:
    """Order a replacement for a damaged card (it keeps working until the new one arrives)."""
    card, other = await _card(run)
    await perform_write(
        run,
        "order_replacement_card",
        {"card_id": card["card_id"], "reason": "damaged"},
        summary=f"I will send a replacement for your card ending {card['last_four']} to your address on file; "
        "the current card keeps working until then.",
        sibling={"card_id": other["card_id"], "reason": "damaged"} if other else None,
        broken={"card_id": card["card_id"], "reason": "cracked"},
    )
    await run.finish("Done: a replacement card is on its way and should arrive in about 7 days.")


async def travel(run: ReferenceRun) -> None:
    """Add a travel notice for the card's trip abroad."""
    card, other = await _card(run)
    facts = await run.ask(
        "Where are you travelling, and on which dates (start and end)?", "destination", "start_date", "end_date"
    )
    trip = {key: str(facts.get(key, "")) for key in ("destination", "start_date", "end_date")}
    await perform_write(
        run,
        "add_travel_notice",
        {"card_id": card["card_id"], **trip},
        summary=f"I will add a travel notice for your card ending {card['last_four']}: {trip['destination']} from "
        f"{trip['start_date']} to {trip['end_date']}.",
        sibling={"card_id": other["card_id"], **trip} if other else None,
        broken={"card_id": card["card_id"], **trip, "end_date": trip["start_date"][:8] + "00"},
    )
    await run.finish(f"Done: your card will work in {trip['destination']} during your trip.")
