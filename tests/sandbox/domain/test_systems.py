"""Systems: tools declared once with their kind, refusals raised as ToolError, one server listing every system."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, insert

from passhat.checks import ERROR_CATEGORIES
from passhat.sandbox import (
    Domain,
    DomainError,
    Sandbox,
    System,
    SystemBackend,
    ToolError,
    load_domain,
    tool,
)
from passhat.sandbox.domain import SYSTEM_META_KEY, Session, SystemsServer, declared_tools
from passhat.sandbox.domains.mock import domain as mock


class Desk(SystemBackend):
    @tool("lookup")
    async def look(self, key: str) -> dict[str, Any]:
        """Look a key up."""
        if key != "known":
            raise ToolError("nothing_here", f"no record {key}")
        return {"key": key}

    @tool("write", name="desk_note")
    async def note(self, text: str) -> dict[str, str]:
        """Write a note."""
        return {"noted": text}

    def helper(self) -> None:
        """Not a tool: no declaration."""


def test_a_backend_declares_its_tools_once_with_their_kind() -> None:
    assert declared_tools(Desk) == {"look": ("look", "lookup"), "desk_note": ("note", "write")}
    assert System("desk", "A desk.", (), Desk).tools == {"look": "lookup", "desk_note": "write"}


def test_a_tool_kind_outside_lookup_write_other_is_refused() -> None:
    with pytest.raises(ValueError, match="lookup, write or other"):
        tool("read")  # type: ignore[arg-type]


def test_the_domain_derives_its_lookup_and_write_tools_from_the_systems() -> None:
    assert mock.lookup_tools == {"find_member_by_email", "get_loans"}
    assert mock.write_tools == {"renew_loan"}
    assert mock.tool_systems == {
        "find_member_by_email": "members",
        "get_loans": "circulation",
        "renew_loan": "circulation",
    }
    assert mock.system("circulation").tables == ("loans",)
    with pytest.raises(DomainError, match="no system 'payroll'; systems: members, circulation"):
        mock.system("payroll")


def test_two_systems_may_not_declare_the_same_tool_name() -> None:
    with pytest.raises(ValueError, match="tool 'look' is declared by systems 'a' and 'b'"):
        SystemsServer("x", "", (System("a", "", (), Desk), System("b", "", (), Desk)))


def test_an_error_vocabulary_maps_onto_the_classifier_categories_only() -> None:
    assert set(mock.errors.values()) <= set(ERROR_CATEGORIES)
    with pytest.raises(DomainError, match="unknown categories \\['gone'\\]"):
        Domain("bad", "", MetaData(), lambda c, s, z: None, {}, errors={"missing": "gone"})


def test_retail_is_four_systems_whose_tables_cover_the_metadata() -> None:
    retail = load_domain("retail")
    assert [s.name for s in retail.systems] == ["accounts", "catalog", "orders", "support"]
    tables = [t for system in retail.systems for t in system.tables]
    assert sorted(tables) == sorted(retail.metadata.tables)
    assert len(retail.lookup_tools) == 6 and len(retail.write_tools) == 8


async def test_the_tool_list_says_which_system_each_tool_belongs_to() -> None:
    with Sandbox(mock) as sandbox:
        database = sandbox.memory_copy()
        try:
            async with Client(mock.build_server(database.engine)) as client:
                listed = (await client.list_tools()).tools
        finally:
            database.close()
    by_name = {t.name: t for t in listed}
    assert by_name["renew_loan"].description.startswith("[circulation] Extend a loan")
    assert by_name["find_member_by_email"].meta == {SYSTEM_META_KEY: "members"}


async def test_a_tool_error_becomes_an_mcp_error_result_in_the_domains_words() -> None:
    with Sandbox(mock) as sandbox:
        database = sandbox.memory_copy()
        try:
            async with Client(mock.build_server(database.engine)) as client:
                refused = await client.call_tool("renew_loan", {"loan_id": "L0000-0", "weeks": 1})
                missing = await client.call_tool("renew_loan", {"loan_id": "nope", "weeks": 1})
                found = await client.call_tool("find_member_by_email", {"email": "reader0@example.org"})
        finally:
            database.close()
    assert refused.is_error and json.loads(refused.content[0].text)["error"] == "member_not_verified"  # type: ignore[union-attr]
    assert json.loads(missing.content[0].text) == {  # type: ignore[union-attr]
        "error": "no_such_record",
        "message": "loan nope not found",
    }
    assert not found.is_error and found.structured_content == {
        "member_id": "M0000",
        "name": found.structured_content["name"],
    }  # type: ignore[index]


def test_a_system_table_must_exist_and_belong_to_one_system() -> None:
    metadata = MetaData()
    Table("notes", metadata, Column("id", String, primary_key=True))
    desk = System("desk", "A desk.", ("notes", "ghosts"), Desk)
    domain = Domain("desk", "", metadata, lambda c, s, z: None, {}, systems=(desk,), policy_text="Be kind.")
    from passhat.sandbox.testing._contract import _systems

    result = _systems(domain)
    assert not result.held and "'ghosts', which is not in the metadata" in result.detail


def test_a_backend_looks_rows_up_by_column_values() -> None:
    metadata = MetaData()
    loans = Table(
        "loans",
        metadata,
        Column("loan_id", Integer, primary_key=True),
        Column("member", String),
        Column("status", String),
    )
    engine = create_engine("sqlite://")
    metadata.create_all(engine)
    with engine.begin() as connection:
        # Inserted out of key order: `rows` answers in key order all the same.
        connection.execute(
            insert(loans),
            [
                {"loan_id": 3, "member": "m1", "status": "open"},
                {"loan_id": 1, "member": "m1", "status": "open"},
                {"loan_id": 2, "member": "m1", "status": "returned"},
                {"loan_id": 4, "member": "m2", "status": "open"},
            ],
        )
    with engine.connect() as connection:
        backend = SystemBackend(connection, Session())
        assert backend.row(loans, loan_id=2) == {"loan_id": 2, "member": "m1", "status": "returned"}
        assert backend.row(loans, member="m2", status="returned") is None
        assert [r["loan_id"] for r in backend.rows(loans, member="m1", status="open")] == [1, 3]
        assert [r["loan_id"] for r in backend.rows(loans)] == [1, 2, 3, 4]
        assert backend.rows(loans, member="nobody") == []
