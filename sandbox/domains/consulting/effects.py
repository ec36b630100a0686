"""What each write tool changes, as checks: the expected state of a task is its expected calls' effects.

A task family's `candidates` lists the calls the policy requires (`Call`: tool, arguments, and the values the
check needs that the arguments do not carry, such as a row's key or the name HRIS will record), computed from
the starting state. `calls_check` turns them into `updated` / `inserted` / `deleted` checks, one audit-log row
per call, and a `no_other_writes` guard: every write is also the audit-log row the check expects.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from passhat.checks import Check, all_of, deleted, inserted, no_other_writes, updated
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems import SYSTEMS

Call = dict[str, Any]
"""An expected call: {"tool", "args", "expect"} (`expect` holds check-only values)."""

TOOL_SYSTEM: Mapping[str, str] = {name: system.name for system in SYSTEMS for name in system.tools}


def call(
    tool: str,
    args: Mapping[str, Any],
    *,
    needs: Call | None = None,
    sibling: Mapping[str, Any] | None = None,
    **expect: Any,
) -> Call:
    """An expected call of `tool` with `args`; `expect` holds values only the check needs.

    `needs` is the call this one depends on (made just before it, as its precondition); `sibling` the
    arguments of the same write on another row of the employee (what a wrong-entity agent sends instead).
    """
    made: Call = {"tool": tool, "args": dict(args), "expect": expect}
    if needs is not None:
        made["needs"] = needs
    if sibling is not None:
        made["sibling"] = dict(sibling)
    return made


Effect = Callable[[Mapping[str, Any], Mapping[str, Any], str], tuple[str, list[Check]]]
"""(arguments, expect, requester) -> (audit target, checks of the tables the call changes)."""


def _person(table: str, column: str, key: str = "") -> Effect:
    """A change of one column of the person's row in `table` (the audit target is the new value)."""

    def effect(a: Mapping[str, Any], x: Mapping[str, Any], requester: str) -> tuple[str, list[Check]]:
        value = a[key or column]
        return str(value), [updated(table, {"employee_id": a["employee_id"]}, {column: value})]

    return effect


def _status(table: str) -> Effect:
    return _person(table, "status")


def _new(table: str, target: str, **fixed: Any) -> Effect:
    """A new row of `table` for the person: the arguments, `fixed` values and the expect values named."""

    def effect(a: Mapping[str, Any], x: Mapping[str, Any], requester: str) -> tuple[str, list[Check]]:
        row = {**a, **fixed, **{k: v for k, v in x.items() if k in m.metadata.tables[table].c}}
        return str(row[target]), [inserted(table, row)]

    return effect


def _by_key(table: str, key: str, target: str, **to: Any) -> Effect:
    """An existing row of `table`, found by its key argument, updated to `to`."""

    def effect(a: Mapping[str, Any], x: Mapping[str, Any], requester: str) -> tuple[str, list[Check]]:
        return str(x.get(target, a.get(target))), [updated(table, {key: a[key]}, dict(to))]

    return effect


def _hris(kind: str, target: str, columns: Callable[[Mapping[str, Any], Mapping[str, Any]], dict[str, Any]]) -> Effect:
    """An HRIS change: the employee's columns, and the employment event recording it."""

    def effect(a: Mapping[str, Any], x: Mapping[str, Any], requester: str) -> tuple[str, list[Check]]:
        event = {
            "employee_id": a["employee_id"],
            "kind": x.get("kind", kind),
            "detail": x.get("detail", a.get(target)),
            "effective_date": a.get("effective_date", m.TODAY),
            "recorded_by": requester,
        }
        change = updated("employees", {"employee_id": a["employee_id"]}, columns(a, x))
        return str(x.get("target", a.get(target))), [change, inserted("employment_events", event)]

    return effect


def _device_assigned(a: Mapping[str, Any], x: Mapping[str, Any], requester: str) -> tuple[str, list[Check]]:
    assignment = {"device_id": a["device_id"], "employee_id": a["employee_id"], "status": "active", "returned_at": None}
    return a["device_id"], [
        updated("devices", {"device_id": a["device_id"]}, {"status": "assigned", "reserved_for": None}),
        inserted("device_assignments", {**assignment, "assigned_at": m.TODAY}),
    ]


def _device_reclaimed(a: Mapping[str, Any], x: Mapping[str, Any], requester: str) -> tuple[str, list[Check]]:
    held = {"device_id": a["device_id"], "employee_id": a["employee_id"], "status": "active"}
    status = "available" if a["condition"] == "working" else "repair"
    return a["device_id"], [
        updated("device_assignments", held, {"status": "returned", "returned_at": m.TODAY}),
        updated("devices", {"device_id": a["device_id"]}, {"status": status}),
    ]


def _membership_removed(a: Mapping[str, Any], x: Mapping[str, Any], requester: str) -> tuple[str, list[Check]]:
    return a["group_id"], [deleted("group_memberships", {"employee_id": a["employee_id"], "group_id": a["group_id"]})]


def _payroll_status(a: Mapping[str, Any], x: Mapping[str, Any], requester: str) -> tuple[str, list[Check]]:
    final = m.TODAY if a["status"] == "final" else None
    return a["status"], [
        updated("payroll_records", {"employee_id": a["employee_id"]}, {"status": a["status"], "final_pay_date": final})
    ]


def _employment_status(a: Mapping[str, Any], x: Mapping[str, Any]) -> dict[str, Any]:
    if a["status"] == "terminated":
        return {"status": "terminated", "end_date": a["effective_date"]}
    rehired = x.get("kind") == "rehire"
    return {"status": a["status"], **({"start_date": a["effective_date"], "end_date": None} if rehired else {})}


EFFECTS: Mapping[str, Effect] = {
    # HRIS
    "change_role": _hris("role_change", "role", lambda a, x: {"role": a["role"]}),
    "transfer_department": _hris(
        "transfer", "department", lambda a, x: {"department": a["department"], "manager_id": a["manager_id"]}
    ),
    "extend_contract": _hris("extension", "end_date", lambda a, x: {"end_date": a["end_date"]}),
    "set_employment_status": _hris("status", "status", _employment_status),
    "change_legal_name": _hris(
        "name_change", "name", lambda a, x: {"first_name": a["first_name"], "last_name": a["last_name"]}
    ),
    # directory
    "create_directory_account": _new("accounts", "account_id", status="active", mfa_enrollment_required=True),
    "set_account_status": _status("accounts"),
    "set_account_expiry": _person("accounts", "expires_on"),
    "rename_account": _person("accounts", "display_name"),
    "revoke_mfa_device": _by_key("mfa_devices", "mfa_id", "mfa_id", status="revoked"),
    "require_mfa_enrollment": lambda a, x, r: (
        "mfa",
        [updated("accounts", {"employee_id": a["employee_id"]}, {"mfa_enrollment_required": True})],
    ),
    # email, chat, tracker, vpn, expenses, payroll, badges
    "create_mailbox": _new("mailboxes", "address", aliases="", status="active"),
    "rename_mailbox": lambda a, x, r: (
        a["new_address"],
        [
            updated(
                "mailboxes", {"employee_id": a["employee_id"]}, {"address": a["new_address"], "aliases": x["aliases"]}
            )
        ],
    ),
    "set_mailbox_status": _status("mailboxes"),
    "create_chat_account": _new("chat_accounts", "display_name", status="active"),
    "rename_chat_account": _person("chat_accounts", "display_name"),
    "set_chat_account_status": _status("chat_accounts"),
    "create_tracker_account": _new("tracker_accounts", "display_name", status="active"),
    "rename_tracker_account": _person("tracker_accounts", "display_name"),
    "set_tracker_account_status": _status("tracker_accounts"),
    "create_vpn_profile": _new("vpn_profiles", "region", status="active"),
    "set_vpn_profile_status": _status("vpn_profiles"),
    "create_expense_profile": _new("expense_profiles", "cost_center", status="active"),
    "update_expense_profile": lambda a, x, r: (
        a["cost_center"],
        [
            updated(
                "expense_profiles",
                {"employee_id": a["employee_id"]},
                {"cost_center": a["cost_center"], "approver_id": a["approver_id"]},
            )
        ],
    ),
    "set_expense_profile_status": _status("expense_profiles"),
    "set_payroll_status": _payroll_status,
    "set_payroll_cost_center": _person("payroll_records", "cost_center"),
    "set_payroll_legal_name": _person("payroll_records", "legal_name"),
    "issue_badge": _new("badges", "site", status="active"),
    "reprint_badge": _person("badges", "printed_name"),
    "set_badge_expiry": _person("badges", "expires_on"),
    "set_badge_status": _status("badges"),
    # devices, code hosting, timesheets, learning, staffing, documents, licenses, groups
    "assign_device": _device_assigned,
    "reclaim_device": _device_reclaimed,
    "grant_repo_access": _new("repo_access", "org", org=m.CODE_ORG, status="active"),
    "revoke_repo_access": _by_key("repo_access", "access_id", "org", status="revoked"),
    "open_timesheet_line": _new("timesheet_entries", "code", week=m.TODAY, hours=0, status="open"),
    "close_timesheet_line": _by_key("timesheet_entries", "entry_id", "code", status="closed"),
    "enroll_in_course": _new("enrollments", "course_id", status="enrolled", enrolled_at=m.TODAY),
    "add_staffing_assignment": lambda a, x, r: (
        a["project_id"],
        [
            inserted(
                "staffing_assignments",
                {
                    "employee_id": a["employee_id"],
                    "project_id": a["project_id"],
                    "start_date": m.TODAY,
                    "end_date": None,
                    "status": "active",
                },
            )
        ],
    ),
    "end_staffing_assignment": _by_key(
        "staffing_assignments", "assignment_id", "project_id", status="ended", end_date=m.TODAY
    ),
    "grant_share_permission": _new("share_permissions", "share_id", status="active"),
    "revoke_share_permission": _by_key("share_permissions", "permission_id", "share_id", status="revoked"),
    "assign_license_seat": _new("license_seats", "pool_id", assigned_at=m.TODAY, status="active"),
    "reclaim_license_seat": _by_key("license_seats", "seat_id", "pool_id", status="reclaimed"),
    "add_group_member": _new("group_memberships", "group_id", added_at=m.TODAY),
    "remove_group_member": _membership_removed,
    "close_access_request": _by_key("access_requests", "request_id", "request_id", status="fulfilled"),
}


def flatten(calls: Iterable[Call]) -> list[Call]:
    """The calls in order, each preceded by the call it needs (a chain step's precondition)."""
    flat: list[Call] = []
    for expected in calls:
        if expected.get("needs"):
            flat.append(expected["needs"])
        flat.append(expected)
    return flat


def calls_check(requester: str, calls: Iterable[Call], *extra: Check) -> Check:
    """Each call's table changes, its audit-log row, `extra` checks, and nothing else written."""
    checks: list[Check] = []
    audits: Counter[tuple[str, str, str, str]] = Counter()
    for expected in flatten(calls):
        target, changes = EFFECTS[expected["tool"]](expected["args"], expected["expect"], requester)
        checks.extend(changes)
        audits[(expected["args"]["employee_id"], TOOL_SYSTEM[expected["tool"]], expected["tool"], target)] += 1
    for (employee, system, action, target), count in sorted(audits.items()):
        row = {"actor_id": requester, "employee_id": employee, "system": system, "action": action, "target": target}
        checks.append(inserted("audit_log", row, count))
    return all_of(*checks, *extra, no_other_writes())


def intent_check(intent: Mapping[str, Any]) -> Check:
    """The check of a task whose intent lists the requester and the calls the policy requires."""
    return calls_check(intent["requester_id"], intent["calls"])
