"""The travel policy's numbers, declared once: the backend enforces them and the scenario generators expect them.

Every amount a tool charges, refunds, credits or grants is computed here from the starting state, so a check's
expected value and the backend's result come from the same rule.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

from passhat.sandbox.domains.travel.models import NOW

CABINS = ("economy", "premium", "business")
CABIN_FACTOR: Mapping[str, float] = {"economy": 1.0, "premium": 1.6, "business": 3.0}
"""A cabin's price as a multiple of the flight's economy (base) price."""

TIERS = ("member", "silver", "gold", "platinum")
CHANGE_FEE_SHARE: Mapping[str, float] = {"member": 1.0, "silver": 0.5, "gold": 0.0, "platinum": 0.0}
"""The share of a fare's change fee a loyalty tier pays (silver half, gold and platinum none)."""

MILES_PER_DOLLAR = 100
"""Cabin upgrades are paid in miles: 100 miles per dollar of the cabins' price difference."""

BAG_FEES = (35.0, 45.0, 150.0)
"""The fee of a passenger's first, second and third checked bag; no more than three."""
MAX_BAGS = len(BAG_FEES)
FREE_BAGS: Mapping[str, int] = {"member": 0, "silver": 0, "gold": 1, "platinum": 2}
FREE_BAGS_BUSINESS = 2

COMPENSATION_BANDS = ((240, 200.0), (120, 100.0))
"""Delay compensation per passenger: (at least this many minutes, amount); shorter delays get nothing."""
COMPENSATION_TIER_FACTOR: Mapping[str, float] = {"member": 1.0, "silver": 1.0, "gold": 1.5, "platinum": 2.0}

NAME_CORRECTION_LIMIT = 3
"""A name correction may change at most this many characters (first and last name together)."""

REFUND_WINDOW = dt.timedelta(hours=24)


def price(base_price: float, cabin: str) -> float:
    """One passenger's price of a flight in a cabin."""
    return round(base_price * CABIN_FACTOR[cabin], 2)


def within_24h(booked_at: str) -> bool:
    """Whether a reservation booked at `booked_at` is still inside the 24-hour full-refund window."""
    return dt.datetime.fromisoformat(NOW) - dt.datetime.fromisoformat(booked_at) <= REFUND_WINDOW


def change_charge(
    change_fee: float, tier: str, old_base: float, new_base: float, cabin: str, passengers: int
) -> dict[str, float]:
    """What changing a segment to another flight costs: the fee after the tier's share, plus a higher fare.

    A cheaper new flight's difference is not refunded (the policy: the difference is charged, never paid out).
    """
    fee = round(change_fee * CHANGE_FEE_SHARE[tier] * passengers, 2)
    difference = round(max(0.0, price(new_base, cabin) - price(old_base, cabin)) * passengers, 2)
    return {"change_fee": fee, "fare_difference": difference, "total": round(fee + difference, 2)}


def upgrade_miles(base_price: float, cabin: str, new_cabin: str, passengers: int) -> int:
    """The miles an upgrade from `cabin` to `new_cabin` costs for `passengers` travellers."""
    difference = price(base_price, new_cabin) - price(base_price, cabin)
    return round(difference * MILES_PER_DOLLAR) * passengers


def bag_fees(tier: str, cabin: str, bags_before: int, bags: int) -> list[float]:
    """The fee of each of `bags` new bags for a passenger who already has `bags_before` checked."""
    free = max(FREE_BAGS[tier], FREE_BAGS_BUSINESS if cabin == "business" else 0)
    return [0.0 if n < free else BAG_FEES[n] for n in range(bags_before, bags_before + bags)]


def compensation(delay_minutes: int, status: str, tier: str, passengers: int) -> float:
    """The voucher a delayed (or cancelled) segment earns; 0.0 when it earns none."""
    base = 300.0 if status == "cancelled" else next((a for m, a in COMPENSATION_BANDS if delay_minutes >= m), 0.0)
    return round(base * COMPENSATION_TIER_FACTOR[tier] * passengers, 2)


def name_distance(old: str, new: str) -> int:
    """How many characters a correction changes: the edit distance, case-insensitive."""
    a, b = old.lower(), new.lower()
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def seat_order(seat: str) -> tuple[int, str]:
    """Seats sorted the way the backend assigns them: by row, then letter."""
    return int(seat[:-1]), seat[-1]


def free_seats(seats: Iterable[Mapping[str, Any]], cabin: str) -> list[str]:
    """A flight's free seats in a cabin, in the order the backend assigns them."""
    return sorted((s["seat"] for s in seats if s["cabin"] == cabin and s["passenger_id"] is None), key=seat_order)


def seat_id(flight_id: str, seat: str) -> str:
    """The seats_inventory key of a seat on a flight."""
    return f"{flight_id}/{seat}"
