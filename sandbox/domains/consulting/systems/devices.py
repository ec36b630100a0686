"""Device management: laptops and phones, and who holds which."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, update

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import ConsultingSystem, one_of, require


class Devices(ConsultingSystem):
    """Devices and their assignments: one laptop per person; a reserved device goes to whom it is reserved for."""

    NAME = "devices"

    @tool("lookup")
    async def find_devices(self, status: str, model: str = "") -> dict[str, Any]:
        """Devices in a status (available, reserved, assigned, repair), optionally of one model, by device id."""
        require(status=status)
        one_of("status", status, ("available", "reserved", "assigned", "repair"))
        where: dict[str, Any] = {"status": status}
        if model.strip():
            where["model"] = model.strip()
        return {"devices": self.rows(m.devices, **where)}

    @tool("lookup")
    async def get_employee_devices(self, employee_id: str) -> dict[str, Any]:
        """The devices an employee holds now, and any device reserved for them."""
        employee = self._subject(employee_id)
        held = self.rows(m.device_assignments, employee_id=employee["employee_id"], status="active")
        devices = [
            {**self._found(m.devices, "device", device_id=a["device_id"]), "assigned_at": a["assigned_at"]}
            for a in held
        ]
        return {
            "employee_id": employee["employee_id"],
            "devices": devices,
            "reserved": self.rows(m.devices, reserved_for=employee["employee_id"]),
        }

    @tool("write")
    async def assign_device(self, employee_id: str, device_id: str) -> dict[str, Any]:
        """Hand a device to an employee: an available one, or one reserved for them; one laptop per person."""
        require(employee_id=employee_id, device_id=device_id)
        employee = self._subject(employee_id)
        device = self._found(m.devices, "device", device_id=device_id.strip())
        free = device["status"] == "available" or (
            device["status"] == "reserved" and device["reserved_for"] == employee["employee_id"]
        )
        if not free:
            raise ToolError("not_permitted", f"device {device_id} is {device['status']} and cannot be assigned")
        if device["kind"] == "laptop":
            for held in self.rows(m.device_assignments, employee_id=employee["employee_id"], status="active"):
                if self._found(m.devices, "device", device_id=held["device_id"])["kind"] == "laptop":
                    raise ToolError(
                        "laptop_still_assigned",
                        f"{employee_id} still holds laptop {held['device_id']}: reclaim it first",
                    )
        self._write(
            employee["employee_id"],
            "assign_device",
            device["device_id"],
            update(m.devices)
            .where(m.devices.c.device_id == device["device_id"])
            .values(status="assigned", reserved_for=None),
            insert(m.device_assignments).values(
                device_id=device["device_id"],
                employee_id=employee["employee_id"],
                assigned_at=m.TODAY,
                returned_at=None,
                status="active",
            ),
        )
        return {"employee_id": employee["employee_id"], "device_id": device["device_id"], "status": "assigned"}

    @tool("write")
    async def reclaim_device(self, employee_id: str, device_id: str, condition: str) -> dict[str, Any]:
        """Take a device back from an employee; condition working (back to available) or broken (to repair)."""
        require(employee_id=employee_id, device_id=device_id, condition=condition)
        one_of("condition", condition, ("working", "broken"))
        employee = self._subject(employee_id)
        held = self.row(
            m.device_assignments, employee_id=employee["employee_id"], device_id=device_id.strip(), status="active"
        )
        if held is None:
            raise ToolError("no_such_record", f"{employee_id} does not hold device {device_id}")
        status = "available" if condition == "working" else "repair"
        self._write(
            employee["employee_id"],
            "reclaim_device",
            held["device_id"],
            update(m.device_assignments)
            .where(m.device_assignments.c.assignment_id == held["assignment_id"])
            .values(status="returned", returned_at=m.TODAY),
            update(m.devices).where(m.devices.c.device_id == held["device_id"]).values(status=status),
        )
        return {"employee_id": employee["employee_id"], "device_id": held["device_id"], "device_status": status}


system = System(
    "devices", "Device management: laptops, phones and their assignments.", ("devices", "device_assignments"), Devices
)
