"""The reservations system: reservations, their passengers and segments; changes, upgrades, cancellations."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select, update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.travel import models as m
from passhat.sandbox.domains.travel import rules
from passhat.sandbox.domains.travel.systems.common import TravelSystem, required


class Reservations(TravelSystem):
    """Bookings: what the customer holds, and every change to it the fare rules allow."""

    @tool("lookup")
    async def get_reservation(self, reservation_id: str) -> dict[str, Any]:
        """A reservation of the identified customer: fare rules, booking time, passengers, segments (flight,
        date, route, departure, status, delay, cabin, each passenger's seat), checked bags and the amount paid."""
        reservation = self._reservation(reservation_id)
        code = reservation["reservation_id"]
        passengers = self._passengers(code)
        bags = self.rows(m.baggage, reservation_id=code)
        segments = []
        for segment in self._segments(code):
            flight = self._flight(segment["flight_id"])
            seats = {s["passenger_id"]: s["seat"] for s in self._seats(flight["flight_id"]) if s["passenger_id"]}
            segments.append(
                {
                    **segment,
                    **{k: flight[k] for k in ("number", "date", "origin", "destination", "departs")},
                    "flight_status": flight["status"],
                    "delay_minutes": flight["delay_minutes"],
                    "seats": {p["passenger_id"]: seats.get(p["passenger_id"]) for p in passengers},
                }
            )
        return {
            **reservation,
            "fare": self._fare(reservation["fare_id"]),
            "within_24h_of_booking": rules.within_24h(reservation["booked_at"]),
            "passengers": [
                {**p, "checked_bags": sum(1 for b in bags if b["passenger_id"] == p["passenger_id"])}
                for p in passengers
            ],
            "segments": segments,
            "paid": self._paid(code),
        }

    def _price_change(
        self, reservation: dict[str, Any], segment: dict[str, Any], new_flight_id: str, new_cabin: str
    ) -> dict[str, Any]:
        """The quote for a flight change or a cabin upgrade of one segment, or the refusal the rules give."""
        fare = self._fare(reservation["fare_id"])
        if not fare["changeable"]:
            raise ToolError("fare_rules", f"a {fare['fare_class']} economy fare cannot be changed or upgraded")
        passengers = len(self._passengers(reservation["reservation_id"]))
        current = self._flight(segment["flight_id"])
        if bool(new_flight_id.strip()) == bool(new_cabin.strip()):
            raise ToolError("bad_request", "give either new_flight_id (a flight change) or new_cabin (an upgrade)")
        if new_cabin.strip():
            if new_cabin not in rules.CABINS or rules.CABINS.index(new_cabin) <= rules.CABINS.index(segment["cabin"]):
                raise ToolError("bad_request", f"new_cabin must be a cabin above {segment['cabin']}")
            free = len(rules.free_seats(self._seats(current["flight_id"]), new_cabin))
            if free < passengers:
                raise ToolError("sold_out", f"flight {current['flight_id']} has {free} free {new_cabin} seat(s)")
            miles = rules.upgrade_miles(current["base_price"], segment["cabin"], new_cabin, passengers)
            return {"kind": "upgrade", "new_cabin": new_cabin, "miles": miles, "passengers": passengers}
        new = self._flight(new_flight_id)
        if (new["origin"], new["destination"]) != (current["origin"], current["destination"]):
            raise ToolError(
                "bad_request", f"flight {new['flight_id']} does not fly {current['origin']}-{current['destination']}"
            )
        if new["flight_id"] == current["flight_id"]:
            raise ToolError("bad_request", f"the segment is already on flight {new['flight_id']}")
        if new["date"] < m.TODAY or new["status"] in ("landed", "cancelled"):
            raise ToolError("not_eligible", f"flight {new['flight_id']} can no longer be booked")
        free = len(rules.free_seats(self._seats(new["flight_id"]), segment["cabin"]))
        if free < passengers:
            raise ToolError("sold_out", f"flight {new['flight_id']} has {free} free {segment['cabin']} seat(s)")
        tier = self._tier(reservation["customer_id"])
        charge = rules.change_charge(
            fare["change_fee"], tier, current["base_price"], new["base_price"], segment["cabin"], passengers
        )
        return {"kind": "change", "new_flight_id": new["flight_id"], "passengers": passengers, **charge}

    @tool("lookup")
    async def quote_change(
        self, reservation_id: str, segment_id: str, new_flight_id: str = "", new_cabin: str = ""
    ) -> dict[str, Any]:
        """Price a change of one segment before making it: either to another flight (new_flight_id; the change
        fee after the loyalty tier's waiver plus any higher fare, charged to the card) or to a higher cabin
        (new_cabin; paid in miles). A change or upgrade needs this quote first, in the same conversation."""
        reservation = self._reservation(reservation_id, confirmed=True)
        segment = self._segment(reservation, segment_id)
        quote = self._price_change(reservation, segment, new_flight_id, new_cabin)
        self.quotes[(reservation["reservation_id"], segment_id)] = quote
        return {"reservation_id": reservation["reservation_id"], "segment_id": segment_id, **quote}

    def _quoted(self, reservation: dict[str, Any], segment_id: str, kind: str, target: str) -> dict[str, Any]:
        quote = self.quotes.get((reservation["reservation_id"], segment_id))
        if quote is None or quote["kind"] != kind or target not in (quote.get("new_flight_id"), quote.get("new_cabin")):
            raise ToolError(
                "quote_required",
                f"no quote for this {kind} of segment {segment_id} in this session: call quote_change first and "
                "tell the customer the price",
            )
        return quote

    @tool("write")
    async def change_flight(self, reservation_id: str, segment_id: str, new_flight_id: str) -> dict[str, Any]:
        """Move one segment of a reservation (all its passengers) to another flight on the same route, as
        quoted by quote_change; the quoted total is charged to the card on file."""
        required(new_flight_id=new_flight_id)
        reservation = self._reservation(reservation_id, confirmed=True)
        segment = self._segment(reservation, segment_id)
        new_flight_id = new_flight_id.strip().upper()
        self._quoted(reservation, segment_id, "change", new_flight_id)
        quote = self._price_change(reservation, segment, new_flight_id, "")
        passengers = [p["passenger_id"] for p in self._passengers(reservation["reservation_id"])]
        seats = self._move_seats(segment["flight_id"], new_flight_id, segment["cabin"], passengers)
        self.db.execute(update(m.segments).where(m.segments.c.segment_id == segment_id).values(flight_id=new_flight_id))
        if quote["total"] > 0:
            self.db.execute(
                insert(m.payments).values(
                    reservation_id=reservation["reservation_id"],
                    kind="charge",
                    method="card",
                    amount=quote["total"],
                    purpose="change",
                    created_at=m.NOW,
                )
            )
        self.db.commit()
        self.quotes.pop((reservation["reservation_id"], segment_id), None)
        return {"segment_id": segment_id, "flight_id": new_flight_id, "seats": seats, "charged": quote["total"]}

    @tool("write")
    async def upgrade_cabin(self, reservation_id: str, segment_id: str, new_cabin: str) -> dict[str, Any]:
        """Upgrade one segment of a reservation (all its passengers) to a higher cabin, paid with the holder's
        loyalty miles as quoted by quote_change; passengers get the first free seats of the new cabin."""
        required(new_cabin=new_cabin)
        reservation = self._reservation(reservation_id, confirmed=True)
        segment = self._segment(reservation, segment_id)
        self._quoted(reservation, segment_id, "upgrade", new_cabin)
        quote = self._price_change(reservation, segment, "", new_cabin)
        account = self.row(m.loyalty_accounts, customer_id=reservation["customer_id"])
        if account is None or account["miles"] < quote["miles"]:
            have = account["miles"] if account else 0
            raise ToolError("insufficient_miles", f"the upgrade costs {quote['miles']} miles; the account has {have}")
        passengers = [p["passenger_id"] for p in self._passengers(reservation["reservation_id"])]
        seats = self._move_seats(segment["flight_id"], segment["flight_id"], new_cabin, passengers)
        self.db.execute(update(m.segments).where(m.segments.c.segment_id == segment_id).values(cabin=new_cabin))
        self.db.execute(
            update(m.loyalty_accounts)
            .where(m.loyalty_accounts.c.loyalty_id == account["loyalty_id"])
            .values(miles=account["miles"] - quote["miles"])
        )
        self.db.commit()
        self.quotes.pop((reservation["reservation_id"], segment_id), None)
        return {"segment_id": segment_id, "cabin": new_cabin, "seats": seats, "miles_used": quote["miles"]}

    @tool("write")
    async def cancel_reservation(self, reservation_id: str, reason: str) -> dict[str, Any]:
        """Cancel a whole reservation none of whose segments has been flown; its seats are released. The money
        is settled afterwards in the payments system (refund_reservation or issue_travel_credit)."""
        required(reason=reason)
        reservation = self._reservation(reservation_id, confirmed=True)
        code = reservation["reservation_id"]
        segments = self._segments(code)
        if any(s["status"] == "flown" for s in segments):
            raise ToolError(
                "already_flown",
                f"reservation {code} is partially flown: it cannot be cancelled; a human agent can review it",
            )
        passengers = [p["passenger_id"] for p in self._passengers(code)]
        for segment in segments:
            self._release_seats(segment["flight_id"], passengers)
        self.db.execute(update(m.segments).where(m.segments.c.reservation_id == code).values(status="cancelled"))
        self.db.execute(
            update(m.reservations)
            .where(m.reservations.c.reservation_id == code)
            .values(status="cancelled", cancel_reason=reason.strip())
        )
        self.db.commit()
        fare = self._fare(reservation["fare_id"])
        refund = fare["refundable"] or rules.within_24h(reservation["booked_at"])
        return {
            "reservation_id": code,
            "status": "cancelled",
            "settlement": "refund_reservation" if refund else "issue_travel_credit",
            "amount": self._paid(code),
        }

    @tool("write")
    async def correct_passenger_name(
        self, reservation_id: str, passenger_id: str, first_name: str, last_name: str
    ) -> dict[str, Any]:
        """Correct a passenger's misspelled name: at most 3 characters may change (first and last name
        together); a bigger change is a transfer of the ticket, which this tool refuses."""
        required(passenger_id=passenger_id, first_name=first_name, last_name=last_name)
        reservation = self._reservation(reservation_id, confirmed=True)
        passenger = self.row(m.reservation_passengers, passenger_id=passenger_id)
        if passenger is None or passenger["reservation_id"] != reservation["reservation_id"]:
            raise ToolError("no_such_record", f"passenger {passenger_id} is not on reservation {reservation_id}")
        old = f"{passenger['first_name']} {passenger['last_name']}"
        new = f"{first_name.strip()} {last_name.strip()}"
        distance = rules.name_distance(old, new)
        if distance == 0:
            raise ToolError("bad_request", f"the passenger is already named {old}")
        if distance > rules.NAME_CORRECTION_LIMIT:
            raise ToolError(
                "name_change_too_large",
                f"{old} -> {new} changes {distance} characters; a correction may change at most "
                f"{rules.NAME_CORRECTION_LIMIT} (anything more is a ticket transfer for a human agent)",
            )
        self.db.execute(
            update(m.reservation_passengers)
            .where(m.reservation_passengers.c.passenger_id == passenger_id)
            .values(first_name=first_name.strip(), last_name=last_name.strip())
        )
        self.db.commit()
        return {"passenger_id": passenger_id, "first_name": first_name.strip(), "last_name": last_name.strip()}

    @tool("write")
    async def split_reservation(self, reservation_id: str, passenger_ids: list[str]) -> dict[str, Any]:
        """Move some passengers of a reservation to a new reservation of their own (same holder, fare and
        flights), so that one passenger's trip can change without the others'. Returns the new reservation's
        code and segments."""
        reservation = self._reservation(reservation_id, confirmed=True)
        code = reservation["reservation_id"]
        passengers = {p["passenger_id"] for p in self._passengers(code)}
        if not passenger_ids or len(set(passenger_ids)) != len(passenger_ids):
            raise ToolError("bad_request", "passenger_ids must list each passenger to move once")
        unknown = [p for p in passenger_ids if p not in passengers]
        if unknown:
            raise ToolError("no_such_record", f"passengers {', '.join(unknown)} are not on reservation {code}")
        if set(passenger_ids) == passengers:
            raise ToolError("bad_request", "a split must leave at least one passenger on the original reservation")
        splits = self.db.execute(select(m.reservations.c.reservation_id).where(m.reservations.c.split_from == code))
        new_code = f"{code}-S{len(splits.all()) + 1}"
        self.db.execute(
            insert(m.reservations).values(
                reservation_id=new_code,
                customer_id=reservation["customer_id"],
                fare_id=reservation["fare_id"],
                status="confirmed",
                booked_at=reservation["booked_at"],
                cancel_reason=None,
                split_from=code,
            )
        )
        segments = []
        for segment in self._segments(code):
            if segment["status"] == "cancelled":
                continue
            copy = {**segment, "segment_id": f"{new_code}-{segment['sequence']}", "reservation_id": new_code}
            self.db.execute(insert(m.segments).values(**copy))
            segments.append(copy)
        self.db.execute(
            update(m.reservation_passengers)
            .where(m.reservation_passengers.c.passenger_id.in_(passenger_ids))
            .values(reservation_id=new_code)
        )
        self.db.commit()
        return {"reservation_id": new_code, "split_from": code, "passenger_ids": passenger_ids, "segments": segments}


system = System(
    "reservations",
    "Reservations, their passengers and segments: quotes, flight changes, upgrades, splits and cancellations.",
    ("reservations", "reservation_passengers", "segments"),
    Reservations,
)
