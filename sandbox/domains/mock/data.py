"""The mock domain's seeded rows, read for the scenario generators, and the words its customers answer to."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from functools import partial
from typing import Any

from sqlalchemy import Connection, select

from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.mock import models as m

ASKED_AS: Mapping[str, tuple[str, ...]] = {"email": ("email", "library card"), "titles": ("which book", "title")}

library_script = partial(CustomerScript, asked_as=ASKED_AS)
"""A CustomerScript in the library's words."""


def members_with_loans(connection: Connection) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Every member with their loans (sorted by id), in member order."""
    members = [dict(r) for r in connection.execute(select(m.members).order_by(m.members.c.member_id)).mappings()]
    loans: dict[str, list[dict[str, Any]]] = {}
    for row in connection.execute(select(m.loans).order_by(m.loans.c.loan_id)).mappings():
        loans.setdefault(row["member_id"], []).append(dict(row))
    return [(member, loans.get(member["member_id"], [])) for member in members]


def renewed_due(loan: Mapping[str, Any], weeks: int) -> str:
    """The due date after renewing `loan` by `weeks`."""
    return (dt.date.fromisoformat(loan["due"]) + dt.timedelta(weeks=weeks)).isoformat()


def renewable(loan: Mapping[str, Any]) -> bool:
    """Whether the loan can still be renewed."""
    return int(loan["renewals"]) < m.RENEWAL_LIMIT
