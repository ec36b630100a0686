"""The consulting tools over a real in-memory MCP server: who may ask, HRIS first, the client rules, the audit log."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import select

from passhat.sandbox import Sandbox, Toolbox
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.data import data_for
from passhat.sandbox.trial import connect


@asynccontextmanager
async def tools(sandbox: Sandbox) -> AsyncIterator[tuple[Toolbox, Any]]:
    """A fresh trial server on a copy of the template, and that copy's engine."""
    database = sandbox.memory_copy()
    try:
        async with connect(sandbox.domain, database, "memory") as client:
            domain = sandbox.domain
            yield (
                Toolbox(client, lookup_tools=domain.lookup_tools, write_tools=domain.write_tools, errors=domain.errors),
                database.engine,
            )
    finally:
        database.close()


def people(sandbox: Sandbox) -> dict[str, dict[str, Any]]:
    """Named people of the small seed: an HR partner, a manager, one of their active reports, a stranger."""
    with sandbox.template.connect() as connection:
        data = data_for(connection)
    hr = data.staff(is_hr=True, status="active")[0]
    report = next(
        e
        for e in data.staff(status="active", employment_type="employee")
        if e["manager_id"] and e["role"] == "consultant"
    )
    manager = data.employees[report["manager_id"]]
    stranger = next(
        e
        for e in data.staff(status="active")
        if not e["is_hr"] and e["employee_id"] not in (report["manager_id"], report["employee_id"])
    )
    return {"hr": hr, "manager": manager, "report": report, "stranger": stranger}


async def verified(box: Toolbox, requester: dict[str, Any], subject: dict[str, Any]) -> Any:
    found = await box.call(
        "verify_requester", {"employee_id": requester["employee_id"], "work_email": requester["work_email"]}
    )
    assert found.ok, found.text
    return await box.call(
        "check_requester_authority", {"requester_id": requester["employee_id"], "employee_id": subject["employee_id"]}
    )


async def test_nothing_is_read_or_changed_before_the_requester_is_verified(consulting: Sandbox) -> None:
    who = people(consulting)
    async with tools(consulting) as (box, _):
        for name, arguments in (
            ("get_employee", {"employee_id": who["report"]["employee_id"]}),
            ("get_payroll_record", {"employee_id": who["report"]["employee_id"]}),
            ("set_badge_status", {"employee_id": who["report"]["employee_id"], "status": "suspended"}),
        ):
            result = await box.call(name, arguments)
            assert not result.ok and result.error_type == "requester_not_verified"
            assert result.error_category == "precondition_failed" and "verify_requester" in (result.error_message or "")
        wrong = await box.call(
            "verify_requester", {"employee_id": who["hr"]["employee_id"], "work_email": "nobody@firm.example"}
        )
        assert wrong.error_type == "no_such_employee" and wrong.error_category == "not_found"


async def test_only_hr_or_the_manager_may_ask_and_never_about_themselves(consulting: Sandbox) -> None:
    who = people(consulting)
    async with tools(consulting) as (box, _):
        refused = await verified(box, who["stranger"], who["report"])
        assert refused.error_type == "not_hr_or_manager" and refused.error_category == "permission_denied"
        self_request = await box.call(
            "check_requester_authority",
            {"requester_id": who["stranger"]["employee_id"], "employee_id": who["stranger"]["employee_id"]},
        )
        assert self_request.error_type == "self_request"
        assert (
            await box.call("get_payroll_record", {"employee_id": who["report"]["employee_id"]})
        ).error_type == "requester_not_verified"
    for asker in ("manager", "hr"):
        async with tools(consulting) as (box, _):
            granted = await verified(box, who[asker], who["report"])
            assert granted.ok and granted.data["relation"] == asker
            pay = await box.call("get_payroll_record", {"employee_id": who["report"]["employee_id"]})
            assert pay.ok and pay.data["salary"] > 0


async def test_hris_comes_first_and_every_write_leaves_its_audit_row(consulting: Sandbox) -> None:
    who = people(consulting)
    e = who["report"]["employee_id"]
    async with tools(consulting) as (box, engine):
        await verified(box, who["manager"], who["report"])
        early = await box.call("set_account_status", {"employee_id": e, "status": "disabled"})
        assert early.error_type == "hris_not_updated" and early.error_category == "precondition_failed"
        assert (
            await box.call(
                "set_employment_status", {"employee_id": e, "status": "terminated", "effective_date": m.TODAY}
            )
        ).ok
        assert (await box.call("set_account_status", {"employee_id": e, "status": "disabled"})).ok
        again = await box.call("set_account_status", {"employee_id": e, "status": "disabled"})
        assert again.error_type == "already_exists" and again.error_category == "conflict"
        with engine.connect() as connection:
            audit = connection.execute(
                select(m.audit_log.c.actor_id, m.audit_log.c.system, m.audit_log.c.action, m.audit_log.c.target)
            ).all()
            events = (
                connection.execute(select(m.employment_events.c.kind).where(m.employment_events.c.employee_id == e))
                .scalars()
                .all()
            )
        actor = who["manager"]["employee_id"]
        assert audit == [
            (actor, "hris", "set_employment_status", "terminated"),
            (actor, "directory", "set_account_status", "disabled"),
        ]
        assert events[-1] == "termination"


async def test_code_hosting_is_for_engineers_and_client_shares_need_staffing_and_approval(consulting: Sandbox) -> None:
    who = people(consulting)
    e = who["report"]["employee_id"]  # a consultant
    with consulting.template.connect() as connection:
        data = data_for(connection)
    staffed = {a["project_id"] for a in data.of("staffing_assignments", e, status="active")}
    clients = {p["project_id"]: p["client_id"] for p in data.tables["projects"]}
    other = next(p for p in data.tables["projects"] if clients[p["project_id"]] not in {clients[s] for s in staffed})
    async with tools(consulting) as (box, _):
        await verified(box, who["hr"], who["report"])
        repo = await box.call("grant_repo_access", {"employee_id": e, "permission": "write"})
        assert repo.error_type == "not_permitted" and repo.error_category == "not_allowed"
        share = await box.call(
            "grant_share_permission", {"employee_id": e, "share_id": f"shr-{other['client_id'][3:]}", "level": "edit"}
        )
        assert share.error_type == "not_staffed_on_client" and share.error_category == "precondition_failed"
        staffing = await box.call(
            "add_staffing_assignment", {"employee_id": e, "project_id": other["project_id"], "request_id": "REQ-9999"}
        )
        assert staffing.error_type == "approval_missing" and staffing.error_category == "approval_required"
        bad = await box.call("reclaim_device", {"employee_id": e, "device_id": "LT-0001", "condition": "lost"})
        assert bad.error_type == "invalid_request" and "working, broken" in (bad.error_message or "")


async def test_a_new_hire_needs_a_directory_account_before_anything_that_signs_in(consulting: Sandbox) -> None:
    with consulting.template.connect() as connection:
        data = data_for(connection)
    hire = data.staff(status="pending_start", employment_type="employee")[0]
    hr = data.staff(is_hr=True, status="active")[0]
    e = hire["employee_id"]
    async with tools(consulting) as (box, engine):
        await verified(box, hr, hire)
        for name, arguments in (
            ("create_mailbox", {"employee_id": e}),
            ("add_group_member", {"employee_id": e, "group_id": m.EVERYONE_GROUP}),
        ):
            refused = await box.call(name, arguments)
            assert refused.error_type == "no_directory_account" and refused.error_category == "precondition_failed"
        account = await box.call("create_directory_account", {"employee_id": e})
        assert account.ok and account.data["expires_on"] is None
        mailbox = await box.call("create_mailbox", {"employee_id": e})
        assert mailbox.ok and mailbox.data["address"] == hire["work_email"]
        with engine.connect() as connection:
            rows = connection.execute(select(m.mailboxes).where(m.mailboxes.c.employee_id == e)).mappings().all()
        assert [r["status"] for r in rows] == ["active"]
