"""The mock domain's two tables: library members and their loans."""

from __future__ import annotations

from sqlalchemy import Column, Integer, MetaData, String, Table

TODAY = "2026-06-01"
RENEWAL_LIMIT = 2
"""A loan can be renewed at most this many times."""

metadata = MetaData()

members = Table(
    "members",
    metadata,
    Column("member_id", String, primary_key=True),
    Column("email", String, nullable=False, unique=True),
    Column("name", String, nullable=False),
)

loans = Table(
    "loans",
    metadata,
    Column("loan_id", String, primary_key=True),
    Column("member_id", String, nullable=False),
    Column("title", String, nullable=False),
    Column("due", String, nullable=False),
    Column("renewals", Integer, nullable=False),
)
