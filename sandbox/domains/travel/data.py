"""The seeded travel data as plain dicts for the scenario generators (read once per template database)."""

from __future__ import annotations

import datetime as dt
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlalchemy import Connection, Engine, select

from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.travel import models as m
from passhat.sandbox.domains.travel import rules

Intent = dict[str, Any]
Row = dict[str, Any]

REFUSAL = r"(cannot|can't|can not|unable to|not able to|not possible|not allowed)"
"""A refusal, as a response pattern."""


@dataclass(frozen=True)
class TravelData:
    """Every row of the starting state, indexed the way the task types look things up."""

    customers: dict[str, Row]
    loyalty: dict[str, Row]
    flights: dict[str, Row]
    fares: dict[str, Row]
    seats: dict[str, list[Row]]
    seat_of: dict[tuple[str, str], Row]
    reservations: dict[str, Row]
    by_customer: dict[str, list[str]]
    passengers: dict[str, list[Row]]
    segments: dict[str, list[Row]]
    bags: dict[str, list[Row]]
    paid: dict[str, float]
    compensated: frozenset[str]

    def tier(self, customer_id: str) -> str:
        """The customer's loyalty tier."""
        return str(self.loyalty[customer_id]["tier"])

    def fare(self, reservation_id: str) -> Row:
        """A reservation's fare."""
        return self.fares[self.reservations[reservation_id]["fare_id"]]

    def confirmed(self, reservation_id: str) -> bool:
        return bool(self.reservations[reservation_id]["status"] == "confirmed")

    def open(self, reservation_id: str) -> bool:
        """Confirmed with every segment still to fly: it can be cancelled."""
        segments = self.segments[reservation_id]
        return self.confirmed(reservation_id) and all(s["status"] == "booked" for s in segments)

    def partially_flown(self, reservation_id: str) -> bool:
        statuses = {s["status"] for s in self.segments[reservation_id]}
        return self.confirmed(reservation_id) and statuses == {"flown", "booked"}

    def booked(self, reservation_id: str) -> list[Row]:
        """The segments still to fly of a confirmed reservation."""
        if not self.confirmed(reservation_id):
            return []
        return [s for s in self.segments[reservation_id] if s["status"] == "booked"]

    def flight_on(self, number: str, date: str) -> Row | None:
        return self.flights.get(f"{number}-{date}")

    def free(self, flight_id: str, cabin: str) -> list[str]:
        return rules.free_seats(self.seats[flight_id], cabin)

    def seat(self, flight_id: str, passenger_id: str) -> str | None:
        row = self.seat_of.get((flight_id, passenger_id))
        return str(row["seat"]) if row else None

    def bags_of(self, reservation_id: str, passenger_id: str) -> int:
        return sum(1 for b in self.bags.get(reservation_id, []) if b["passenger_id"] == passenger_id)


def load(connection: Connection) -> TravelData:
    """Read the starting state into a TravelData."""

    def rows(table: Any) -> list[Row]:
        return [dict(row) for row in connection.execute(select(table)).mappings()]

    def grouped(table: Any, key: str) -> dict[str, list[Row]]:
        found: dict[str, list[Row]] = {}
        for row in rows(table):
            found.setdefault(row[key], []).append(row)
        return found

    seats = grouped(m.seats_inventory, "flight_id")
    reservations = {r["reservation_id"]: r for r in rows(m.reservations)}
    by_customer: dict[str, list[str]] = {}
    for code in sorted(reservations):
        by_customer.setdefault(reservations[code]["customer_id"], []).append(code)
    passengers = {
        k: sorted(v, key=lambda p: p["passenger_id"])
        for k, v in grouped(m.reservation_passengers, "reservation_id").items()
    }
    segments = {k: sorted(v, key=lambda s: s["sequence"]) for k, v in grouped(m.segments, "reservation_id").items()}
    paid: dict[str, float] = {}
    for row in rows(m.payments):
        sign = 1 if row["kind"] == "charge" else -1
        paid[row["reservation_id"]] = round(paid.get(row["reservation_id"], 0.0) + sign * row["amount"], 2)
    return TravelData(
        customers={r["customer_id"]: r for r in rows(m.customers)},
        loyalty={r["customer_id"]: r for r in rows(m.loyalty_accounts)},
        flights={r["flight_id"]: r for r in rows(m.flights)},
        fares={r["fare_id"]: r for r in rows(m.fares)},
        seats=seats,
        seat_of={(s["flight_id"], s["passenger_id"]): s for ss in seats.values() for s in ss if s["passenger_id"]},
        reservations=reservations,
        by_customer=by_customer,
        passengers=passengers,
        segments=segments,
        bags=grouped(m.baggage, "reservation_id"),
        paid=paid,
        compensated=frozenset(r["segment_id"] for r in rows(m.compensation_vouchers)),
    )


_CACHE: weakref.WeakKeyDictionary[Engine, TravelData] = weakref.WeakKeyDictionary()


def data_for(connection: Connection) -> TravelData:
    """The starting state behind `connection`, loaded once per template database."""
    engine = connection.engine
    if engine not in _CACHE:
        _CACHE[engine] = load(connection)
    return _CACHE[engine]


def identity(data: TravelData, customer_id: str) -> Intent:
    """What a customer knows about themselves: their email and name."""
    customer = data.customers[customer_id]
    return {
        "customer_id": customer_id,
        "email": customer["email"],
        "first_name": customer["first_name"],
        "last_name": customer["last_name"],
    }


def full_name(passenger: Mapping[str, Any]) -> str:
    return f"{passenger['first_name']} {passenger['last_name']}"


def seat_moves(data: TravelData, old_flight: str, new_flight: str, cabin: str, passenger_ids: list[str]) -> list[Row]:
    """The seat rows a move of `passenger_ids` changes, as the backend makes it: each old seat released, then
    the first free seats of `cabin` on `new_flight` taken in passenger order."""
    moves: list[Row] = []
    for passenger_id in passenger_ids:
        old = data.seat(old_flight, passenger_id)
        if old is not None:
            moves.append({"seat_id": rules.seat_id(old_flight, old), "passenger_id": None})
    for passenger_id, seat in zip(passenger_ids, data.free(new_flight, cabin), strict=False):
        moves.append({"seat_id": rules.seat_id(new_flight, seat), "passenger_id": passenger_id})
    return moves


ASKED_AS: dict[str, tuple[str, ...]] = {
    "email": ("email",),
    "first_name": ("full name", "your name", "first name"),
    "last_name": ("last name", "surname", "family name", "full name", "your name"),
    "reservation_id": ("reservation code", "confirmation code", "booking reference", "booking code", "reservation"),
    "flight_date": ("which flight", "date of the flight", "flight date", "which segment", "which leg"),
    "new_date": ("new date", "which date", "what date", "move it to"),
    "cabin": ("which cabin", "cabin"),
    "passenger_name": ("which passenger", "passenger's name", "passenger name", "who"),
    "bags": ("how many bags", "number of bags", "how many"),
    "seat": ("which seat", "seat number", "seat"),
    "correct_name": ("correct name", "correct spelling", "spelled", "should read"),
    "reason": ("reason", "why"),
}
"""The words a travel agent uses to ask for a customer's facts (the scripted customer answers to these)."""

travel_script = partial(CustomerScript, asked_as=ASKED_AS)
"""A CustomerScript in travel's words."""


def facts_of(intent: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    """The customer's facts: identity plus the named intent keys."""
    return {key: intent[key] for key in ("email", "first_name", "last_name", *keys) if key in intent}


def pretty_date(date: str) -> str:
    """A date the way a customer says it (June 20, 2026)."""
    return dt.date.fromisoformat(date).strftime("%B %-d, %Y")
