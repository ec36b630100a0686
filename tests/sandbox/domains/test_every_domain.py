"""What every installed domain must do, each domain a parameter: the whole contract, every kind of task type,
distinct and reproducible scenarios, a deterministic seed at both sizes, a typed tool listing naming each tool's
system, and the command line (`passhat sandbox list|serve`, `passhat bench --domain`) over real MCP clients.

A new domain gets all of these by being installed; its own rules are tested in its own test files.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.sandbox import Domain, DomainError, Sandbox, available_domains, load_domain
from passhat.sandbox.domain import SYSTEM_META_KEY
from passhat.sandbox.testing import PROPERTIES, check_domain
from passhat.sandbox.trial import connect
from tests.collector.cli.test_sandbox_commands import PASSHAT, _wait_for_http, free_port

DOMAINS = available_domains()
KINDS = {"write", "read_only", "refuse", "confidentiality", "chain"}


@pytest.fixture(params=DOMAINS)
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    """Each installed domain's small sandbox (the session's, built once: tests/sandbox/conftest.py)."""
    found: Sandbox = request.getfixturevalue(request.param)
    return found


def _identification(domain: Domain, sandbox: Sandbox) -> tuple[str, dict[str, Any]]:
    """The first identity factor's tool and its arguments for a customer of the seed (from a scenario's script)."""
    assert domain.identity is not None, domain.name
    factor = domain.identity.factors[0]
    for name in domain.task_types:
        for scenario in sandbox.scenarios(name, 5):
            facts = scenario.script.facts
            if all(key in facts for key in factor.facts):
                return factor.tool, factor.call_arguments(facts, None)
    raise AssertionError(f"no scenario of {domain.name} knows the facts of {factor.tool}")


def _error_kind(result: Any) -> str:
    return str(json.loads("".join(getattr(block, "text", "") for block in result.content))["error"])


@pytest.mark.slow
@pytest.mark.parametrize("name", DOMAINS)
def test_the_domain_holds_the_whole_contract(name: str) -> None:
    results = check_domain(name)
    assert [result.name for result in results] == list(PROPERTIES)
    assert all(result.held for result in results), [result for result in results if not result.held]


@pytest.mark.parametrize("name", DOMAINS)
def test_the_domain_has_every_kind_of_task_type_a_written_policy_and_an_identity_check(name: str) -> None:
    domain = load_domain(name)
    assert {task.kind for task in domain.task_types.values()} == KINDS
    assert domain.grade == "benchmark" and domain.policy.strip() and domain.identity is not None
    assert set(domain.sizes) == {"small", "default"}


def test_every_task_type_has_distinct_scenarios_in_the_small_seed(sandbox: Sandbox) -> None:
    for name in sandbox.domain.task_types:
        scenarios = sandbox.scenarios(name, 20)
        assert len(scenarios) >= 3, name
        assert len({repr(sorted(s.intent.items())) for s in scenarios}) == len(scenarios), name


def test_the_seed_and_the_scenarios_are_reproducible_and_another_seed_differs(sandbox: Sandbox) -> None:
    name = sandbox.domain.name

    def drawn(source: Sandbox, seed: int) -> list[Any]:
        return [s.intent for task in source.domain.task_types for s in source.scenarios(task, 5, seed=seed)]

    with Sandbox(name, seed=0, size="small") as again, Sandbox(name, seed=1, size="small") as other:
        assert again.initial == sandbox.initial
        assert other.initial != sandbox.initial
        assert drawn(again, 2) == drawn(sandbox, 2)
    assert drawn(sandbox, 3) != drawn(sandbox, 2)


@pytest.mark.slow
def test_the_default_size_is_bigger_and_each_task_type_has_twenty_scenarios_at_one_size(sandbox: Sandbox) -> None:
    with Sandbox(sandbox.domain.name, seed=0, size="default") as large:
        small_rows = {name: len(table.rows) for name, table in sandbox.initial.tables.items()}
        large_rows = {name: len(table.rows) for name, table in large.initial.tables.items()}
        assert all(large_rows[name] >= count for name, count in small_rows.items()), (small_rows, large_rows)
        assert sum(large_rows.values()) > sum(small_rows.values())
        for name in large.domain.task_types:
            drawn = large.scenarios(name, 20)
            assert len({repr(sorted(s.intent.items())) for s in drawn}) == len(drawn) >= 3, name
            assert max(len(drawn), len(sandbox.scenarios(name, 20))) == 20, name


@pytest.mark.parametrize("name", DOMAINS)
def test_an_unknown_seed_size_is_one_clear_error(name: str) -> None:
    with pytest.raises(DomainError, match="no seed size 'huge'"):
        Sandbox(name, size="huge")


async def test_the_server_lists_every_tool_typed_and_described_with_its_system(sandbox: Sandbox) -> None:
    domain = sandbox.domain
    database = sandbox.memory_copy()
    try:
        async with connect(domain, database, "memory") as client:
            assert client is not None
            tools = (await client.list_tools()).tools
    finally:
        database.close()
    assert {tool.name for tool in tools} == set(domain.tool_systems)
    assert set(domain.tool_systems) == domain.lookup_tools | domain.write_tools | {
        name for name, kind in _kinds(domain).items() if kind == "other"
    }
    for tool in tools:
        system = domain.tool_systems[tool.name]
        assert tool.description is not None and tool.description.startswith(f"[{system}] "), tool.name
        assert len(tool.description) > len(system) + 10, tool.name
        assert tool.meta == {SYSTEM_META_KEY: system}, tool.name
        for argument, spec in tool.input_schema.get("properties", {}).items():
            assert "type" in spec or "anyOf" in spec, (tool.name, argument)


def _kinds(domain: Domain) -> dict[str, str]:
    return {name: kind for system in domain.systems for name, kind in system.tools.items()}


def test_sandbox_list_shows_every_domain_with_its_task_types_and_tools() -> None:
    result = CliRunner().invoke(app, ["sandbox", "list", "--json"])
    assert result.exit_code == 0, result.output
    listed = {entry["domain"]: entry for entry in json.loads(result.output)["domains"]}
    assert set(DOMAINS) <= set(listed)
    for name in DOMAINS:
        domain = load_domain(name)
        assert {entry["task_type"]: entry["kind"] for entry in listed[name]["task_types"]} == {
            task.name: task.kind for task in domain.task_types.values()
        }, name
        assert listed[name]["tools"] == sorted(domain.lookup_tools | domain.write_tools), name


@pytest.mark.parametrize("name", DOMAINS)
def test_replay_runs_the_reference_agent_on_a_chain_and_it_passes_without_flaws(name: str) -> None:
    domain = load_domain(name)
    chain = next(task for task in domain.task_types.values() if task.kind == "chain").name
    args = ["bench", "--domain", name, "--task-type", chain, "--scenarios", "2", "--k", "2", "--flaws", "off"]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    (row,) = payload["task_types"]
    assert payload["agent"] == "reference (offline simulation)"
    assert (row["domain"], row["task_type"], row["tickets"], row["trials_per_ticket"]) == (name, chain, 2, 2)
    assert row["pass_at_1"] == row["pass_hat_k"] == 1.0


@pytest.mark.slow
async def test_serve_answers_a_real_mcp_client_over_stdio(tmp_path: Path, sandbox: Sandbox) -> None:
    domain = sandbox.domain
    tool, arguments = _identification(domain, sandbox)
    args = ["sandbox", "serve", domain.name, "--transport", "stdio", "--size", "small"]
    params = StdioServerParameters(
        command=PASSHAT, args=[*args, "--database", str(tmp_path / "served.db")], env={**os.environ}
    )
    async with Client(params, read_timeout_seconds=60) as client:
        assert {t.name for t in (await client.list_tools()).tools} == set(domain.tool_systems)
        # The seed's customer is found by what they know; a stranger is an error of the domain's vocabulary.
        found = await client.call_tool(tool, arguments)
        assert not found.is_error, found.content
        stranger = await client.call_tool(tool, {key: f"nobody-{key}" for key in arguments})
        assert stranger.is_error and _error_kind(stranger) in domain.errors


@pytest.mark.slow
async def test_serve_answers_a_real_mcp_client_over_http_with_its_token(tmp_path: Path, sandbox: Sandbox) -> None:
    domain = sandbox.domain
    tool, arguments = _identification(domain, sandbox)
    port = free_port()
    command = [PASSHAT, "sandbox", "serve", domain.name, "--transport", "http", "--port", str(port), "--size", "small"]
    env = {**os.environ, "PASSHAT_SANDBOX_TOKEN": "served-token"}
    process = subprocess.Popen([*command, "--database", str(tmp_path / "served.db")], stderr=subprocess.PIPE, env=env)
    try:
        _wait_for_http(process, port)
        async with (
            create_mcp_http_client(headers={"Authorization": "Bearer served-token"}) as http,
            Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client,
        ):
            assert {t.name for t in (await client.list_tools()).tools} == set(domain.tool_systems)
            stranger = await client.call_tool(tool, {key: f"nobody-{key}" for key in arguments})
            assert stranger.is_error and _error_kind(stranger) in domain.errors
    finally:
        process.terminate()
        process.communicate(timeout=30)
