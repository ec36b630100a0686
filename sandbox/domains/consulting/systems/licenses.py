"""License manager: license pools (each for some roles) and the seats assigned from them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, insert, select, update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import ConsultingSystem, require


def eligible(pool: dict[str, Any], role: str) -> bool:
    """Whether a role may hold a seat of the pool (`*` is every role)."""
    roles = str(pool["eligible_roles"]).split(",")
    return "*" in roles or role in roles


class Licenses(ConsultingSystem):
    """License pools and seats; a seat needs a directory account and a role the pool is for."""

    NAME = "licenses"

    def _used(self, pool_id: str) -> int:
        used = self.db.execute(
            select(func.count()).where(m.license_seats.c.pool_id == pool_id, m.license_seats.c.status == "active")
        ).scalar()
        return int(used or 0)

    @tool("lookup")
    async def list_license_pools(self) -> dict[str, Any]:
        """Every license pool: product, seats in use and in total, and the roles it is for."""
        return {"pools": [{**pool, "seats_used": self._used(pool["pool_id"])} for pool in self.rows(m.license_pools)]}

    @tool("lookup")
    async def get_license_seats(self, employee_id: str) -> dict[str, Any]:
        """An employee's license seats, each with its product."""
        employee = self._subject(employee_id)
        products = dict(self.db.execute(select(m.license_pools.c.pool_id, m.license_pools.c.product)).all())
        seats = self.rows(m.license_seats, employee_id=employee["employee_id"])
        return {
            "employee_id": employee["employee_id"],
            "seats": [{**s, "product": products.get(s["pool_id"])} for s in seats],
        }

    @tool("write")
    async def assign_license_seat(self, employee_id: str, pool_id: str) -> dict[str, Any]:
        """Assign a seat from a pool to an employee whose HRIS role the pool is for; needs a free seat."""
        require(employee_id=employee_id, pool_id=pool_id)
        employee = self._subject(employee_id)
        self._account_of(employee["employee_id"])
        pool = self._found(m.license_pools, "license pool", pool_id=pool_id.strip())
        if not eligible(pool, employee["role"]):
            raise ToolError(
                "hris_not_updated", f"{pool_id} is for roles {pool['eligible_roles']}; HRIS shows {employee['role']}"
            )
        if self.row(m.license_seats, employee_id=employee["employee_id"], pool_id=pool["pool_id"], status="active"):
            raise ToolError("already_exists", f"{employee_id} already holds a {pool['product']} seat")
        if self._used(pool["pool_id"]) >= pool["total_seats"]:
            raise ToolError("not_permitted", f"no free seats in {pool_id}")
        values = {
            "pool_id": pool["pool_id"],
            "employee_id": employee["employee_id"],
            "assigned_at": m.TODAY,
            "status": "active",
        }
        self._write(
            employee["employee_id"], "assign_license_seat", pool["pool_id"], insert(m.license_seats).values(values)
        )
        return values

    @tool("write")
    async def reclaim_license_seat(self, employee_id: str, seat_id: int) -> dict[str, Any]:
        """Reclaim one of an employee's seats back to its pool."""
        employee = self._subject(employee_id)
        seat = self.row(m.license_seats, seat_id=seat_id, employee_id=employee["employee_id"], status="active")
        if seat is None:
            raise ToolError("no_such_record", f"{employee_id} holds no active seat {seat_id}")
        change = update(m.license_seats).where(m.license_seats.c.seat_id == seat_id).values(status="reclaimed")
        self._write(employee["employee_id"], "reclaim_license_seat", seat["pool_id"], change)
        return {**seat, "status": "reclaimed"}


system = System("licenses", "License manager: license pools and seats.", ("license_pools", "license_seats"), Licenses)
