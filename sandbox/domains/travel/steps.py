"""Reference-plan steps the travel task families share: open a reservation, find its segment or passenger,
price a change, and find the sibling a wrong-entity agent acts on instead.

A plan reads only what the customer said (`run.facts`) and what the tools return, never the scenario's intent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from passhat.sandbox.agents import ReferenceRun, lookup

Row = dict[str, Any]


async def open_reservation(run: ReferenceRun, reservation_id: str) -> Row:
    """The reservation the customer named (one lookup by its code: a chance of a mistyped code)."""
    found = await lookup(
        run,
        "get_reservation",
        {"reservation_id": reservation_id},
        typed="reservation_id",
        missing=f"I'm sorry, I could not open reservation {reservation_id}, so I cannot help with it.",
    )
    reservation: Row = found.data
    return reservation


async def segment_on(run: ReferenceRun, reservation: Row, date: str) -> Row:
    """The reservation's segment flying on `date`, or the plan ends."""
    for segment in reservation["segments"]:
        if segment["date"] == date and segment["status"] != "cancelled":
            return dict(segment)
    await run.finish(f"I'm sorry, reservation {reservation['reservation_id']} has no flight on {date}.")
    raise AssertionError("unreachable")


async def passenger_named(run: ReferenceRun, reservation: Row, name: str) -> Row:
    """The passenger of the reservation with this name, or the plan ends."""
    for passenger in reservation["passengers"]:
        if f"{passenger['first_name']} {passenger['last_name']}".lower() == name.strip().lower():
            return dict(passenger)
    await run.finish(f"I'm sorry, there is no passenger named {name} on reservation {reservation['reservation_id']}.")
    raise AssertionError("unreachable")


async def refuse_if_unchangeable(run: ReferenceRun, reservation: Row, segment: Row) -> None:
    """End the plan with the policy's refusal when the fare or the segment cannot change."""
    fare = reservation["fare"]
    if not fare["changeable"]:
        await run.finish(
            f"I'm sorry, reservation {reservation['reservation_id']} is on a basic economy fare, which cannot be "
            "changed or upgraded. If it was booked less than 24 hours ago you can still cancel it for a full refund."
        )
    if segment["status"] != "booked":
        await run.finish(f"I'm sorry, the flight on {segment['date']} has already been flown, so it cannot change.")


async def find_same_flight(run: ReferenceRun, segment: Row, date: str) -> str | None:
    """The id of the segment's flight number on another date (searched on the route), if it operates then."""
    route = {"origin": segment["origin"], "destination": segment["destination"], "date": date}
    found = await run.call("search_flights", route)
    for flight in found.data.get("flights", []) if found.ok else []:
        if flight["number"] == segment["number"]:
            return str(flight["flight_id"])
    return None


async def same_flight_on(run: ReferenceRun, segment: Row, date: str) -> str:
    """The id of the segment's flight number on another date, or the plan ends."""
    found = await find_same_flight(run, segment, date)
    if found is not None:
        return found
    await run.finish(f"I'm sorry, flight {segment['number']} does not operate on {date}.")
    raise AssertionError("unreachable")


def quote_step(
    run: ReferenceRun, arguments: Mapping[str, Any], describe: Callable[[Row], str]
) -> Callable[[], Awaitable[None]]:
    """The precondition of a change or upgrade: price it with quote_change and get the customer's yes to the
    price (the step a skipping agent leaves out, which the backend then refuses)."""

    async def quote() -> None:
        priced = await run.call("quote_change", dict(arguments))
        if not priced.ok:
            await run.finish(f"I'm sorry, I cannot make this change: {priced.error_message}")
        if not await run.confirm(describe(priced.data)):
            await run.finish("Understood, I have not changed anything.")

    return quote


async def other_segment(run: ReferenceRun, reservation: Row, segment: Row) -> Row | None:
    """Another segment still to fly on the same reservation: the leg a wrong-entity agent changes instead."""
    if not run.has_flaw("wrong_entity"):
        return None
    for other in reservation["segments"]:
        if other["segment_id"] != segment["segment_id"] and other["status"] == "booked":
            return dict(other)
    return None


async def other_open_reservation(run: ReferenceRun, customer_id: str | None, reservation_id: str) -> str | None:
    """Another reservation of the customer with nothing flown yet: the one a wrong-entity agent cancels."""
    if customer_id is None or not run.has_flaw("wrong_entity"):
        return None
    profile = await run.call("get_customer", {"customer_id": customer_id})
    for entry in profile.data.get("reservations", []) if profile.ok else []:
        if entry["reservation_id"] == reservation_id or entry["status"] != "confirmed":
            continue
        other = await run.call("get_reservation", {"reservation_id": entry["reservation_id"]})
        if other.ok and all(s["status"] == "booked" for s in other.data["segments"]):
            return str(entry["reservation_id"])
    return None


def money(amount: float) -> str:
    return f"${amount:,.2f}"
