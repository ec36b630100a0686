"""The inventory system: airports, flights (status and delay), fares and the seat inventory; seat changes."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.travel import models as m
from passhat.sandbox.domains.travel import rules
from passhat.sandbox.domains.travel.systems.common import TravelSystem, required


class Inventory(TravelSystem):
    """The flight network and what is left to sell on it."""

    def _describe(self, flight: dict[str, Any]) -> dict[str, Any]:
        seats = self._seats(flight["flight_id"])
        return {
            **{k: v for k, v in flight.items() if k != "base_price"},
            "prices": {cabin: rules.price(flight["base_price"], cabin) for cabin in rules.CABINS},
            "free_seats": {cabin: len(rules.free_seats(seats, cabin)) for cabin in rules.CABINS},
        }

    @tool("lookup")
    async def search_flights(self, origin: str, destination: str, date: str) -> dict[str, Any]:
        """Flights from `origin` to `destination` (airport codes, e.g. JFK) on `date` (YYYY-MM-DD): number,
        departure time, status, per-passenger price and free seats per cabin."""
        required(origin=origin, destination=destination, date=date)
        rows = self.db.execute(
            select(m.flights)
            .where(
                m.flights.c.origin == origin.strip().upper(),
                m.flights.c.destination == destination.strip().upper(),
                m.flights.c.date == date.strip(),
            )
            .order_by(m.flights.c.departs)
        ).mappings()
        found = [self._describe(dict(row)) for row in rows]
        if not found:
            raise ToolError("no_such_record", f"no flights from {origin} to {destination} on {date}")
        return {"flights": found}

    @tool("lookup")
    async def get_flight(self, flight_id: str) -> dict[str, Any]:
        """One flight by id (number and date, e.g. HT101-2026-06-20): route, departure, status, delay, prices."""
        return self._describe(self._flight(flight_id))

    @tool("lookup")
    async def get_seat_map(self, flight_id: str, cabin: str) -> dict[str, Any]:
        """The free seats of a flight's cabin (economy, premium or business), in row order."""
        flight = self._flight(flight_id)
        if cabin not in rules.CABINS:
            raise ToolError("bad_request", f"cabin must be one of {', '.join(rules.CABINS)}")
        return {
            "flight_id": flight["flight_id"],
            "cabin": cabin,
            "free": rules.free_seats(self._seats(flight["flight_id"]), cabin),
        }

    @tool("lookup")
    async def list_fares(self) -> dict[str, Any]:
        """The fare classes: cabin, whether refundable and changeable, and the change fee per passenger."""
        return {"fares": [dict(row) for row in self.db.execute(select(m.fares)).mappings()]}

    @tool("write")
    async def change_seat(self, reservation_id: str, segment_id: str, passenger_id: str, seat: str) -> dict[str, Any]:
        """Move a passenger of a reservation to another free seat of the same cabin on one of its segments."""
        required(seat=seat, passenger_id=passenger_id)
        reservation = self._reservation(reservation_id, confirmed=True)
        segment = self._segment(reservation, segment_id)
        if passenger_id not in {p["passenger_id"] for p in self._passengers(reservation["reservation_id"])}:
            raise ToolError("no_such_record", f"passenger {passenger_id} is not on reservation {reservation_id}")
        wanted = self.row(m.seats_inventory, seat_id=rules.seat_id(segment["flight_id"], seat.strip().upper()))
        if wanted is None:
            raise ToolError("no_such_record", f"flight {segment['flight_id']} has no seat {seat}")
        if wanted["cabin"] != segment["cabin"]:
            raise ToolError(
                "fare_rules",
                f"seat {seat} is in {wanted['cabin']}; the passenger's cabin is {segment['cabin']} (an upgrade "
                "changes the cabin)",
            )
        if wanted["passenger_id"] is not None:
            raise ToolError("seat_unavailable", f"seat {seat} is taken")
        self._release_seats(segment["flight_id"], [passenger_id])
        self.db.execute(
            update(m.seats_inventory)
            .where(m.seats_inventory.c.seat_id == wanted["seat_id"])
            .values(passenger_id=passenger_id)
        )
        self.db.commit()
        return {"segment_id": segment_id, "passenger_id": passenger_id, "seat": wanted["seat"]}


system = System(
    "inventory",
    "The flight network: airports, flights (status, delay, prices), fares and the seat inventory.",
    ("airports", "flights", "fares", "seats_inventory"),
    Inventory,
)
