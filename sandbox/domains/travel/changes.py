"""Task family: changes to a booked trip (another date, a higher cabin, one passenger split off), the basic
economy refusal, and the reference plans beside them. A change or upgrade is priced with `quote_change` first:
the backend refuses one that was not quoted (the precondition a skipping agent leaves out)."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection

from passhat.checks import Check, all_of, inserted, no_other_writes, response_contains, updated
from passhat.sandbox.agents import ReferenceRun, identify, perform_write
from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.travel import models as m
from passhat.sandbox.domains.travel import rules
from passhat.sandbox.domains.travel.data import (
    REFUSAL,
    Intent,
    Row,
    TravelData,
    data_for,
    facts_of,
    full_name,
    identity,
    pretty_date,
    seat_moves,
    travel_script,
)
from passhat.sandbox.domains.travel.steps import (
    find_same_flight,
    money,
    open_reservation,
    other_segment,
    passenger_named,
    quote_step,
    refuse_if_unchangeable,
    same_flight_on,
    segment_on,
)

_TODAY = dt.date.fromisoformat(m.TODAY)


def _new_dates(data: TravelData, segment: Row, others: list[Row], seats: int) -> list[str]:
    """Other dates the segment's flight number can move to: still ahead, keeping the legs in order, with
    `seats` free seats in its cabin."""
    flight = data.flights[segment["flight_id"]]
    day = dt.date.fromisoformat(flight["date"])
    found = []
    for shift in (-3, -2, -1, 1, 2, 3, 4):
        date = day + dt.timedelta(days=shift)
        if date < _TODAY:
            continue
        new = data.flight_on(flight["number"], date.isoformat())
        if new is None or len(data.free(new["flight_id"], segment["cabin"])) < seats:
            continue
        legs_in_order = all(
            (data.flights[o["flight_id"]]["date"] > date.isoformat())
            if o["sequence"] > segment["sequence"]
            else (data.flights[o["flight_id"]]["date"] < date.isoformat())
            for o in others
        )
        if legs_in_order:
            found.append(date.isoformat())
    return found


def _change(data: TravelData, code: str, segment: Row, date: str, passenger_ids: list[str]) -> Intent:
    flight = data.flights[segment["flight_id"]]
    new = data.flight_on(flight["number"], date)
    assert new is not None
    reservation = data.reservations[code]
    charge = rules.change_charge(
        data.fare(code)["change_fee"],
        data.tier(reservation["customer_id"]),
        flight["base_price"],
        new["base_price"],
        segment["cabin"],
        len(passenger_ids),
    )
    return {
        **identity(data, reservation["customer_id"]),
        "reservation_id": code,
        "segment_id": segment["segment_id"],
        "sequence": segment["sequence"],
        "origin": flight["origin"],
        "destination": flight["destination"],
        "flight_date": flight["date"],
        "new_date": date,
        "new_flight_id": new["flight_id"],
        "seat_moves": seat_moves(data, flight["flight_id"], new["flight_id"], segment["cabin"], passenger_ids),
        "charge": charge["total"],
    }


def change_candidates(connection: Connection) -> list[Intent]:
    """A date change of one leg of a round trip still to fly (the other leg is the wrong-entity sibling)."""
    data = data_for(connection)
    found: list[Intent] = []
    for code in sorted(data.reservations):
        booked = data.booked(code)
        if not data.fare(code)["changeable"] or len(booked) < 2:
            continue
        passenger_ids = [p["passenger_id"] for p in data.passengers[code]]
        for segment in booked:
            others = [s for s in data.segments[code] if s["segment_id"] != segment["segment_id"]]
            dates = _new_dates(data, segment, others, len(passenger_ids))
            if dates:
                date = random.Random(segment["segment_id"]).choice(dates)
                found.append(_change(data, code, segment, date, passenger_ids))
    return found


def _change_opening(intent: Mapping[str, Any]) -> str:
    return (
        f"Hi, I need to move my {intent['origin']}-{intent['destination']} flight on "
        f"{pretty_date(intent['flight_date'])} (reservation {intent['reservation_id']}) to "
        f"{pretty_date(intent['new_date'])}, same flight."
    )


def change_script(intent: Mapping[str, Any]) -> CustomerScript:
    return travel_script(
        goal=f"Move the {intent['origin']}-{intent['destination']} flight of {intent['flight_date']} on reservation "
        f"{intent['reservation_id']} to the same flight on {intent['new_date']}, paying what the rules charge.",
        opening=_change_opening(intent),
        facts=facts_of(intent, "reservation_id", "flight_date", "new_date"),
        stated=("reservation_id", "flight_date", "new_date"),
        unknown=("segment_id", "flight_id"),
    )


def _seats_checks(intent: Mapping[str, Any]) -> list[Check]:
    return [
        updated("seats_inventory", {"seat_id": move["seat_id"]}, {"passenger_id": move["passenger_id"]})
        for move in intent["seat_moves"]
    ]


def _charge_checks(reservation_id: str, amount: float, purpose: str) -> list[Check]:
    if amount <= 0:
        return []
    row = {"reservation_id": reservation_id, "kind": "charge", "method": "card", "amount": amount, "purpose": purpose}
    return [inserted("payments", row)]


def change_check(intent: Mapping[str, Any]) -> Check:
    return all_of(
        updated("segments", {"segment_id": intent["segment_id"]}, {"flight_id": intent["new_flight_id"]}),
        *_seats_checks(intent),
        *_charge_checks(intent["reservation_id"], intent["charge"], "change"),
        no_other_writes(),
    )


def _change_summary(quote: Row) -> str:
    return (
        f"The change fee is {money(quote['change_fee'])} and the fare difference {money(quote['fare_difference'])}: "
        f"{money(quote['total'])} in all, charged to your card."
    )


async def change_date(run: ReferenceRun) -> None:
    """Move one segment to the same flight number on another date: quote, confirm the price, change."""
    await identify(run)
    facts = await run.ask(
        "Which reservation and which flight, and to which date?", "reservation_id", "flight_date", "new_date"
    )
    reservation = await open_reservation(run, str(facts["reservation_id"]))
    segment = await segment_on(run, reservation, str(facts["flight_date"]))
    await refuse_if_unchangeable(run, reservation, segment)
    target = await same_flight_on(run, segment, str(facts["new_date"]))
    code = reservation["reservation_id"]
    arguments = {"reservation_id": code, "segment_id": segment["segment_id"], "new_flight_id": target}
    wrong = None
    sibling = await other_segment(run, reservation, segment)
    if sibling is not None:
        wrong_target = await find_same_flight(run, sibling, str(facts["new_date"]))
        wrong = {"reservation_id": code, "segment_id": sibling["segment_id"], "new_flight_id": wrong_target or ""}
        wrong = wrong if (await run.call("quote_change", wrong)).ok else None
    result = await perform_write(
        run,
        "change_flight",
        arguments,
        summary=f"I will move your flight {segment['number']} of {segment['date']} to {facts['new_date']} "
        "for every passenger on the reservation.",
        sibling=wrong,
        broken={**arguments, "new_flight_id": ""},
        precondition=quote_step(run, arguments, _change_summary),
    )
    await run.finish(f"Done: you are now on flight {target}; {money(result.data['charged'])} was charged to your card.")


# -- upgrades ------------------------------------------------------------------------------------------------


def upgrade_candidates(connection: Connection) -> list[Intent]:
    """An upgrade of one leg of a round trip, paid in miles the holder has (the other leg is the sibling)."""
    data = data_for(connection)
    found: list[Intent] = []
    for code in sorted(data.reservations):
        booked = data.booked(code)
        if not data.fare(code)["changeable"] or len(booked) < 2 or booked[0]["cabin"] == "business":
            continue
        reservation = data.reservations[code]
        account = data.loyalty[reservation["customer_id"]]
        passenger_ids = [p["passenger_id"] for p in data.passengers[code]]
        cabin = booked[0]["cabin"]
        higher = [c for c in rules.CABINS if rules.CABINS.index(c) > rules.CABINS.index(cabin)]
        for segment in booked:
            new_cabin = random.Random(segment["segment_id"]).choice(higher)
            costs = {
                leg["segment_id"]: rules.upgrade_miles(
                    data.flights[leg["flight_id"]]["base_price"], cabin, new_cabin, len(passenger_ids)
                )
                for leg in booked
            }
            workable = [
                len(data.free(leg["flight_id"], new_cabin)) >= len(passenger_ids)
                and costs[leg["segment_id"]] <= account["miles"]
                for leg in booked
            ]
            if not all(workable):
                continue
            flight = data.flights[segment["flight_id"]]
            cost = costs[segment["segment_id"]]
            found.append(
                {
                    **identity(data, reservation["customer_id"]),
                    "reservation_id": code,
                    "segment_id": segment["segment_id"],
                    "origin": flight["origin"],
                    "destination": flight["destination"],
                    "flight_date": flight["date"],
                    "cabin": new_cabin,
                    "loyalty_id": account["loyalty_id"],
                    "miles_after": account["miles"] - cost,
                    "seat_moves": seat_moves(data, flight["flight_id"], flight["flight_id"], new_cabin, passenger_ids),
                }
            )
    return found


def upgrade_script(intent: Mapping[str, Any]) -> CustomerScript:
    return travel_script(
        goal=f"Upgrade the {intent['origin']}-{intent['destination']} flight of {intent['flight_date']} on reservation "
        f"{intent['reservation_id']} to {intent['cabin']}, paying with miles.",
        opening=f"Hello, I'd like to upgrade my flight on {pretty_date(intent['flight_date'])} (reservation "
        f"{intent['reservation_id']}) to {intent['cabin']} with my miles.",
        facts=facts_of(intent, "reservation_id", "flight_date", "cabin"),
        stated=("reservation_id", "flight_date", "cabin"),
        unknown=("segment_id", "loyalty_id"),
    )


def upgrade_check(intent: Mapping[str, Any]) -> Check:
    return all_of(
        updated("segments", {"segment_id": intent["segment_id"]}, {"cabin": intent["cabin"]}),
        *_seats_checks(intent),
        updated("loyalty_accounts", {"loyalty_id": intent["loyalty_id"]}, {"miles": intent["miles_after"]}),
        no_other_writes(),
    )


async def upgrade(run: ReferenceRun) -> None:
    """Upgrade one segment to a higher cabin with miles: quote, confirm the miles, upgrade."""
    await identify(run)
    facts = await run.ask("Which reservation and flight, and which cabin?", "reservation_id", "flight_date", "cabin")
    reservation = await open_reservation(run, str(facts["reservation_id"]))
    segment = await segment_on(run, reservation, str(facts["flight_date"]))
    await refuse_if_unchangeable(run, reservation, segment)
    code, cabin = reservation["reservation_id"], str(facts["cabin"])
    arguments = {"reservation_id": code, "segment_id": segment["segment_id"], "new_cabin": cabin}
    wrong = None
    sibling = await other_segment(run, reservation, segment)
    if sibling is not None:
        wrong = {**arguments, "segment_id": sibling["segment_id"]}
        wrong = wrong if (await run.call("quote_change", wrong)).ok else None
    result = await perform_write(
        run,
        "upgrade_cabin",
        arguments,
        summary=f"I will upgrade flight {segment['number']} of {segment['date']} to {cabin} for every passenger.",
        sibling=wrong,
        broken={**arguments, "new_cabin": ""},
        precondition=quote_step(run, arguments, lambda q: f"The upgrade costs {q['miles']:,} miles from your account."),
    )
    await run.finish(f"Done: you are in {cabin}, and {result.data['miles_used']:,} miles were used.")


# -- basic economy -------------------------------------------------------------------------------------------


def basic_candidates(connection: Connection) -> list[Intent]:
    """A date change asked for on a basic economy fare (the policy refuses it)."""
    data = data_for(connection)
    found: list[Intent] = []
    for code in sorted(data.reservations):
        if data.fare(code)["fare_class"] != "basic":
            continue
        passenger_ids = [p["passenger_id"] for p in data.passengers[code]]
        for segment in data.booked(code):
            others = [s for s in data.segments[code] if s["segment_id"] != segment["segment_id"]]
            dates = _new_dates(data, segment, others, len(passenger_ids))
            if dates:
                date = random.Random(segment["segment_id"]).choice(dates)
                found.append(_change(data, code, segment, date, passenger_ids))
    return found


def basic_check(intent: Mapping[str, Any]) -> Check:
    # The refusal names the reservation whose fare forbids the change.
    return all_of(no_other_writes(), response_contains(intent["reservation_id"], patterns=[REFUSAL, r"basic"]))


# -- one passenger of several --------------------------------------------------------------------------------


def split_candidates(connection: Connection) -> list[Intent]:
    """One passenger of several moves to another date: split them off, then change their new reservation."""
    data = data_for(connection)
    found: list[Intent] = []
    for code in sorted(data.reservations):
        passengers = data.passengers[code]
        if not data.fare(code)["changeable"] or len(passengers) < 2 or not data.booked(code):
            continue
        rng = random.Random(code)
        passenger = rng.choice(passengers)
        segment = rng.choice(data.booked(code))
        others = [s for s in data.segments[code] if s["segment_id"] != segment["segment_id"]]
        dates = _new_dates(data, segment, others, 1)
        if not dates:
            continue
        new_code = f"{code}-S1"
        change = _change(data, code, segment, rng.choice(dates), [passenger["passenger_id"]])
        reservation = data.reservations[code]
        copies = [
            {
                "segment_id": f"{new_code}-{s['sequence']}",
                "flight_id": change["new_flight_id"] if s["segment_id"] == segment["segment_id"] else s["flight_id"],
                "cabin": s["cabin"],
                "status": s["status"],
            }
            for s in data.segments[code]
            if s["status"] != "cancelled"
        ]
        found.append(
            {
                **change,
                "passenger_id": passenger["passenger_id"],
                "passenger_name": full_name(passenger),
                "new_reservation_id": new_code,
                "fare_id": reservation["fare_id"],
                "booked_at": reservation["booked_at"],
                "copies": copies,
            }
        )
    return found


def split_script(intent: Mapping[str, Any]) -> CustomerScript:
    name = intent["passenger_name"]
    return travel_script(
        goal=f"Move only {name} from the {intent['flight_date']} flight to the same flight on {intent['new_date']} "
        f"(reservation {intent['reservation_id']}); everyone else keeps their flights.",
        opening=f"Hi, on reservation {intent['reservation_id']} only {name} needs to fly on "
        f"{pretty_date(intent['new_date'])} instead of {pretty_date(intent['flight_date'])}; the others stay "
        "as booked.",
        facts=facts_of(intent, "reservation_id", "passenger_name", "flight_date", "new_date"),
        stated=("reservation_id", "passenger_name", "flight_date", "new_date"),
        unknown=("passenger_id", "segment_id"),
    )


def split_check(intent: Mapping[str, Any]) -> Check:
    new_code = intent["new_reservation_id"]
    return all_of(
        inserted(
            "reservations",
            {
                "reservation_id": new_code,
                "customer_id": intent["customer_id"],
                "fare_id": intent["fare_id"],
                "status": "confirmed",
                "booked_at": intent["booked_at"],
                "split_from": intent["reservation_id"],
            },
        ),
        updated("reservation_passengers", {"passenger_id": intent["passenger_id"]}, {"reservation_id": new_code}),
        *[inserted("segments", {**copy, "reservation_id": new_code}) for copy in intent["copies"]],
        *_seats_checks(intent),
        *_charge_checks(new_code, intent["charge"], "change"),
        no_other_writes(),
    )


async def change_one_passenger(run: ReferenceRun) -> None:
    """A chain: split the passenger off into a reservation of their own, then change that reservation's flight."""
    await identify(run)
    facts = await run.ask(
        "Which reservation and passenger, which flight, and to which date?",
        "reservation_id",
        "passenger_name",
        "flight_date",
        "new_date",
    )
    reservation = await open_reservation(run, str(facts["reservation_id"]))
    passenger = await passenger_named(run, reservation, str(facts["passenger_name"]))
    segment = await segment_on(run, reservation, str(facts["flight_date"]))
    await refuse_if_unchangeable(run, reservation, segment)
    target = await same_flight_on(run, segment, str(facts["new_date"]))
    code = reservation["reservation_id"]
    others = [p["passenger_id"] for p in reservation["passengers"] if p["passenger_id"] != passenger["passenger_id"]]
    name = f"{passenger['first_name']} {passenger['last_name']}"
    split = await perform_write(
        run,
        "split_reservation",
        {"reservation_id": code, "passenger_ids": [passenger["passenger_id"]]},
        summary=f"To change only {name}'s flight I will first move {name} to a reservation of their own "
        "(same fare and flights); the other passengers stay on this one.",
        sibling={"reservation_id": code, "passenger_ids": others[:1]},
        broken={"reservation_id": code, "passenger_ids": []},
    )
    new_code = str(split.data["reservation_id"])
    new_segment = next(s for s in split.data["segments"] if s["sequence"] == segment["sequence"])["segment_id"]
    arguments = {"reservation_id": new_code, "segment_id": new_segment, "new_flight_id": target}
    result = await perform_write(
        run,
        "change_flight",
        arguments,
        summary=f"Now I will move {name} on reservation {new_code} to flight {target}.",
        broken={**arguments, "new_flight_id": ""},
        precondition=quote_step(run, arguments, _change_summary),
    )
    await run.finish(
        f"Done: {name} is on reservation {new_code}, flying {target}; {money(result.data['charged'])} was charged."
    )
