"""Task family: cancellations (inside 24 hours, refundable, non-refundable into credit) and the partially
flown refusal, with the reference plans beside them. A cancellation is two writes in two systems: the
reservations system cancels and releases the seats, then the payments system refunds or credits what was paid
(and refuses to settle a reservation that was not cancelled first)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from sqlalchemy import Connection

from passhat.checks import Check, all_of, inserted, no_other_writes, response_contains, updated
from passhat.sandbox.agents import ReferenceRun, identify, perform_write
from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.travel import rules
from passhat.sandbox.domains.travel.data import (
    REFUSAL,
    Intent,
    TravelData,
    data_for,
    facts_of,
    identity,
    travel_script,
)
from passhat.sandbox.domains.travel.models import TODAY
from passhat.sandbox.domains.travel.steps import money, open_reservation, other_open_reservation
from passhat.sandbox.domains.travel.systems.payments import CREDIT_VALIDITY

REASONS = ("change of plans", "a family emergency", "a work conflict", "illness")


def _refund_rule(data: TravelData, code: str) -> str:
    """How the policy settles a cancellation: `within_24h`, `refundable` or `credit`."""
    if rules.within_24h(data.reservations[code]["booked_at"]):
        return "within_24h"
    return "refundable" if data.fare(code)["refundable"] else "credit"


def cancel_candidates(connection: Connection, *, rule: str) -> list[Intent]:
    """Open reservations settled by `rule`, of customers with another open reservation (the sibling)."""
    data = data_for(connection)
    found: list[Intent] = []
    for code in sorted(data.reservations):
        if not data.open(code) or _refund_rule(data, code) != rule:
            continue
        customer_id = data.reservations[code]["customer_id"]
        if not any(other != code and data.open(other) for other in data.by_customer[customer_id]):
            continue
        passenger_ids = [p["passenger_id"] for p in data.passengers[code]]
        seats = [
            {"seat_id": rules.seat_id(s["flight_id"], seat), "passenger_id": None}
            for s in data.segments[code]
            for p in passenger_ids
            if (seat := data.seat(s["flight_id"], p)) is not None
        ]
        found.append(
            {
                **identity(data, customer_id),
                "reservation_id": code,
                "reason": REASONS[sum(map(ord, code)) % len(REASONS)],
                "segment_ids": [s["segment_id"] for s in data.segments[code]],
                "seat_moves": seats,
                "settlement": "credit" if rule == "credit" else "refund",
                "amount": data.paid[code],
            }
        )
    return found


def cancel_script(intent: Mapping[str, Any]) -> CustomerScript:
    wish = "a travel credit is fine" if intent.get("settlement") == "credit" else "I'd like my money back"
    return travel_script(
        goal=f"Cancel reservation {intent['reservation_id']} because of {intent['reason']}, and get back what the "
        "fare rules allow.",
        opening=f"Hi, I have to cancel my reservation {intent['reservation_id']} because of {intent['reason']}. "
        f"{wish.capitalize()}.",
        facts=facts_of(intent, "reservation_id", "reason"),
        stated=("reservation_id", "reason"),
        unknown=("segment_id",),
    )


def cancel_check(intent: Mapping[str, Any]) -> Check:
    code = intent["reservation_id"]
    if intent["settlement"] == "refund":
        row = {"reservation_id": code, "kind": "refund", "method": "card", "amount": intent["amount"]}
        settled = inserted("payments", {**row, "purpose": "refund"})
    else:
        settled = inserted(
            "travel_credits",
            {
                "customer_id": intent["customer_id"],
                "source_reservation_id": code,
                "amount": intent["amount"],
                "status": "active",
                "expires": _credit_expiry(),
            },
        )
    return all_of(
        updated("reservations", {"reservation_id": code}, {"status": "cancelled", "cancel_reason": intent["reason"]}),
        *[updated("segments", {"segment_id": s}, {"status": "cancelled"}) for s in intent["segment_ids"]],
        *[updated("seats_inventory", {"seat_id": m["seat_id"]}, {"passenger_id": None}) for m in intent["seat_moves"]],
        settled,
        no_other_writes(),
    )


def _credit_expiry() -> str:
    return (dt.date.fromisoformat(TODAY) + CREDIT_VALIDITY).isoformat()


async def cancel(run: ReferenceRun) -> None:
    """Cancel a reservation nothing of which was flown, then refund it (refundable fare, or within 24 hours of
    booking) or turn it into a travel credit (non-refundable)."""
    customer_id = await identify(run)
    facts = await run.ask("Which reservation, and why are you cancelling?", "reservation_id", "reason")
    reservation = await open_reservation(run, str(facts["reservation_id"]))
    code = reservation["reservation_id"]
    if any(s["status"] == "flown" for s in reservation["segments"]):
        await run.finish(
            f"I'm sorry, reservation {code} is partially flown: part of the trip has already been flown, so it "
            "cannot be cancelled. I can transfer you to a colleague to review the remaining flights."
        )
    if reservation["status"] != "confirmed":
        await run.finish(f"Reservation {code} is already {reservation['status']}.")
    refund = reservation["within_24h_of_booking"] or reservation["fare"]["refundable"]
    paid = money(reservation["paid"])
    settle = f"refund {paid} to your card" if refund else f"turn the {paid} you paid into a travel credit"
    arguments = {"reservation_id": code, "reason": str(facts["reason"])}
    other = await other_open_reservation(run, customer_id, code)
    await perform_write(
        run,
        "cancel_reservation",
        arguments,
        summary=f"I will cancel reservation {code} (every flight and passenger) and then {settle}.",
        sibling={**arguments, "reservation_id": other} if other else None,
        broken={**arguments, "reason": ""},
    )
    tool = "refund_reservation" if refund else "issue_travel_credit"
    result = await perform_write(
        run,
        tool,
        {"reservation_id": code},
        summary=f"Reservation {code} is cancelled. Now I will {settle}.",
        broken={"reservation_id": ""},
    )
    if refund:
        await run.finish(f"Done: reservation {code} is cancelled and {money(result.data['refunded'])} is refunded.")
    await run.finish(
        f"Done: reservation {code} is cancelled; a travel credit of {money(result.data['credit'])} is on your "
        f"account until {result.data['expires']}."
    )


candidates_within_24h: Callable[[Connection], list[Intent]] = partial(cancel_candidates, rule="within_24h")
candidates_refundable: Callable[[Connection], list[Intent]] = partial(cancel_candidates, rule="refundable")
candidates_nonrefundable: Callable[[Connection], list[Intent]] = partial(cancel_candidates, rule="credit")


def flown_candidates(connection: Connection) -> list[Intent]:
    """A cancellation asked for on a reservation whose first leg was already flown (the policy refuses)."""
    data = data_for(connection)
    return [
        {
            **identity(data, data.reservations[code]["customer_id"]),
            "reservation_id": code,
            "reason": REASONS[sum(map(ord, code)) % len(REASONS)],
        }
        for code in sorted(data.reservations)
        if data.partially_flown(code)
    ]


def flown_check(intent: Mapping[str, Any]) -> Check:
    # The policy offers a human for the rest of the trip: a hand-off note is allowed, any other write is not.
    return all_of(
        no_other_writes(allow=[("notes", {"kind": "transfer"})]),
        response_contains(intent["reservation_id"], patterns=[REFUSAL, r"flown"]),  # names the reservation
    )
