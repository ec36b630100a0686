"""Task family: changes to a person's job or record (role, department, contract end, legal name).

HRIS changes first; every other system follows it (the tools refuse a change HRIS does not yet show).
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection

from passhat.sandbox.agents import ReferenceRun
from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.data import Intent, data_for, identity, requester_for, script_for
from passhat.sandbox.domains.consulting.effects import Call, call, intent_check
from passhat.sandbox.domains.consulting.onboarding import member, seat
from passhat.sandbox.domains.consulting.steps import read, run_steps, subject

Rows = Sequence[Mapping[str, Any]]
NEW_LAST_NAMES = (
    "Whitfield",
    "Aalto",
    "Brennan",
    "Castellano",
    "Duarte",
    "Engstrom",
    "Farouk",
    "Grieve",
    "Holm",
    "Quint",
)


def _remove(employee_id: str, group_id: str, sibling: str | None) -> Call:
    other = {"employee_id": employee_id, "group_id": sibling} if sibling else None
    return call("remove_group_member", {"employee_id": employee_id, "group_id": group_id}, sibling=other)


def role_calls(employee: Mapping[str, Any], new_role: str, seats: Rows, repos: Rows) -> list[Call]:
    """Swap groups and licenses: leave the old role's group and seat, record the role in HRIS (needed by the
    new role's seat), join the new role's group and course; code hosting follows engineering roles."""
    e, old = employee["employee_id"], employee["role"]
    active = {s["pool_id"]: s for s in seats if s["status"] == "active"}
    old_seat = active[str(m.ROLES[old]["pool"])]
    office = active.get(m.EVERYONE_POOL)
    changed = call("change_role", {"employee_id": e, "role": new_role, "effective_date": m.TODAY})
    calls = [
        _remove(e, m.role_group(old), m.department_group(employee["department"])),
        call(
            "reclaim_license_seat",
            {"employee_id": e, "seat_id": old_seat["seat_id"]},
            sibling={"employee_id": e, "seat_id": office["seat_id"]} if office else None,
            pool_id=old_seat["pool_id"],
        ),
        {**seat(e, str(m.ROLES[new_role]["pool"])), "needs": changed},
        member(e, m.role_group(new_role)),
        call("enroll_in_course", {"employee_id": e, "course_id": m.role_course(new_role)}),
    ]
    engineering = (bool(m.ROLES[old]["engineering"]), bool(m.ROLES[new_role]["engineering"]))
    if engineering == (False, True):
        calls.append(call("grant_repo_access", {"employee_id": e, "permission": "write"}))
    if engineering == (True, False):
        calls += [
            call("revoke_repo_access", {"employee_id": e, "access_id": r["access_id"]}, org=r["org"])
            for r in repos
            if r["status"] == "active"
        ]
    return calls


def transfer_calls(employee: Mapping[str, Any], department: str, manager_id: str) -> list[Call]:
    """A department transfer: department groups swapped, HRIS transfer (needed by the expense approver), the
    expense profile and payroll on the new cost center."""
    e = employee["employee_id"]
    center = m.DEPARTMENTS[department]
    moved = call(
        "transfer_department",
        {"employee_id": e, "department": department, "manager_id": manager_id, "effective_date": m.TODAY},
        detail=f"{department} under {manager_id}",
    )
    return [
        _remove(e, m.department_group(employee["department"]), m.role_group(employee["role"])),
        member(e, m.department_group(department)),
        call(
            "update_expense_profile", {"employee_id": e, "cost_center": center, "approver_id": manager_id}, needs=moved
        ),
        call("set_payroll_cost_center", {"employee_id": e, "cost_center": center}),
    ]


def extension_calls(employee: Mapping[str, Any], end_date: str) -> list[Call]:
    """A contractor's extension: the HRIS end date first, then account and badge expire on it."""
    e = employee["employee_id"]
    return [
        call("extend_contract", {"employee_id": e, "end_date": end_date}),
        call("set_account_expiry", {"employee_id": e, "expires_on": end_date}),
        call("set_badge_expiry", {"employee_id": e, "expires_on": end_date}),
    ]


def name_calls(employee: Mapping[str, Any], first: str, last: str, mailbox: Mapping[str, Any]) -> list[Call]:
    """A legal name change, propagated to every system that shows the name."""
    e = employee["employee_id"]
    name = f"{first} {last}"
    address = f"{first}.{last}@firm.example".lower()
    aliases = ",".join(a for a in (mailbox["aliases"], mailbox["address"]) if a)
    calls = [
        call("change_legal_name", {"employee_id": e, "first_name": first, "last_name": last}, target=name, detail=name),
        call("rename_account", {"employee_id": e, "display_name": name}),
        call("rename_mailbox", {"employee_id": e, "new_address": address}, aliases=aliases),
        call("rename_chat_account", {"employee_id": e, "display_name": name}),
        call("rename_tracker_account", {"employee_id": e, "display_name": name}),
        call("reprint_badge", {"employee_id": e, "printed_name": name}),
    ]
    if employee["employment_type"] == "employee":
        calls.append(call("set_payroll_legal_name", {"employee_id": e, "legal_name": name}))
    return calls


def later(date: str, days: int) -> str:
    """`date` plus `days`."""
    return (dt.date.fromisoformat(date) + dt.timedelta(days=days)).isoformat()


def _reports(connection: Connection) -> list[dict[str, Any]]:
    data = data_for(connection)
    return [
        e
        for e in data.staff(status="active", employment_type="employee")
        if e["manager_id"] and e["role"] != "hr_partner"
    ]


def role_candidates(connection: Connection) -> list[Intent]:
    """Active employees moving to another role (not HR) whose seat they do not hold yet."""
    data = data_for(connection)
    found: list[Intent] = []
    for employee in _reports(connection):
        e = employee["employee_id"]
        held = {s["pool_id"] for s in data.of("license_seats", e, status="active")}
        options = [r for r in m.ROLES if r not in (employee["role"], "hr_partner") and m.ROLES[r]["pool"] not in held]
        if not options or str(m.ROLES[employee["role"]]["pool"]) not in held:
            continue
        new_role = random.Random(f"role/{e}").choice(options)
        calls = role_calls(employee, new_role, data.of("license_seats", e), data.of("repo_access", e))
        found.append(
            {**identity(requester_for(data, employee, "role"), employee), "new_role": new_role, "calls": calls}
        )
    return found


def transfer_candidates(connection: Connection) -> list[Intent]:
    """Active employees moving to another department, under one of its managers."""
    data = data_for(connection)
    found: list[Intent] = []
    for employee in _reports(connection):
        rng = random.Random(f"transfer/{employee['employee_id']}")
        department = rng.choice([d for d in m.DEPARTMENTS if d not in (employee["department"], "people")])
        heads = [h for h in data.staff(department=department, status="active") if h["manager_id"] is None]
        if not heads:
            continue
        manager = rng.choice(heads)["employee_id"]
        found.append(
            {
                **identity(requester_for(data, employee, "transfer"), employee),
                "new_department": department,
                "new_manager_id": manager,
                "calls": transfer_calls(employee, department, manager),
            }
        )
    return found


def extension_candidates(connection: Connection) -> list[Intent]:
    """Active contractors extended by 90 days."""
    data = data_for(connection)
    found: list[Intent] = []
    for employee in data.staff(status="active", employment_type="contractor"):
        end = later(employee["end_date"], 90)
        found.append(
            {
                **identity(requester_for(data, employee, "extend"), employee),
                "new_end_date": end,
                "calls": extension_calls(employee, end),
            }
        )
    return found


def name_candidates(connection: Connection) -> list[Intent]:
    """Active staff taking a new last name whose new address is free."""
    data = data_for(connection)
    taken = {row["address"] for row in data.tables["mailboxes"]}
    found: list[Intent] = []
    for employee in data.staff(status="active"):
        mailbox = data.one("mailboxes", employee["employee_id"])
        last = random.Random(f"name/{employee['employee_id']}").choice(NEW_LAST_NAMES)
        if (
            mailbox is None
            or f"{employee['first_name']}.{last}@firm.example".lower() in taken
            or employee["manager_id"] is None
        ):
            continue
        found.append(
            {
                **identity(requester_for(data, employee, "name"), employee),
                "new_first_name": employee["first_name"],
                "new_last_name": last,
                "calls": name_calls(employee, employee["first_name"], last, mailbox),
            }
        )
    return found


def role_script(intent: Mapping[str, Any]) -> CustomerScript:
    title = m.ROLES[intent["new_role"]]["title"]
    return script_for(
        intent,
        f"Move {intent['employee_name']} to the {title} role ({intent['new_role']}) from today.",
        f"Hi, {intent['employee_name']} becomes a {title} today. Please update their access.",
        "new_role",
    )


def transfer_script(intent: Mapping[str, Any]) -> CustomerScript:
    return script_for(
        intent,
        f"Transfer {intent['employee_name']} to {intent['new_department']} under {intent['new_manager_id']}.",
        f"Hello, {intent['employee_name']} moves to the {intent['new_department']} department today.",
        "new_department",
        "new_manager_id",
    )


def extension_script(intent: Mapping[str, Any]) -> CustomerScript:
    return script_for(
        intent,
        f"Extend contractor {intent['employee_name']} until {intent['new_end_date']}.",
        f"Hi, we're extending {intent['employee_name']}'s contract. Can you update it?",
        "new_end_date",
    )


def name_script(intent: Mapping[str, Any]) -> CustomerScript:
    return script_for(
        intent,
        f"{intent['employee_name']} is now {intent['new_first_name']} {intent['new_last_name']}: update every system.",
        f"Hello, {intent['employee_name']} has changed their last name. Can you update it everywhere?",
        "new_first_name",
        "new_last_name",
    )


check = intent_check
"""The task's check: every call's rows, an audit-log row per write, nothing else written."""


async def _active(run: ReferenceRun) -> dict[str, Any]:
    employee = await subject(run)
    if employee["status"] != "active":
        await run.finish(
            f"I'm sorry, HRIS shows {employee['employee_id']} as {employee['status']}, so I cannot change this."
        )
    return employee


async def change_role(run: ReferenceRun) -> None:
    """Verify, ask for the new role, read seats and code access, then swap groups, licenses and access."""
    employee = await _active(run)
    role = str((await run.ask("Which role do they move to?", "new_role"))["new_role"])
    if role not in m.ROLES or role == employee["role"]:
        await run.finish(f"I'm sorry, {role} is not a role I can move them to.")
    e = employee["employee_id"]
    seats = await read(run, "get_license_seats", employee_id=e)
    repos = await read(run, "get_repo_access", employee_id=e)
    await read(run, "get_group_memberships", employee_id=e)
    await run_steps(
        run, role_calls(employee, role, seats["seats"], repos["access"]), f"make {employee['first_name']} a {role}"
    )
    await run.finish(
        f"Done: {employee['first_name']} is now {role}; groups, licenses and code access follow the new role."
    )


async def transfer(run: ReferenceRun) -> None:
    """Verify, ask for the department and manager, then move HRIS, groups, expenses and payroll."""
    employee = await _active(run)
    facts = await run.ask(
        "Which department do they move to, and who is their new manager?", "new_department", "new_manager_id"
    )
    department, manager = str(facts["new_department"]), str(facts["new_manager_id"])
    await read(run, "get_expense_profile", employee_id=employee["employee_id"])
    await run_steps(
        run, transfer_calls(employee, department, manager), f"move {employee['first_name']} to {department}"
    )
    await run.finish(
        f"Done: {employee['first_name']} is in {department} under {manager}, "
        f"with expenses and pay on {m.DEPARTMENTS.get(department)}."
    )


async def extend(run: ReferenceRun) -> None:
    """Verify, ask for the new end date, then extend HRIS, the account and the badge."""
    employee = await _active(run)
    if employee["employment_type"] != "contractor":
        await run.finish("I'm sorry, only contractors have an end date to extend.")
    end = str((await run.ask("Until when is the contract extended?", "new_end_date"))["new_end_date"])
    await read(run, "get_directory_account", employee_id=employee["employee_id"])
    await run_steps(run, extension_calls(employee, end), f"extend {employee['first_name']}'s contract")
    await run.finish(f"Done: {employee['first_name']}'s contract, account and badge now run until {end}.")


async def rename(run: ReferenceRun) -> None:
    """Verify, ask for the new name, read the mailbox, then change HRIS and every system that shows the name."""
    employee = await _active(run)
    facts = await run.ask("What is their new name (first and last)?", "new_first_name", "new_last_name")
    first, last = str(facts["new_first_name"]), str(facts["new_last_name"])
    mailbox = await read(run, "get_mailbox", employee_id=employee["employee_id"])
    await run_steps(
        run, name_calls(employee, first, last, mailbox), f"rename {employee['first_name']} to {first} {last}"
    )
    await run.finish(
        f"Done: {first} {last} is the name in HRIS and every system; their old address still receives mail."
    )
