"""The seeded firm as plain dicts for the scenario generators (read once per template), and the customer's words."""

from __future__ import annotations

import random
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlalchemy import Connection, Engine, select

from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.consulting import models as m

Intent = dict[str, Any]
REFUSAL = r"(cannot|can't|can not|unable to|not able to|not permitted|not allowed)"
"""A refusal, as a response pattern."""


@dataclass(frozen=True)
class FirmData:
    """Every row of the starting state: per table, and per employee for the tables that have one."""

    tables: dict[str, list[dict[str, Any]]]
    employees: dict[str, dict[str, Any]]

    def of(self, table: str, employee_id: str, **where: Any) -> list[dict[str, Any]]:
        """The rows of `table` belonging to the employee (and matching `where`), in key order."""
        return [
            row
            for row in self.tables[table]
            if row.get("employee_id") == employee_id and all(row.get(k) == v for k, v in where.items())
        ]

    def one(self, table: str, employee_id: str) -> dict[str, Any] | None:
        """The employee's row of a one-per-person table, if any."""
        rows = self.of(table, employee_id)
        return rows[0] if rows else None

    def rows(self, table: str, **where: Any) -> list[dict[str, Any]]:
        """Rows of `table` matching `where`."""
        return [row for row in self.tables[table] if all(row.get(k) == v for k, v in where.items())]

    def staff(self, **where: Any) -> list[dict[str, Any]]:
        """Employees matching `where`, by id."""
        return [e for _, e in sorted(self.employees.items()) if all(e.get(k) == v for k, v in where.items())]


def load(connection: Connection) -> FirmData:
    """Read the starting state into a FirmData."""
    tables: dict[str, list[dict[str, Any]]] = {}
    for table in m.metadata.sorted_tables:
        key = next(iter(table.primary_key.columns))
        tables[table.name] = [dict(r) for r in connection.execute(select(table).order_by(key)).mappings()]
    return FirmData(tables, {row["employee_id"]: row for row in tables["employees"]})


_CACHE: weakref.WeakKeyDictionary[Engine, FirmData] = weakref.WeakKeyDictionary()


def data_for(connection: Connection) -> FirmData:
    """The starting state behind `connection`, loaded once per template database."""
    engine = connection.engine
    if engine not in _CACHE:
        _CACHE[engine] = load(connection)
    return _CACHE[engine]


def requester_for(data: FirmData, subject: Mapping[str, Any], task: str, *, hr_only: bool = False) -> dict[str, Any]:
    """Who asks for a change to `subject`: their manager when active (unless `hr_only`), else someone in HR."""
    rng = random.Random(f"{task}/{subject['employee_id']}")
    manager = data.employees.get(subject["manager_id"] or "")
    hr = [e for e in data.staff(is_hr=True, status="active") if e["employee_id"] != subject["employee_id"]]
    if manager is not None and manager["status"] == "active" and not hr_only and rng.random() < 0.6:
        return manager
    return rng.choice(hr)


def identity(requester: Mapping[str, Any], subject: Mapping[str, Any]) -> Intent:
    """The intent keys of who asks (their id and work email) and for whom."""
    return {
        "requester_id": requester["employee_id"],
        "requester_email": requester["work_email"],
        "employee_id": subject["employee_id"],
        "employee_name": f"{subject['first_name']} {subject['last_name']}",
    }


ASKED_AS: dict[str, tuple[str, ...]] = {
    "requester_id": ("your employee id", "your own employee id", "your staff id"),
    "requester_email": ("your work email", "your email"),
    "employee_id": (
        "their employee id",
        "the employee's id",
        "employee id of",
        "whom is this",
        "who is this request for",
    ),
    "client_name": ("which client", "client name"),
    "product": ("which product", "which license"),
    "new_role": ("new role", "which role"),
    "new_department": ("new department", "which department"),
    "new_manager_id": ("new manager",),
    "new_end_date": ("new end date", "until when"),
    "new_last_name": ("new last name", "new surname", "new name"),
    "new_first_name": ("new first name", "new name"),
    "device_id": ("which laptop", "device id", "asset"),
    "lost_device": ("which device", "lost device", "which mfa"),
}
"""The words an agent uses to ask for each fact (the scripted customer answers to these)."""

firm_script = partial(CustomerScript, asked_as=ASKED_AS)
"""A CustomerScript in the firm's words."""


def script_for(
    intent: Mapping[str, Any], goal: str, opening: str, *keys: str, stated: tuple[str, ...] = ()
) -> CustomerScript:
    """The requester's script: who they are, whom the ticket is about, and the task's own facts `keys`."""
    facts = {key: intent[key] for key in ("requester_id", "requester_email", "employee_id", *keys)}
    return firm_script(
        goal=goal,
        opening=opening,
        facts=facts,
        stated=stated,
        unknown=("mfa_id", "seat_id", "permission_id", "request_id"),
        subject={"employee_id": intent["employee_id"]},
    )
