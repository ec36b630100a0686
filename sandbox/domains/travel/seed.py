"""A deterministic travel data generator: the same (seed, size) always gives the same database."""

from __future__ import annotations

import datetime as dt
import random
import string
from typing import Any

from sqlalchemy import Connection, insert

from passhat.sandbox.domain import DomainError
from passhat.sandbox.domains.travel import models as m
from passhat.sandbox.domains.travel import rules

SIZES: dict[str, tuple[int, int, int]] = {
    # customers, min reservations per customer, max reservations per customer
    "small": (110, 2, 4),
    "default": (260, 1, 4),
}

AIRPORTS = (
    ("JFK", "New York", "John F. Kennedy International"),
    ("LAX", "Los Angeles", "Los Angeles International"),
    ("ORD", "Chicago", "O'Hare International"),
    ("SFO", "San Francisco", "San Francisco International"),
    ("BOS", "Boston", "Logan International"),
    ("MIA", "Miami", "Miami International"),
    ("SEA", "Seattle", "Seattle-Tacoma International"),
    ("DEN", "Denver", "Denver International"),
)
ROUTES = (
    # outbound number, return number, origin, destination, outbound and return departure, base price
    ("HT101", "HT102", "JFK", "LAX", "08:00", "15:30", 240.0),
    ("HT210", "HT211", "ORD", "SFO", "09:45", "17:10", 190.0),
    ("HT330", "HT331", "BOS", "MIA", "07:20", "13:05", 150.0),
    ("HT450", "HT451", "SEA", "DEN", "11:15", "18:40", 130.0),
)
FIRST_DAY = dt.date(2026, 5, 23)
DAYS = 38
SEATS = (
    *((f"{row}{letter}", "business") for row in (1, 2) for letter in "AC"),
    *((f"4{letter}", "premium") for letter in "ACDF"),
    *((f"{row}{letter}", "economy") for row in (10, 11, 12, 13) for letter in "ACDF"),
)
FARES = (
    # fare_id, class, cabin, refundable, changeable, change fee
    ("F-BASIC", "basic", "economy", False, False, 0.0),
    ("F-SAVER", "saver", "economy", False, True, 75.0),
    ("F-FLEX", "flex", "economy", True, True, 0.0),
    ("F-PREMIUM", "premium", "premium", False, True, 50.0),
    ("F-BUSINESS", "business", "business", True, True, 0.0),
)
_FARE_WEIGHTS = (16, 28, 20, 18, 18)
_TIER_WEIGHTS = (40, 25, 20, 15)
_FIRST = (
    "Ava", "Liam", "Noah", "Emma", "Olivia", "Mia", "Lucas", "Yusuf", "Sofia", "Mei", "Omar", "Ines", "Ravi",
    "Chloe", "Mateo", "Aisha", "Ethan", "Nora", "Hugo", "Lena", "Daniel", "Priya", "Ivan", "Zara", "Felix",
    "Hana", "Maya", "Jonas", "Elena", "Tomas", "Grace", "Samuel", "Leila", "Oscar", "Clara", "Marcus",
)  # fmt: skip
_LAST = (
    "Garcia", "Smith", "Chen", "Patel", "Kim", "Novak", "Silva", "Muller", "Rossi", "Haddad", "Okafor",
    "Larsen", "Ito", "Moreau", "Kowalski", "Brown", "Lopez", "Nguyen", "Sato", "Schmidt", "Costa", "Ahmed",
    "Jensen", "Dubois", "Walker", "Reyes", "Fischer", "Tanaka", "Bergstrom", "Holloway", "Petrov", "Quinn",
)  # fmt: skip
_NOW = dt.datetime.fromisoformat(m.NOW)
_TODAY = dt.date.fromisoformat(m.TODAY)


def _typo(name: str, rng: random.Random) -> str:
    """A misspelling one or two characters away (a swapped pair, a dropped or a doubled letter)."""
    i = rng.randrange(1, len(name) - 1) if len(name) > 2 else 1
    kind = rng.choice(("swap", "drop", "double"))
    if kind == "swap" and name[i] != name[i + 1 : i + 2]:
        return name[:i] + name[i + 1 : i + 2] + name[i] + name[i + 2 :]
    if kind == "drop":
        return name[:i] + name[i + 1 :]
    return name[:i] + name[i] + name[i:]


def _date_of_birth(rng: random.Random) -> str:
    return (dt.date(1950, 1, 1) + dt.timedelta(days=rng.randrange(0, 365 * 55))).isoformat()


def _flights(rng: random.Random) -> list[dict[str, Any]]:
    rows = []
    for outbound, inbound, origin, destination, out_time, back_time, base in ROUTES:
        for number, frm, to, departs in (
            (outbound, origin, destination, out_time),
            (inbound, destination, origin, back_time),
        ):
            for day in range(DAYS):
                date = FIRST_DAY + dt.timedelta(days=day)
                status, delay = "scheduled", 0
                if date < _TODAY:
                    status = "landed"
                    roll = rng.random()
                    delay = (
                        rng.randint(0, 30)
                        if roll < 0.55
                        else rng.randint(45, 115)
                        if roll < 0.65
                        else rng.randint(120, 235)
                        if roll < 0.85
                        else rng.randint(240, 420)
                    )
                elif date <= _TODAY + dt.timedelta(days=1) and rng.random() < 0.3:
                    status, delay = "delayed", rng.choice((35, 50, 75, 95))
                rows.append(
                    {
                        "flight_id": f"{number}-{date.isoformat()}",
                        "number": number,
                        "date": date.isoformat(),
                        "origin": frm,
                        "destination": to,
                        "departs": departs,
                        "status": status,
                        "delay_minutes": delay,
                        "base_price": round(base + rng.choice((-20, -10, 0, 0, 15, 30, 45)), 2),
                    }
                )
    return rows


def seed(connection: Connection, seed: int = 0, size: str = "small") -> None:
    """Fill an empty travel database: airports, a month of flights, customers, reservations and their money."""
    if size not in SIZES:
        raise DomainError(f"unknown travel seed size {size!r}; choose one of {', '.join(SIZES)}")
    n_customers, min_res, max_res = SIZES[size]
    rng = random.Random(f"travel/{seed}")
    rows: dict[str, list[dict[str, Any]]] = {t: [] for t in m.metadata.tables}
    rows["airports"] = [{"code": c, "city": city, "name": name} for c, city, name in AIRPORTS]
    rows["fares"] = [
        {"fare_id": f, "fare_class": k, "cabin": c, "refundable": r, "changeable": ch, "change_fee": fee}
        for f, k, c, r, ch, fee in FARES
    ]
    flights = _flights(rng)
    rows["flights"] = flights
    by_id = {f["flight_id"]: f for f in flights}
    seats: dict[str, dict[str, str | None]] = {f["flight_id"]: {s: None for s, _ in SEATS} for f in flights}
    cabin_of = dict(SEATS)
    used_codes: set[str] = set()
    used_emails: set[str] = set()
    for c_index in range(n_customers):
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        customer_id = f"{first.lower()}_{last.lower()}_{1000 + c_index}"
        email = f"{first.lower()}.{last.lower()}{rng.randint(1, 99)}@example.com"
        while email in used_emails:
            email = f"{first.lower()}.{last.lower()}{rng.randint(100, 9999)}@example.com"
        used_emails.add(email)
        birth = _date_of_birth(rng)
        rows["customers"].append(
            {
                "customer_id": customer_id,
                "first_name": first,
                "last_name": last,
                "email": email,
                "phone": f"555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
                "date_of_birth": birth,
            }
        )
        tier = rng.choices(rules.TIERS, _TIER_WEIGHTS)[0]
        rows["loyalty_accounts"].append(
            {
                "loyalty_id": f"HL{100000 + c_index}",
                "customer_id": customer_id,
                "tier": tier,
                "miles": rng.randrange(2_000, 160_000, 50),
            }
        )
        if rng.random() < 0.15:
            rows["travel_credits"].append(
                {
                    "customer_id": customer_id,
                    "source_reservation_id": "".join(rng.choices(string.ascii_uppercase, k=6)),
                    "amount": float(rng.choice((80, 120, 210, 340))),
                    "status": rng.choice(("active", "used")),
                    "expires": "2027-03-31",
                }
            )
        for _ in range(rng.randint(min_res, max_res)):
            _reservation(rng, rows, customer_id, (first, last, birth), tier, by_id, seats, cabin_of, used_codes)
    for flight_id, assigned in seats.items():
        rows["seats_inventory"].extend(
            {
                "seat_id": rules.seat_id(flight_id, seat),
                "flight_id": flight_id,
                "seat": seat,
                "cabin": cabin_of[seat],
                "passenger_id": passenger,
            }
            for seat, passenger in assigned.items()
        )
    for table in m.metadata.sorted_tables:
        if rows[table.name]:
            connection.execute(insert(table), rows[table.name])


def _reservation(
    rng: random.Random,
    rows: dict[str, list[dict[str, Any]]],
    customer_id: str,
    person: tuple[str, str, str],
    tier: str,
    flights: dict[str, dict[str, Any]],
    seats: dict[str, dict[str, str | None]],
    cabin_of: dict[str, str],
    used_codes: set[str],
) -> None:
    fare = rng.choices(FARES, _FARE_WEIGHTS)[0]
    fare_id, cabin = fare[0], fare[2]
    outbound, inbound, *_ = rng.choice(ROUTES)
    start = FIRST_DAY + dt.timedelta(days=rng.randrange(0, DAYS - 2))
    legs = [f"{outbound}-{start.isoformat()}"]
    back = start + dt.timedelta(days=rng.randint(2, 7))
    if rng.random() < 0.7 and back < FIRST_DAY + dt.timedelta(days=DAYS):
        legs.append(f"{inbound}-{back.isoformat()}")
    count = rng.choices((1, 2, 3), (50, 35, 15))[0]
    if any(sum(1 for s, p in seats[leg].items() if p is None and cabin_of[s] == cabin) < count for leg in legs):
        return
    code = "".join(rng.choices(string.ascii_uppercase + string.digits, k=6))
    while code in used_codes:
        code = "".join(rng.choices(string.ascii_uppercase + string.digits, k=6))
    used_codes.add(code)
    first_day = dt.date.fromisoformat(flights[legs[0]]["date"])
    future = all(dt.date.fromisoformat(flights[leg]["date"]) >= _TODAY for leg in legs)
    if future and rng.random() < 0.3:
        booked = _NOW - dt.timedelta(hours=rng.randint(1, 22), minutes=rng.randrange(0, 60, 5))
    else:
        latest = min(_NOW - dt.timedelta(days=2), dt.datetime.combine(first_day, dt.time(0)) - dt.timedelta(days=1))
        booked = latest - dt.timedelta(days=rng.randint(0, 50), hours=rng.randint(0, 23))
    cancelled = future and rng.random() < 0.08
    rows["reservations"].append(
        {
            "reservation_id": code,
            "customer_id": customer_id,
            "fare_id": fare_id,
            "status": "cancelled" if cancelled else "confirmed",
            "booked_at": booked.isoformat(timespec="seconds"),
            "cancel_reason": "change of plans" if cancelled else None,
            "split_from": None,
        }
    )
    first, last, birth = person
    passengers = []
    for n in range(count):
        if n == 0:
            name = (first, last)
            if rng.random() < 0.2:
                name = (_typo(first, rng), last) if rng.random() < 0.5 else (first, _typo(last, rng))
            row = {"first_name": name[0], "last_name": name[1], "date_of_birth": birth}
        else:
            row = {
                "first_name": rng.choice(_FIRST),
                "last_name": last if rng.random() < 0.5 else rng.choice(_LAST),
                "date_of_birth": _date_of_birth(rng),
            }
        passenger = {"passenger_id": f"{code}-P{n + 1}", "reservation_id": code, **row}
        passengers.append(passenger)
    rows["reservation_passengers"].extend(passengers)
    total = 0.0
    for sequence, leg in enumerate(legs, 1):
        flight = flights[leg]
        flown = dt.date.fromisoformat(flight["date"]) < _TODAY
        rows["segments"].append(
            {
                "segment_id": f"{code}-{sequence}",
                "reservation_id": code,
                "flight_id": leg,
                "sequence": sequence,
                "cabin": cabin,
                "status": "cancelled" if cancelled else "flown" if flown else "booked",
            }
        )
        total += rules.price(flight["base_price"], cabin) * count
        if not cancelled:
            free = [s for s, p in seats[leg].items() if p is None and cabin_of[s] == cabin]
            for passenger, seat in zip(passengers, rng.sample(free, count), strict=True):
                seats[leg][seat] = passenger["passenger_id"]
    created = booked.isoformat(timespec="seconds")
    rows["payments"].append(
        {
            "reservation_id": code,
            "kind": "charge",
            "method": "card",
            "amount": round(total, 2),
            "purpose": "fare",
            "created_at": created,
        }
    )
    if cancelled:
        rows["payments"].append(
            {
                "reservation_id": code,
                "kind": "refund",
                "method": "card",
                "amount": round(total, 2),
                "purpose": "refund",
                "created_at": created,
            }
        )
        return
    if rng.random() < 0.25:
        passenger = passengers[0]
        fee = rules.bag_fees(tier, cabin, 0, 1)[0]
        rows["baggage"].append(
            {"reservation_id": code, "passenger_id": passenger["passenger_id"], "fee": fee, "created_at": created}
        )
        if fee:
            rows["payments"].append(
                {
                    "reservation_id": code,
                    "kind": "charge",
                    "method": "card",
                    "amount": fee,
                    "purpose": "bags",
                    "created_at": created,
                }
            )
    for sequence, leg in enumerate(legs, 1):
        flight = flights[leg]
        owed = rules.compensation(flight["delay_minutes"], flight["status"], tier, count)
        if dt.date.fromisoformat(flight["date"]) < _TODAY and owed and rng.random() < 0.5:
            rows["compensation_vouchers"].append(
                {
                    "customer_id": customer_id,
                    "segment_id": f"{code}-{sequence}",
                    "amount": owed,
                    "reason": f"delay of {flight['delay_minutes']} minutes",
                    "created_at": flight["date"],
                }
            )
