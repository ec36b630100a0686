"""Task family: services on a booked trip (checked bags, a seat change, a name correction), with the reference
plans beside them."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection

from passhat.checks import Check, all_of, inserted, no_other_writes, response_contains, updated
from passhat.sandbox.agents import ReferenceRun, identify, perform_write
from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.travel import rules
from passhat.sandbox.domains.travel.data import (
    REFUSAL,
    Intent,
    data_for,
    facts_of,
    full_name,
    identity,
    pretty_date,
    travel_script,
)
from passhat.sandbox.domains.travel.steps import money, open_reservation, passenger_named, segment_on

# -- checked bags --------------------------------------------------------------------------------------------


def bag_candidates(connection: Connection) -> list[Intent]:
    """Bags for one passenger of a trip still to fly, with room for the same bags on another passenger."""
    data = data_for(connection)
    found: list[Intent] = []
    for code in sorted(data.reservations):
        passengers = data.passengers[code]
        if len(passengers) < 2 or not data.booked(code):
            continue
        reservation = data.reservations[code]
        tier, cabin = data.tier(reservation["customer_id"]), data.fare(code)["cabin"]
        for passenger in passengers:
            bags = random.Random(passenger["passenger_id"]).choice((1, 1, 2))
            if any(data.bags_of(code, p["passenger_id"]) + bags > rules.MAX_BAGS for p in passengers):
                continue
            fees = rules.bag_fees(tier, cabin, data.bags_of(code, passenger["passenger_id"]), bags)
            found.append(
                {
                    **identity(data, reservation["customer_id"]),
                    "reservation_id": code,
                    "passenger_id": passenger["passenger_id"],
                    "passenger_name": full_name(passenger),
                    "bags": bags,
                    "fees": fees,
                }
            )
    return found


def bag_script(intent: Mapping[str, Any]) -> CustomerScript:
    bags = f"{intent['bags']} checked bag{'s' if intent['bags'] > 1 else ''}"
    return travel_script(
        goal=f"Add {bags} for {intent['passenger_name']} on reservation {intent['reservation_id']}.",
        opening=f"Hi, can you add {bags} for {intent['passenger_name']} on reservation {intent['reservation_id']}?",
        facts=facts_of(intent, "reservation_id", "passenger_name", "bags"),
        stated=("reservation_id", "passenger_name", "bags"),
        unknown=("passenger_id",),
    )


def bag_check(intent: Mapping[str, Any]) -> Check:
    code, passenger_id = intent["reservation_id"], intent["passenger_id"]
    fees: list[float] = intent["fees"]
    bags = [
        inserted("baggage", {"reservation_id": code, "passenger_id": passenger_id, "fee": fee}, count=fees.count(fee))
        for fee in sorted(set(fees))
    ]
    total = round(sum(fees), 2)
    charge = {"reservation_id": code, "kind": "charge", "method": "card", "amount": total, "purpose": "bags"}
    return all_of(*bags, *([inserted("payments", charge)] if total > 0 else []), no_other_writes())


async def add_bags(run: ReferenceRun) -> None:
    """Quote the bags by the fee schedule, confirm, add them."""
    await identify(run)
    facts = await run.ask(
        "Which reservation and passenger, and how many bags?", "reservation_id", "passenger_name", "bags"
    )
    reservation = await open_reservation(run, str(facts["reservation_id"]))
    passenger = await passenger_named(run, reservation, str(facts["passenger_name"]))
    code, bags = reservation["reservation_id"], int(facts["bags"])
    arguments = {"reservation_id": code, "passenger_id": passenger["passenger_id"], "bags": bags}
    quote = await run.call("quote_bags", arguments)
    if not quote.ok:
        await run.finish(f"I'm sorry, I cannot add those bags: {quote.error_message}")
    others = [p for p in reservation["passengers"] if p["passenger_id"] != passenger["passenger_id"]]
    result = await perform_write(
        run,
        "add_checked_bags",
        arguments,
        summary=f"I will add {bags} checked bag(s) for {facts['passenger_name']}; the fee is "
        f"{money(quote.data['total'])}, charged to your card.",
        sibling={**arguments, "passenger_id": others[0]["passenger_id"]} if others else None,
        broken={**arguments, "bags": 0},
    )
    await run.finish(f"Done: {bags} bag(s) added; {money(result.data['charged'])} was charged.")


# -- seats ---------------------------------------------------------------------------------------------------


def seat_candidates(connection: Connection) -> list[Intent]:
    """A move to a named free seat of the same cabin, on a trip with another passenger (the sibling)."""
    data = data_for(connection)
    found: list[Intent] = []
    for code in sorted(data.reservations):
        passengers = data.passengers[code]
        if len(passengers) < 2:
            continue
        for segment in data.booked(code):
            free = data.free(segment["flight_id"], segment["cabin"])
            if not free:
                continue
            rng = random.Random(segment["segment_id"])
            passenger = rng.choice(passengers)
            seat = rng.choice(free)
            old = data.seat(segment["flight_id"], passenger["passenger_id"])
            found.append(
                {
                    **identity(data, data.reservations[code]["customer_id"]),
                    "reservation_id": code,
                    "segment_id": segment["segment_id"],
                    "flight_date": data.flights[segment["flight_id"]]["date"],
                    "passenger_id": passenger["passenger_id"],
                    "passenger_name": full_name(passenger),
                    "seat": seat,
                    "old_seat_id": rules.seat_id(segment["flight_id"], old) if old else None,
                    "new_seat_id": rules.seat_id(segment["flight_id"], seat),
                }
            )
    return found


def seat_script(intent: Mapping[str, Any]) -> CustomerScript:
    return travel_script(
        goal=f"Move {intent['passenger_name']} to seat {intent['seat']} on the {intent['flight_date']} flight of "
        f"reservation {intent['reservation_id']}.",
        opening=f"Hello, could {intent['passenger_name']} sit in {intent['seat']} on my flight on "
        f"{pretty_date(intent['flight_date'])}? Reservation {intent['reservation_id']}.",
        facts=facts_of(intent, "reservation_id", "passenger_name", "flight_date", "seat"),
        stated=("reservation_id", "passenger_name", "flight_date", "seat"),
        unknown=("passenger_id", "segment_id"),
    )


def seat_check(intent: Mapping[str, Any]) -> Check:
    moves = [updated("seats_inventory", {"seat_id": intent["new_seat_id"]}, {"passenger_id": intent["passenger_id"]})]
    if intent["old_seat_id"]:
        moves.append(updated("seats_inventory", {"seat_id": intent["old_seat_id"]}, {"passenger_id": None}))
    return all_of(*moves, no_other_writes())


async def change_seat(run: ReferenceRun) -> None:
    """Check the seat is free in the passenger's cabin, confirm, move."""
    await identify(run)
    facts = await run.ask(
        "Which reservation, passenger, flight and seat?", "reservation_id", "passenger_name", "flight_date", "seat"
    )
    reservation = await open_reservation(run, str(facts["reservation_id"]))
    passenger = await passenger_named(run, reservation, str(facts["passenger_name"]))
    segment = await segment_on(run, reservation, str(facts["flight_date"]))
    seat = str(facts["seat"]).upper()
    seat_map = await run.call("get_seat_map", {"flight_id": segment["flight_id"], "cabin": segment["cabin"]})
    if not seat_map.ok or seat not in seat_map.data["free"]:
        await run.finish(f"I'm sorry, seat {seat} is not free in your cabin on that flight.")
    arguments = {
        "reservation_id": reservation["reservation_id"],
        "segment_id": segment["segment_id"],
        "passenger_id": passenger["passenger_id"],
        "seat": seat,
    }
    others = [p for p in reservation["passengers"] if p["passenger_id"] != passenger["passenger_id"]]
    await perform_write(
        run,
        "change_seat",
        arguments,
        summary=f"I will move {facts['passenger_name']} to seat {seat} on flight {segment['number']}.",
        sibling={**arguments, "passenger_id": others[0]["passenger_id"]} if others else None,
        broken={**arguments, "seat": ""},
    )
    await run.finish(f"Done: {facts['passenger_name']} is now in seat {seat}.")


# -- name corrections ----------------------------------------------------------------------------------------


def name_candidates(connection: Connection) -> list[Intent]:
    """The holder's own name misspelled on a trip still to fly (a passenger with their birth date)."""
    data = data_for(connection)
    found: list[Intent] = []
    for code in sorted(data.reservations):
        if not data.booked(code):
            continue
        customer = data.customers[data.reservations[code]["customer_id"]]
        for passenger in data.passengers[code]:
            if passenger["date_of_birth"] != customer["date_of_birth"]:
                continue
            distance = rules.name_distance(full_name(passenger), full_name(customer))
            others = [
                rules.name_distance(full_name(p), full_name(customer))
                for p in data.passengers[code]
                if p["passenger_id"] != passenger["passenger_id"]
            ]
            # The misspelled passenger must be the one the correct name is closest to (a companion may share it).
            if 0 < distance <= rules.NAME_CORRECTION_LIMIT and all(d > distance for d in others):
                found.append(
                    {
                        **identity(data, customer["customer_id"]),
                        "reservation_id": code,
                        "passenger_id": passenger["passenger_id"],
                        "wrong_name": full_name(passenger),
                        "correct_name": full_name(customer),
                    }
                )
    return found


def transfer_candidates(connection: Connection) -> list[Intent]:
    """A holder who wants a companion's ticket put in another person's name (a transfer, not a correction)."""
    data = data_for(connection)
    found: list[Intent] = []
    for code in sorted(data.reservations):
        if not data.booked(code):
            continue
        customer = data.customers[data.reservations[code]["customer_id"]]
        for passenger in data.passengers[code][1:]:
            other = data.customers[
                sorted(data.customers)[sum(map(ord, passenger["passenger_id"])) % len(data.customers)]
            ]
            distances = [rules.name_distance(full_name(p), full_name(other)) for p in data.passengers[code]]
            if min(distances) > rules.NAME_CORRECTION_LIMIT:
                found.append(
                    {
                        **identity(data, customer["customer_id"]),
                        "reservation_id": code,
                        "passenger_id": passenger["passenger_id"],
                        "wrong_name": full_name(passenger),
                        "correct_name": full_name(other),
                    }
                )
    return found


def transfer_script(intent: Mapping[str, Any]) -> CustomerScript:
    return travel_script(
        goal=f"Have {intent['wrong_name']}'s ticket on reservation {intent['reservation_id']} put in the name of "
        f"{intent['correct_name']}, who travels instead.",
        opening=f"Hi, {intent['wrong_name']} can't travel, so please change the name on their ticket (reservation "
        f"{intent['reservation_id']}) to {intent['correct_name']}.",
        facts=facts_of(intent, "reservation_id", "correct_name"),
        stated=("reservation_id", "correct_name"),
        unknown=("passenger_id",),
    )


def transfer_check(intent: Mapping[str, Any]) -> Check:
    # The policy sends a transfer to a human: a hand-off note is allowed, any other write is not.
    return all_of(
        no_other_writes(allow=[("notes", {"kind": "transfer"})]),
        response_contains(intent["correct_name"], patterns=[REFUSAL, r"transfer"]),  # names the name refused
    )


def name_script(intent: Mapping[str, Any]) -> CustomerScript:
    return travel_script(
        goal=f"Have the name on reservation {intent['reservation_id']} corrected from {intent['wrong_name']} to "
        f"{intent['correct_name']}.",
        opening=f"Hi, my name is misspelled on reservation {intent['reservation_id']}: it says {intent['wrong_name']} "
        f"but it should be {intent['correct_name']}.",
        facts=facts_of(intent, "reservation_id", "correct_name"),
        stated=("reservation_id", "correct_name"),
        unknown=("passenger_id",),
    )


def name_check(intent: Mapping[str, Any]) -> Check:
    first, last = intent["correct_name"].split(" ", 1)
    return all_of(
        updated(
            "reservation_passengers", {"passenger_id": intent["passenger_id"]}, {"first_name": first, "last_name": last}
        ),
        no_other_writes(),
    )


async def correct_name(run: ReferenceRun) -> None:
    """Find the misspelled passenger, check the correction is small enough, confirm, correct."""
    await identify(run)
    facts = await run.ask("Which reservation, and how should the name read?", "reservation_id", "correct_name")
    reservation = await open_reservation(run, str(facts["reservation_id"]))
    wanted = str(facts["correct_name"]).strip()
    ranked = sorted(
        (rules.name_distance(f"{p['first_name']} {p['last_name']}", wanted), p["passenger_id"], p)
        for p in reservation["passengers"]
    )
    distance, _, passenger = ranked[0]
    if distance == 0:
        await run.finish(f"The name on reservation {reservation['reservation_id']} already reads {wanted}.")
    if distance > rules.NAME_CORRECTION_LIMIT:
        await run.finish(
            f"I'm sorry, I cannot change the name to {wanted}: a correction may change at most "
            f"{rules.NAME_CORRECTION_LIMIT} characters; anything more is a ticket transfer, which a human agent "
            "reviews. I can transfer you to a colleague if you like."
        )
    first, last = wanted.split(" ", 1)
    arguments = {
        "reservation_id": reservation["reservation_id"],
        "passenger_id": passenger["passenger_id"],
        "first_name": first,
        "last_name": last,
    }
    await perform_write(
        run,
        "correct_passenger_name",
        arguments,
        summary=f"I will correct {passenger['first_name']} {passenger['last_name']} to {wanted}.",
        broken={**arguments, "first_name": ""},
    )
    await run.finish(f"Done: the passenger's name now reads {wanted}.")
