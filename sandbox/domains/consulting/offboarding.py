"""Task family: leaving and pausing (offboarding revokes everything the same day; a leave suspends access)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection

from passhat.sandbox.agents import ReferenceRun
from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.data import Intent, data_for, identity, requester_for, script_for
from passhat.sandbox.domains.consulting.effects import Call, call, intent_check
from passhat.sandbox.domains.consulting.onboarding import status
from passhat.sandbox.domains.consulting.steps import read, run_steps, subject

Rows = Sequence[Mapping[str, Any]]


def offboarding_calls(
    employee: Mapping[str, Any],
    devices: Rows,
    seats: Rows,
    memberships: Rows,
    repos: Rows,
    permissions: Rows,
    staffing: Rows,
    lines: Rows,
) -> list[Call]:
    """Everything revoked today: devices and seats reclaimed, groups left, the account disabled after the HRIS
    termination, every other account off, code, shares, staffing and timesheets closed, last pay set."""
    e = employee["employee_id"]
    contractor = employee["employment_type"] == "contractor"
    terminated = call(
        "set_employment_status",
        {"employee_id": e, "status": "terminated", "effective_date": m.TODAY},
        kind="termination",
    )
    calls = [
        call("reclaim_device", {"employee_id": e, "device_id": d["device_id"], "condition": "working"}) for d in devices
    ]
    calls += [
        call("reclaim_license_seat", {"employee_id": e, "seat_id": s["seat_id"]}, pool_id=s["pool_id"])
        for s in seats
        if s["status"] == "active"
    ]
    calls += [call("remove_group_member", {"employee_id": e, "group_id": g["group_id"]}) for g in memberships]
    calls += [
        status("set_account_status", e, "disabled", needs=terminated),
        status("set_mailbox_status", e, "disabled"),
        status("set_chat_account_status", e, "deactivated"),
        status("set_tracker_account_status", e, "deactivated"),
    ]
    if not contractor:
        calls.append(status("set_vpn_profile_status", e, "revoked"))
    calls += [
        call("revoke_repo_access", {"employee_id": e, "access_id": r["access_id"]}, org=r["org"])
        for r in repos
        if r["status"] == "active"
    ]
    calls += [
        call("revoke_share_permission", {"employee_id": e, "permission_id": p["permission_id"]}, share_id=p["share_id"])
        for p in permissions
        if p["status"] == "active"
    ]
    calls += [
        call(
            "end_staffing_assignment",
            {"employee_id": e, "assignment_id": a["assignment_id"]},
            project_id=a["project_id"],
        )
        for a in staffing
        if a["status"] == "active"
    ]
    calls += [
        call("close_timesheet_line", {"employee_id": e, "entry_id": t["entry_id"]}, code=t["code"])
        for t in lines
        if t["status"] == "open"
    ]
    calls.append(status("set_badge_status", e, "disabled"))
    if not contractor:
        calls += [status("set_expense_profile_status", e, "closed"), status("set_payroll_status", e, "final")]
    return calls


def leave_calls(employee: Mapping[str, Any]) -> list[Call]:
    """A leave of absence: badge, account (after HRIS records the leave), VPN and pay suspended."""
    e = employee["employee_id"]
    leave = call(
        "set_employment_status", {"employee_id": e, "status": "on_leave", "effective_date": m.TODAY}, kind="leave"
    )
    return [
        status("set_badge_status", e, "suspended"),
        status("set_account_status", e, "suspended", needs=leave),
        status("set_vpn_profile_status", e, "suspended"),
        status("set_payroll_status", e, "unpaid_leave"),
    ]


def offboarding_candidates(connection: Connection) -> list[Intent]:
    """Every active member of staff with a manager (not the department heads)."""
    data = data_for(connection)
    found: list[Intent] = []
    for employee in data.staff(status="active"):
        if employee["manager_id"] is None:
            continue
        e = employee["employee_id"]
        held = data.of("device_assignments", e, status="active")
        calls = offboarding_calls(
            employee,
            held,
            data.of("license_seats", e),
            data.of("group_memberships", e),
            data.of("repo_access", e),
            data.of("share_permissions", e),
            data.of("staffing_assignments", e),
            data.of("timesheet_entries", e),
        )
        found.append({**identity(requester_for(data, employee, "offboard"), employee), "calls": calls})
    return found


def leave_candidates(connection: Connection) -> list[Intent]:
    """Every active employee (not a contractor) with a manager."""
    data = data_for(connection)
    return [
        {**identity(requester_for(data, employee, "leave"), employee), "calls": leave_calls(employee)}
        for employee in data.staff(status="active", employment_type="employee")
        if employee["manager_id"] is not None
    ]


def offboarding_script(intent: Mapping[str, Any]) -> CustomerScript:
    name = intent["employee_name"]
    return script_for(
        intent,
        f"Offboard {name} ({intent['employee_id']}): today is their last day.",
        f"Hi, today is {name}'s last day with us. Please offboard them completely.",
    )


def leave_script(intent: Mapping[str, Any]) -> CustomerScript:
    name = intent["employee_name"]
    return script_for(
        intent,
        f"Put {name} ({intent['employee_id']}) on a leave of absence from today.",
        f"Hello, {name} starts a leave of absence today. Can you suspend their access?",
    )


check = intent_check
"""The task's check: every call's rows, an audit-log row per write, nothing else written."""


async def offboard(run: ReferenceRun) -> None:
    """Verify the requester, read everything the person holds in every system, then revoke it all."""
    employee = await subject(run)
    e = employee["employee_id"]
    if employee["status"] != "active":
        await run.finish(f"I'm sorry, HRIS shows {e} as {employee['status']}, so there is nothing to offboard.")
    devices = await read(run, "get_employee_devices", employee_id=e)
    seats = await read(run, "get_license_seats", employee_id=e)
    groups = await read(run, "get_group_memberships", employee_id=e)
    repos = await read(run, "get_repo_access", employee_id=e)
    shares = await read(run, "get_share_permissions", employee_id=e)
    staffing = await read(run, "get_staffing", employee_id=e)
    lines = await read(run, "get_timesheet_lines", employee_id=e)
    calls = offboarding_calls(
        employee,
        devices["devices"],
        seats["seats"],
        groups["memberships"],
        repos["access"],
        shares["permissions"],
        staffing["assignments"],
        lines["lines"],
    )
    await run_steps(run, calls, f"offboard {employee['first_name']}")
    await run.finish(
        f"Done: {employee['first_name']} {employee['last_name']} is offboarded; every access is revoked "
        "and the devices and licenses reclaimed."
    )


async def leave(run: ReferenceRun) -> None:
    """Verify the requester, record the leave in HRIS and suspend badge, account, VPN and pay."""
    employee = await subject(run)
    if employee["status"] != "active" or employee["employment_type"] != "employee":
        await run.finish(f"I'm sorry, a leave of absence applies to active employees; HRIS shows {employee['status']}.")
    await read(run, "get_directory_account", employee_id=employee["employee_id"])
    await run_steps(run, leave_calls(employee), f"start {employee['first_name']}'s leave")
    await run.finish(
        f"Done: {employee['first_name']}'s leave is recorded and their access suspended until they return."
    )
