"""What every travel system shares: row lookups, the caller's identification, and the rules about a reservation.

Each travel system is a `TravelSystem`: one trial's connection and the session (who was identified, which
changes were quoted, which compensations were checked), with the backend's rules as helpers raising `ToolError`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update

from passhat.sandbox.domain import SystemBackend, ToolError
from passhat.sandbox.domains.travel import models as m
from passhat.sandbox.domains.travel import rules

ERRORS: dict[str, str] = {
    "no_such_record": "not_found",
    "not_identified": "precondition_failed",
    "quote_required": "precondition_failed",
    "eligibility_not_checked": "precondition_failed",
    "not_cancelled": "precondition_failed",
    "not_your_reservation": "permission_denied",
    "fare_rules": "not_allowed",
    "already_flown": "not_allowed",
    "reservation_closed": "not_allowed",
    "not_eligible": "not_allowed",
    "name_change_too_large": "not_allowed",
    "bag_limit": "not_allowed",
    "already_compensated": "conflict",
    "already_settled": "conflict",
    "seat_unavailable": "conflict",
    "sold_out": "conflict",
    "insufficient_miles": "insufficient_funds",
    "bad_request": "invalid_argument",
}
"""The travel backend's error vocabulary, mapped onto the classifier's categories."""


def required(**values: object) -> None:
    """Refuse a call whose required text argument is empty (what a careless agent sends)."""
    for name, value in values.items():
        if isinstance(value, str) and not value.strip():
            raise ToolError("bad_request", f"{name} is required")


class TravelSystem(SystemBackend):
    """Base of the travel systems: one trial's connection, the shared session, and the backend's rules."""

    @property
    def quotes(self) -> dict[tuple[str, str], dict[str, Any]]:
        """Changes priced in this session: (reservation, segment) -> the quoted change."""
        found: dict[tuple[str, str], dict[str, Any]] = vars(self.session).setdefault("travel_quotes", {})
        return found

    @property
    def checked_compensations(self) -> set[str]:
        """Segments whose compensation was checked in this session."""
        found: set[str] = vars(self.session).setdefault("travel_compensation_checks", set())
        return found

    def _identified(self, customer_id: str) -> None:
        if customer_id not in self.session.identified:
            raise ToolError(
                "not_identified",
                "the customer has not been identified in this session: use find_customer_by_email or "
                "find_customer_by_reservation first",
            )

    def _customer(self, customer_id: str) -> dict[str, Any]:
        required(customer_id=customer_id)
        row = self.row(m.customers, customer_id=customer_id)
        if row is None:
            raise ToolError("no_such_record", f"customer {customer_id} not found")
        self._identified(customer_id)
        return row

    def _reservation(self, reservation_id: str, *, confirmed: bool = False) -> dict[str, Any]:
        """The reservation, once its owner is identified and (for a change) it is still confirmed."""
        required(reservation_id=reservation_id)
        reservation = self.row(m.reservations, reservation_id=reservation_id.strip().upper())
        if reservation is None:
            raise ToolError("no_such_record", f"reservation {reservation_id} not found")
        if reservation["customer_id"] not in self.session.identified:
            if self.session.identified:
                raise ToolError(
                    "not_your_reservation",
                    f"reservation {reservation_id} does not belong to the identified customer; only its holder "
                    "may see or change it",
                )
            self._identified(reservation["customer_id"])
        if confirmed and reservation["status"] != "confirmed":
            raise ToolError("reservation_closed", f"reservation {reservation_id} is {reservation['status']}")
        return reservation

    def _fare(self, fare_id: str) -> dict[str, Any]:
        fare = self.row(m.fares, fare_id=fare_id)
        assert fare is not None, fare_id  # a reservation's fare always exists (a foreign key)
        return fare

    def _tier(self, customer_id: str) -> str:
        account = self.row(m.loyalty_accounts, customer_id=customer_id)
        return str(account["tier"]) if account else "member"

    def _passengers(self, reservation_id: str) -> list[dict[str, Any]]:
        rows = self.rows(m.reservation_passengers, reservation_id=reservation_id)
        return sorted(rows, key=lambda p: p["passenger_id"])

    def _segments(self, reservation_id: str) -> list[dict[str, Any]]:
        return sorted(self.rows(m.segments, reservation_id=reservation_id), key=lambda s: s["sequence"])

    def _segment(self, reservation: dict[str, Any], segment_id: str, *, booked: bool = True) -> dict[str, Any]:
        required(segment_id=segment_id)
        segment = self.row(m.segments, segment_id=segment_id)
        if segment is None or segment["reservation_id"] != reservation["reservation_id"]:
            raise ToolError(
                "no_such_record", f"segment {segment_id} is not in reservation {reservation['reservation_id']}"
            )
        if booked and segment["status"] == "flown":
            raise ToolError("already_flown", f"segment {segment_id} was already flown")
        if booked and segment["status"] != "booked":
            raise ToolError("reservation_closed", f"segment {segment_id} is {segment['status']}")
        return segment

    def _flight(self, flight_id: str) -> dict[str, Any]:
        required(flight_id=flight_id)
        flight = self.row(m.flights, flight_id=flight_id.strip().upper())
        if flight is None:
            raise ToolError("no_such_record", f"flight {flight_id} not found")
        return flight

    def _seats(self, flight_id: str) -> list[dict[str, Any]]:
        return self.rows(m.seats_inventory, flight_id=flight_id)

    def _move_seats(self, old_flight: str, new_flight: str, cabin: str, passenger_ids: list[str]) -> dict[str, str]:
        """Release the passengers' seats on `old_flight` and give them the first free seats of `cabin` on
        `new_flight` (the same flight for a cabin change); passenger -> new seat."""
        free = rules.free_seats(self._seats(new_flight), cabin)
        if len(free) < len(passenger_ids):
            raise ToolError("sold_out", f"flight {new_flight} has {len(free)} free {cabin} seat(s)")
        self._release_seats(old_flight, passenger_ids)
        assigned = dict(zip(passenger_ids, free, strict=False))
        for passenger_id, seat in assigned.items():
            self.db.execute(
                update(m.seats_inventory)
                .where(m.seats_inventory.c.seat_id == rules.seat_id(new_flight, seat))
                .values(passenger_id=passenger_id)
            )
        return assigned

    def _release_seats(self, flight_id: str, passenger_ids: list[str]) -> None:
        self.db.execute(
            update(m.seats_inventory)
            .where(m.seats_inventory.c.flight_id == flight_id, m.seats_inventory.c.passenger_id.in_(passenger_ids))
            .values(passenger_id=None)
        )

    def _paid(self, reservation_id: str) -> float:
        rows = self.db.execute(
            select(m.payments.c.kind, m.payments.c.amount).where(m.payments.c.reservation_id == reservation_id)
        )
        total: float = sum(amount if kind == "charge" else -amount for kind, amount in rows)
        return round(total, 2)
