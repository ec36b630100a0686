"""Identity checks declared by the domain, followed by the ReferenceAgent: two factors, requester authority."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Boolean, Column, Connection, MetaData, String, Table, insert, select, update

from passhat.checks import Check, all_of, no_other_writes, updated
from passhat.sandbox import (
    CustomerScript,
    Domain,
    Factor,
    FlawConfig,
    ReferenceAgent,
    ReferenceRun,
    Sandbox,
    System,
    SystemBackend,
    TaskType,
    ToolError,
    identify,
    perform_write,
    requester_authority,
    run_trials,
    tool,
    two_factors,
)

metadata = MetaData()
people = Table(
    "people",
    metadata,
    Column("person_id", String, primary_key=True),
    Column("card_last_four", String, nullable=False),
    Column("birth_date", String, nullable=False),
    Column("manager_id", String),
)
accounts = Table("accounts", metadata, Column("person_id", String, primary_key=True), Column("locked", Boolean))


def seed(connection: Connection, seed: int = 0, size: str = "small") -> None:
    rows = [
        {
            "person_id": f"P{i}",
            "card_last_four": f"{1000 + i}",
            "birth_date": f"1990-01-{i + 1:02d}",
            "manager_id": None if i < 2 else f"P{i % 2}",
        }
        for i in range(12)
    ]
    connection.execute(insert(people), rows)
    connection.execute(insert(accounts), [{"person_id": r["person_id"], "locked": False} for r in rows])


class Directory(SystemBackend):
    def _person(self, **where: str) -> dict[str, Any]:
        row = self.db.execute(select(people).filter_by(**where)).mappings().first()
        if row is None:
            raise ToolError("no_such_person", "no person matches")
        return dict(row)

    @tool("lookup")
    async def find_by_card(self, card_last_four: str) -> dict[str, Any]:
        """First factor: the person holding the card (not yet verified)."""
        person = self._person(card_last_four=card_last_four)
        self.session.requester = person["person_id"]
        return {"person_id": person["person_id"]}

    @tool("lookup")
    async def verify_birth_date(self, person_id: str, birth_date: str) -> dict[str, Any]:
        """Second factor: the birth date of the person the card found; verifies them."""
        self._person(person_id=person_id, birth_date=birth_date)
        self.session.identified.add(person_id)
        return {"person_id": person_id}

    @tool("lookup")
    async def check_authority(self, requester_id: str, employee_id: str) -> dict[str, Any]:
        """Whether the requester (found by card) may act for the employee: only their manager may."""
        employee = self._person(person_id=employee_id)
        if self.session.requester != requester_id or employee["manager_id"] != requester_id:
            raise ToolError("not_their_manager", f"{requester_id} is not {employee_id}'s manager")
        self.session.identified.add(employee_id)
        return {"employee_id": employee_id}


class Accounts(SystemBackend):
    @tool("write")
    async def lock_account(self, person_id: str) -> dict[str, Any]:
        """Lock a verified person's account."""
        if person_id not in self.session.identified:
            raise ToolError("not_verified", "verify the person first")
        self.db.execute(update(accounts).where(accounts.c.person_id == person_id).values(locked=True))
        self.db.commit()
        return {"person_id": person_id, "locked": True}


def candidates(connection: Connection) -> list[dict[str, Any]]:
    rows = connection.execute(select(people).order_by(people.c.person_id)).mappings()
    return [dict(row) for row in rows if row["manager_id"]]


def own_script(intent: Mapping[str, Any]) -> CustomerScript:
    return CustomerScript(
        goal="Lock my account.",
        opening="Please lock my account.",
        facts={"card_last_four": intent["card_last_four"], "birth_date": intent["birth_date"]},
    )


def manager_script(intent: Mapping[str, Any]) -> CustomerScript:
    manager = intent["manager_id"]
    return CustomerScript(
        goal=f"Lock the account of my report {intent['person_id']}.",
        opening="Please lock my report's account.",
        facts={"card_last_four": f"{1000 + int(manager[1:])}", "employee_id": intent["person_id"]},
        subject={"employee_id": intent["person_id"]},
    )


def check(intent: Mapping[str, Any]) -> Check:
    return all_of(updated("accounts", {"person_id": intent["person_id"]}, {"locked": True}), no_other_writes())


async def lock(run: ReferenceRun) -> None:
    person = await identify(run)
    arguments = {"person_id": str(person)}
    await perform_write(run, "lock_account", arguments, summary="I will lock the account.", broken=arguments)
    await run.finish("The account is locked.")


TASK = TaskType("lock", "write", "Lock an account.", candidates, own_script, check, lock, frozenset())
BANK = Domain(
    "bank",
    "Two-factor desk.",
    metadata,
    seed,
    {"lock": TASK},
    systems=(System("directory", "", ("people",), Directory), System("accounts", "", ("accounts",), Accounts)),
    errors={
        "no_such_person": "not_found",
        "not_their_manager": "permission_denied",
        "not_verified": "precondition_failed",
    },
    identity=two_factors(
        Factor("find_by_card", ("card_last_four",), "person_id"),
        Factor("verify_birth_date", ("birth_date",), "person_id", carries="person_id"),
    ),
    policy_text="Verify two factors.",
)
HR = dataclasses.replace(
    BANK,
    name="hr",
    task_types={"lock": dataclasses.replace(TASK, script=manager_script)},
    identity=requester_authority(
        Factor("check_authority", ("employee_id",), "employee_id", carries="requester_id"),
        Factor("find_by_card", ("card_last_four",), "person_id"),
    ),
)


async def _run(domain: Domain, **changes: Any) -> list[Any]:
    with Sandbox(domain) as sandbox:
        scenarios = sandbox.scenarios("lock", 4)
        scenarios = [dataclasses.replace(s, **changes) for s in scenarios]
        return await run_trials(sandbox, scenarios, 1, ReferenceAgent.factory(FlawConfig.off()))


async def test_two_factors_verify_the_caller_with_both_steps_in_order() -> None:
    results = await _run(BANK)
    assert all(r.passed for r in results)
    assert [c.name for c in results[0].record.tool_calls] == ["find_by_card", "verify_birth_date", "lock_account"]


async def test_the_requester_is_verified_then_granted_authority_over_the_subject() -> None:
    results = await _run(HR)
    assert all(r.passed for r in results)
    calls = results[0].record.tool_calls
    assert [c.name for c in calls] == ["find_by_card", "check_authority", "lock_account"]
    assert calls[1].arguments["employee_id"] == results[0].scenario.intent["person_id"]


async def test_a_requester_without_authority_is_refused_and_nothing_changes() -> None:
    with Sandbox(HR) as sandbox:
        scenario = sandbox.scenarios("lock", 1)[0]
        stranger = dataclasses.replace(scenario.script, facts={**scenario.script.facts, "card_last_four": "1011"})
        results = await run_trials(
            sandbox, [dataclasses.replace(scenario, script=stranger)], 1, ReferenceAgent.factory(FlawConfig.off())
        )
    record = results[0].record
    assert not results[0].passed and record.diff.is_empty
    assert record.tool_calls[-1].error_type == "not_their_manager"
    assert "cannot act on this request" in record.final_response
