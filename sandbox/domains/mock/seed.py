"""The mock domain's seed: members with one to five loans each, deterministic in (seed, size)."""

from __future__ import annotations

import datetime as dt
import random

from sqlalchemy import Connection, insert

from passhat.sandbox.domain import DomainError
from passhat.sandbox.domains.mock import models as m

SIZES = {"small": 40, "default": 400}
TITLES = ("Dune", "Emma", "Ulysses", "Beloved", "Middlemarch", "Solaris", "Kindred", "Walden")
NAMES = ("Ada", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal", "Ivy", "Jo")


def seed(connection: Connection, seed: int = 0, size: str = "small") -> None:
    """Insert the members and loans of one seeded library."""
    if size not in SIZES:
        raise DomainError(f"no seed size {size!r} for the mock domain; sizes: {', '.join(SIZES)}")
    rng = random.Random(f"mock/{seed}/{size}")
    today = dt.date.fromisoformat(m.TODAY)
    members, loans = [], []
    for index in range(SIZES[size]):
        member_id = f"M{index:04d}"
        members.append(
            {"member_id": member_id, "email": f"reader{index}@example.org", "name": f"{rng.choice(NAMES)} {index}"}
        )
        for number, title in enumerate(rng.sample(TITLES, rng.randint(1, 5))):
            due = today + dt.timedelta(days=rng.randint(1, 20))
            loans.append(
                {
                    "loan_id": f"L{index:04d}-{number}",
                    "member_id": member_id,
                    "title": title,
                    "due": due.isoformat(),
                    "renewals": rng.choice((0, 0, 1, 2)),
                }
            )
    connection.execute(insert(m.members), members)
    connection.execute(insert(m.loans), loans)
