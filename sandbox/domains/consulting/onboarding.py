"""Task family: joining the firm (a consultant, a contractor, a rehire), a long chain across most systems.

The policy's provisioning list is one function per task (`onboarding_calls`, `rehire_calls`): the scenario
generator feeds it the starting state to build the check, the reference plan feeds it what the tools returned.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection

from passhat.sandbox.agents import ReferenceRun
from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.data import FirmData, Intent, data_for, identity, requester_for, script_for
from passhat.sandbox.domains.consulting.effects import Call, call, intent_check
from passhat.sandbox.domains.consulting.steps import read, run_steps, subject


def member(employee_id: str, group_id: str, sibling: str | None = None) -> Call:
    """Add to a group."""
    other = {"employee_id": employee_id, "group_id": sibling} if sibling else None
    return call("add_group_member", {"employee_id": employee_id, "group_id": group_id}, sibling=other)


def seat(employee_id: str, pool_id: str) -> Call:
    """Assign a license seat."""
    return call("assign_license_seat", {"employee_id": employee_id, "pool_id": pool_id})


def status(tool: str, employee_id: str, value: str, *, needs: Call | None = None) -> Call:
    """Set a per-person account's status."""
    return call(tool, {"employee_id": employee_id, "status": value}, needs=needs)


def device(employee_id: str, device_id: str, spare: str | None) -> Call:
    """Hand over the reserved laptop (a wrong-entity agent hands over a spare one)."""
    other = {"employee_id": employee_id, "device_id": spare} if spare else None
    return call("assign_device", {"employee_id": employee_id, "device_id": device_id}, sibling=other)


def onboarding_calls(employee: Mapping[str, Any], reserved: str, spare: str | None) -> list[Call]:
    """What a new hire gets, in order: laptop, badge, account and mailbox, groups, VPN, chat, tracker,
    licenses, courses, expenses and, for engineering roles, code hosting (contractors get less)."""
    e, role = employee["employee_id"], employee["role"]
    name = f"{employee['first_name']} {employee['last_name']}"
    contractor = employee["employment_type"] == "contractor"
    expires = employee["end_date"] if contractor else None
    account = call(
        "create_directory_account", {"employee_id": e}, account_id=f"acc-{e}", display_name=name, expires_on=expires
    )
    calls = [
        device(e, reserved, spare),
        call("issue_badge", {"employee_id": e, "site": employee["location"]}, printed_name=name, expires_on=expires),
        call("create_mailbox", {"employee_id": e}, needs=account, address=employee["work_email"]),
        member(e, m.EVERYONE_GROUP),
        member(e, m.role_group(role)),
    ]
    if not contractor:
        calls += [
            member(e, m.department_group(employee["department"])),
            call("create_vpn_profile", {"employee_id": e, "region": m.SITES[employee["location"]]}),
        ]
    calls += [
        call("create_chat_account", {"employee_id": e}, display_name=name),
        call("create_tracker_account", {"employee_id": e}, display_name=name),
        seat(e, m.EVERYONE_POOL),
        call("enroll_in_course", {"employee_id": e, "course_id": m.SECURITY_COURSE}),
    ]
    if not contractor:
        calls += [
            seat(e, str(m.ROLES[role]["pool"])),
            call("enroll_in_course", {"employee_id": e, "course_id": m.role_course(role)}),
            call(
                "create_expense_profile",
                {
                    "employee_id": e,
                    "cost_center": m.DEPARTMENTS[employee["department"]],
                    "approver_id": employee["manager_id"],
                },
            ),
        ]
    if m.ROLES[role]["engineering"]:
        calls.append(call("grant_repo_access", {"employee_id": e, "permission": "write"}))
    return calls


def rehire_calls(employee: Mapping[str, Any], reserved: str, spare: str | None) -> list[Call]:
    """A former employee back: HRIS rehire first, then every disabled account active again, groups, licenses."""
    e, role = employee["employee_id"], employee["role"]
    rehired = call(
        "set_employment_status", {"employee_id": e, "status": "active", "effective_date": m.TODAY}, kind="rehire"
    )
    calls = [device(e, reserved, spare), status("set_account_status", e, "active", needs=rehired)]
    for tool in (
        "set_mailbox_status",
        "set_chat_account_status",
        "set_tracker_account_status",
        "set_vpn_profile_status",
        "set_badge_status",
    ):
        calls.append(status(tool, e, "active"))
    calls += [
        member(e, m.EVERYONE_GROUP),
        member(e, m.role_group(role)),
        member(e, m.department_group(employee["department"])),
        seat(e, m.EVERYONE_POOL),
        seat(e, str(m.ROLES[role]["pool"])),
        status("set_expense_profile_status", e, "active"),
        status("set_payroll_status", e, "active"),
    ]
    if m.ROLES[role]["engineering"]:
        calls.append(call("grant_repo_access", {"employee_id": e, "permission": "write"}))
    return calls


def _spare(data: FirmData) -> str | None:
    spares = data.rows("devices", status="available", model=m.STANDARD_LAPTOP, kind="laptop")
    return spares[0]["device_id"] if spares else None


def _candidates(connection: Connection, status_: str, kind: str, rehire: bool) -> list[Intent]:
    data = data_for(connection)
    found: list[Intent] = []
    for employee in data.staff(status=status_, employment_type=kind):
        reserved = data.rows("devices", reserved_for=employee["employee_id"], status="reserved")
        if not reserved:
            continue
        requester = requester_for(data, employee, "rehire" if rehire else "onboard", hr_only=rehire)
        build = rehire_calls if rehire else onboarding_calls
        found.append(
            {**identity(requester, employee), "calls": build(employee, reserved[0]["device_id"], _spare(data))}
        )
    return found


def consultant_candidates(connection: Connection) -> list[Intent]:
    """Every new hire (an employee) waiting to start, with their reserved laptop."""
    return _candidates(connection, "pending_start", "employee", False)


def contractor_candidates(connection: Connection) -> list[Intent]:
    """Every new contractor waiting to start, with their reserved laptop."""
    return _candidates(connection, "pending_start", "contractor", False)


def rehire_candidates(connection: Connection) -> list[Intent]:
    """Every former employee (not a contractor) with a laptop reserved for their return."""
    return _candidates(connection, "terminated", "employee", True)


def onboarding_script(intent: Mapping[str, Any]) -> CustomerScript:
    name = intent["employee_name"]
    return script_for(
        intent,
        f"Get {name} ({intent['employee_id']}) set up in every system before they start.",
        f"Hi, {name} joins us soon. Can you set up everything they need?",
    )


def rehire_script(intent: Mapping[str, Any]) -> CustomerScript:
    name = intent["employee_name"]
    return script_for(
        intent,
        f"Bring {name} ({intent['employee_id']}) back: they are rehired today.",
        f"Hello, we are rehiring {name} starting today. Please restore their access.",
    )


check = intent_check
"""The task's check: every call's rows, an audit-log row per write, nothing else written."""


async def _reserved(run: ReferenceRun, employee_id: str) -> tuple[str, str | None]:
    devices = await read(run, "get_employee_devices", employee_id=employee_id)
    if not devices["reserved"]:
        await run.finish("I'm sorry, no laptop is reserved for them yet, so I cannot complete the setup.")
    spares = await read(run, "find_devices", status="available", model=m.STANDARD_LAPTOP)
    return devices["reserved"][0]["device_id"], (spares["devices"][0]["device_id"] if spares["devices"] else None)


async def onboard(run: ReferenceRun) -> None:
    """Verify the requester, check the new hire is pending start, then provision every system in order."""
    employee = await subject(run)
    if employee["status"] != "pending_start":
        await run.finish(f"I'm sorry, HRIS shows {employee['employee_id']} as {employee['status']}, not a new hire.")
    reserved, spare = await _reserved(run, employee["employee_id"])
    await read(run, "list_groups", kind="role")
    await read(run, "list_license_pools")
    await run_steps(run, onboarding_calls(employee, reserved, spare), f"onboard {employee['first_name']}")
    await run.finish(f"Done: {employee['first_name']} {employee['last_name']} is set up in every system.")


async def rehire(run: ReferenceRun) -> None:
    """Verify the requester, check the person left, record the rehire and restore their access."""
    employee = await subject(run)
    if employee["status"] != "terminated":
        await run.finish(
            f"I'm sorry, HRIS shows {employee['employee_id']} as {employee['status']}, not a former employee."
        )
    reserved, spare = await _reserved(run, employee["employee_id"])
    await read(run, "get_directory_account", employee_id=employee["employee_id"])
    await run_steps(run, rehire_calls(employee, reserved, spare), f"rehire {employee['first_name']}")
    await run.finish(f"Done: {employee['first_name']} {employee['last_name']} is rehired and their access restored.")
