"""Task family: equipment and credentials (a broken laptop, an unused license, a lost MFA device)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection

from passhat.sandbox.agents import ReferenceRun
from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.data import Intent, data_for, identity, requester_for, script_for
from passhat.sandbox.domains.consulting.effects import Call, call, intent_check
from passhat.sandbox.domains.consulting.steps import read, run_steps, subject

Rows = Sequence[Mapping[str, Any]]


def replacement_calls(employee_id: str, old: str, available: Rows) -> list[Call]:
    """The broken laptop back to repair (needed first: one laptop per person), then the lowest-numbered
    available laptop of the standard model handed over."""
    spares = sorted(d["device_id"] for d in available if d["kind"] == "laptop" and d["model"] == m.STANDARD_LAPTOP)
    returned = call("reclaim_device", {"employee_id": employee_id, "device_id": old, "condition": "broken"})
    sibling = {"employee_id": employee_id, "device_id": spares[1]} if len(spares) > 1 else None
    return [
        call("assign_device", {"employee_id": employee_id, "device_id": spares[0]}, needs=returned, sibling=sibling)
    ]


def reclaim_calls(employee_id: str, product: str, seats: Rows) -> list[Call]:
    """The seat of the product reclaimed (a wrong-entity agent reclaims another of their seats)."""
    active = [s for s in seats if s["status"] == "active"]
    mine = next(s for s in active if s["product"] == product)
    others = [s for s in active if s["seat_id"] != mine["seat_id"]]
    sibling = {"employee_id": employee_id, "seat_id": others[0]["seat_id"]} if others else None
    return [
        call(
            "reclaim_license_seat",
            {"employee_id": employee_id, "seat_id": mine["seat_id"]},
            sibling=sibling,
            pool_id=mine["pool_id"],
        )
    ]


def mfa_calls(employee_id: str, lost: str, devices: Rows) -> list[Call]:
    """An MFA reset: the lost device revoked (not their other one), then a new enrollment required."""
    active = [d for d in devices if d["status"] == "active"]
    mine = next(d for d in active if d["label"] == lost)
    others = [d for d in active if d["mfa_id"] != mine["mfa_id"]]
    sibling = {"employee_id": employee_id, "mfa_id": others[0]["mfa_id"]} if others else None
    return [
        call("revoke_mfa_device", {"employee_id": employee_id, "mfa_id": mine["mfa_id"]}, sibling=sibling),
        call("require_mfa_enrollment", {"employee_id": employee_id}),
    ]


def replacement_candidates(connection: Connection) -> list[Intent]:
    """Active staff with a laptop, which broke."""
    data = data_for(connection)
    laptops = {d["device_id"] for d in data.rows("devices", kind="laptop")}
    available = data.rows("devices", status="available")
    found: list[Intent] = []
    for employee in data.staff(status="active"):
        held = [
            a["device_id"]
            for a in data.of("device_assignments", employee["employee_id"], status="active")
            if a["device_id"] in laptops
        ]
        if held and employee["manager_id"]:
            calls = replacement_calls(employee["employee_id"], held[0], available)
            found.append(
                {**identity(requester_for(data, employee, "laptop"), employee), "device_id": held[0], "calls": calls}
            )
    return found


def reclaim_candidates(connection: Connection) -> list[Intent]:
    """Staff holding two or more seats who no longer need one of them (not the office suite)."""
    data = data_for(connection)
    products = {p["pool_id"]: p["product"] for p in data.tables["license_pools"]}
    found: list[Intent] = []
    for employee in data.staff(status="active"):
        seats = [
            {**s, "product": products[s["pool_id"]]}
            for s in data.of("license_seats", employee["employee_id"], status="active")
        ]
        options = [s["product"] for s in seats if s["pool_id"] != m.EVERYONE_POOL]
        if len(seats) < 2 or not options or not employee["manager_id"]:
            continue
        product = random.Random(f"reclaim/{employee['employee_id']}").choice(options)
        found.append(
            {
                **identity(requester_for(data, employee, "reclaim"), employee),
                "product": product,
                "calls": reclaim_calls(employee["employee_id"], product, seats),
            }
        )
    return found


def mfa_candidates(connection: Connection) -> list[Intent]:
    """Staff with an authenticator app and a hardware key, who lost the phone with the app."""
    data = data_for(connection)
    found: list[Intent] = []
    for employee in data.staff(status="active"):
        devices = data.of("mfa_devices", employee["employee_id"], status="active")
        apps = [d for d in devices if d["kind"] == "authenticator_app"]
        if len(devices) < 2 or not apps or not employee["manager_id"]:
            continue
        found.append(
            {
                **identity(requester_for(data, employee, "mfa"), employee),
                "lost_device": apps[0]["label"],
                "calls": mfa_calls(employee["employee_id"], apps[0]["label"], devices),
            }
        )
    return found


def replacement_script(intent: Mapping[str, Any]) -> CustomerScript:
    return script_for(
        intent,
        f"Replace {intent['employee_name']}'s broken laptop {intent['device_id']}.",
        f"Hi, {intent['employee_name']}'s laptop {intent['device_id']} is broken. Can they get a replacement?",
        "device_id",
        stated=("device_id",),
    )


def reclaim_script(intent: Mapping[str, Any]) -> CustomerScript:
    return script_for(
        intent,
        f"Free {intent['employee_name']}'s {intent['product']} license: they no longer need it.",
        f"Hello, {intent['employee_name']} no longer needs their {intent['product']} license. Please reclaim it.",
        "product",
        stated=("product",),
    )


def mfa_script(intent: Mapping[str, Any]) -> CustomerScript:
    return script_for(
        intent,
        f"Reset {intent['employee_name']}'s MFA: they lost their {intent['lost_device']}.",
        f"Hi, {intent['employee_name']} lost their {intent['lost_device']} with the authenticator app. "
        "Can you reset their MFA?",
        "lost_device",
        stated=("lost_device",),
    )


check = intent_check
"""The task's check: every call's rows, an audit-log row per write, nothing else written."""


async def replace_laptop(run: ReferenceRun) -> None:
    """Verify, check the broken laptop is theirs, find the replacement, then swap (return first)."""
    employee = await subject(run)
    e = employee["employee_id"]
    old = str((await run.ask("Which laptop is broken (its device id)?", "device_id"))["device_id"])
    held = await read(run, "get_employee_devices", employee_id=e)
    if not any(d["device_id"] == old for d in held["devices"]):
        await run.finish(f"I'm sorry, {old} is not assigned to {employee['first_name']}, so I cannot replace it.")
    available = await read(run, "find_devices", status="available", model=m.STANDARD_LAPTOP)
    await run_steps(run, replacement_calls(e, old, available["devices"]), f"replace {old}")
    await run.finish(f"Done: {old} is with repair and {employee['first_name']} has a replacement laptop.")


async def reclaim_license(run: ReferenceRun) -> None:
    """Verify, find the seat of the product, reclaim it."""
    employee = await subject(run)
    product = str((await run.ask("Which product's license should I reclaim?", "product"))["product"])
    seats = await read(run, "get_license_seats", employee_id=employee["employee_id"])
    if not any(s["product"] == product and s["status"] == "active" for s in seats["seats"]):
        await run.finish(
            f"I'm sorry, {employee['first_name']} holds no {product} seat, so there is nothing to reclaim."
        )
    await run_steps(run, reclaim_calls(employee["employee_id"], product, seats["seats"]), f"reclaim the {product} seat")
    await run.finish(f"Done: the {product} seat is back in its pool.")


async def reset_mfa(run: ReferenceRun) -> None:
    """Verify the requester first, find the lost device, revoke it and require a new enrollment."""
    employee = await subject(run)
    lost = str((await run.ask("Which MFA device was lost?", "lost_device"))["lost_device"])
    account = await read(run, "get_directory_account", employee_id=employee["employee_id"])
    if not any(d["label"] == lost and d["status"] == "active" for d in account["mfa_devices"]):
        await run.finish(f"I'm sorry, {employee['first_name']} has no active MFA device called {lost}.")
    await run_steps(run, mfa_calls(employee["employee_id"], lost, account["mfa_devices"]), "reset their MFA")
    await run.finish(
        f"Done: the {lost} is revoked and {employee['first_name']} will enrol a new device at next sign-in."
    )
