"""The travel backend's tables (SQLAlchemy Core): customers and loyalty, the flight network, reservations, money.

One `MetaData` for every system: `profiles` (customers, loyalty_accounts), `inventory` (airports, flights,
fares, seats_inventory), `reservations` (reservations, reservation_passengers, segments), `payments` (payments,
travel_credits), `baggage`, `compensation` (compensation_vouchers) and `support` (notes).
"""

from __future__ import annotations

from sqlalchemy import Boolean, Column, Float, ForeignKey, Integer, MetaData, String, Table, Text

metadata = MetaData()

customers = Table(
    "customers",
    metadata,
    Column("customer_id", String, primary_key=True),
    Column("first_name", String, nullable=False),
    Column("last_name", String, nullable=False),
    Column("email", String, nullable=False, unique=True),
    Column("phone", String, nullable=False),
    Column("date_of_birth", String, nullable=False),
)

loyalty_accounts = Table(
    "loyalty_accounts",
    metadata,
    Column("loyalty_id", String, primary_key=True),
    Column("customer_id", String, ForeignKey("customers.customer_id"), nullable=False, unique=True),
    Column("tier", String, nullable=False),  # member | silver | gold | platinum
    Column("miles", Integer, nullable=False),
)

airports = Table(
    "airports",
    metadata,
    Column("code", String, primary_key=True),
    Column("city", String, nullable=False),
    Column("name", String, nullable=False),
)

flights = Table(
    "flights",
    metadata,
    Column("flight_id", String, primary_key=True),  # number and date: HT101-2026-06-20
    Column("number", String, nullable=False, index=True),
    Column("date", String, nullable=False, index=True),
    Column("origin", String, ForeignKey("airports.code"), nullable=False),
    Column("destination", String, ForeignKey("airports.code"), nullable=False),
    Column("departs", String, nullable=False),  # local time, HH:MM
    Column("status", String, nullable=False),  # scheduled | delayed | landed | cancelled
    Column("delay_minutes", Integer, nullable=False),
    Column("base_price", Float, nullable=False),  # the economy price; other cabins by CABIN_FACTOR
)

fares = Table(
    "fares",
    metadata,
    Column("fare_id", String, primary_key=True),
    Column("fare_class", String, nullable=False),  # basic | saver | flex | premium | business
    Column("cabin", String, nullable=False),  # economy | premium | business
    Column("refundable", Boolean, nullable=False),
    Column("changeable", Boolean, nullable=False),
    Column("change_fee", Float, nullable=False),  # per passenger, before the tier's waiver
)

seats_inventory = Table(
    "seats_inventory",
    metadata,
    Column("seat_id", String, primary_key=True),  # flight and seat: HT101-2026-06-20/10A
    Column("flight_id", String, ForeignKey("flights.flight_id"), nullable=False, index=True),
    Column("seat", String, nullable=False),
    Column("cabin", String, nullable=False),
    Column("passenger_id", String, nullable=True, index=True),  # None: the seat is free
)

reservations = Table(
    "reservations",
    metadata,
    Column("reservation_id", String, primary_key=True),
    Column("customer_id", String, ForeignKey("customers.customer_id"), nullable=False, index=True),
    Column("fare_id", String, ForeignKey("fares.fare_id"), nullable=False),
    Column("status", String, nullable=False),  # confirmed | cancelled
    Column("booked_at", String, nullable=False),  # ISO timestamp
    Column("cancel_reason", String, nullable=True),
    Column("split_from", String, nullable=True),  # the reservation a passenger was split off
)

reservation_passengers = Table(
    "reservation_passengers",
    metadata,
    Column("passenger_id", String, primary_key=True),
    Column("reservation_id", String, ForeignKey("reservations.reservation_id"), nullable=False, index=True),
    Column("first_name", String, nullable=False),
    Column("last_name", String, nullable=False),
    Column("date_of_birth", String, nullable=False),
)

segments = Table(
    "segments",
    metadata,
    Column("segment_id", String, primary_key=True),
    Column("reservation_id", String, ForeignKey("reservations.reservation_id"), nullable=False, index=True),
    Column("flight_id", String, ForeignKey("flights.flight_id"), nullable=False, index=True),
    Column("sequence", Integer, nullable=False),
    Column("cabin", String, nullable=False),
    Column("status", String, nullable=False),  # booked | flown | cancelled
)

payments = Table(
    "payments",
    metadata,
    Column("payment_id", Integer, primary_key=True, autoincrement=True),
    Column("reservation_id", String, ForeignKey("reservations.reservation_id"), nullable=False, index=True),
    Column("kind", String, nullable=False),  # charge | refund
    Column("method", String, nullable=False),  # card | travel_credit
    Column("amount", Float, nullable=False),
    Column("purpose", String, nullable=False),  # fare | change | bags | refund
    Column("created_at", String, nullable=False),
)

travel_credits = Table(
    "travel_credits",
    metadata,
    Column("credit_id", Integer, primary_key=True, autoincrement=True),
    Column("customer_id", String, ForeignKey("customers.customer_id"), nullable=False, index=True),
    Column("source_reservation_id", String, nullable=False),
    Column("amount", Float, nullable=False),
    Column("status", String, nullable=False),  # active | used | expired
    Column("expires", String, nullable=False),
)

baggage = Table(
    "baggage",
    metadata,
    Column("bag_id", Integer, primary_key=True, autoincrement=True),
    Column("reservation_id", String, ForeignKey("reservations.reservation_id"), nullable=False, index=True),
    Column("passenger_id", String, ForeignKey("reservation_passengers.passenger_id"), nullable=False),
    Column("fee", Float, nullable=False),
    Column("created_at", String, nullable=False),
)

compensation_vouchers = Table(
    "compensation_vouchers",
    metadata,
    Column("voucher_id", Integer, primary_key=True, autoincrement=True),
    Column("customer_id", String, ForeignKey("customers.customer_id"), nullable=False, index=True),
    Column("segment_id", String, ForeignKey("segments.segment_id"), nullable=False, index=True),
    Column("amount", Float, nullable=False),
    Column("reason", String, nullable=False),
    Column("created_at", String, nullable=False),
)

notes = Table(
    "notes",
    metadata,
    Column("note_id", Integer, primary_key=True, autoincrement=True),
    Column("customer_id", String, nullable=True),
    Column("kind", String, nullable=False),  # transfer
    Column("body", Text, nullable=False),
    Column("created_at", String, nullable=False),
)

TODAY = "2026-06-10"
NOW = "2026-06-10T12:00:00"
"""The sandbox's fixed clock: the 24-hour window, flown segments and timestamps are computed from it."""
