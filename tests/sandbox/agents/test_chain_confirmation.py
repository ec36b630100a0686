"""`perform_write`: a plan that confirmed a whole chain once makes each write without asking again; the write knows
no domain's arguments (the plan supplies them)."""

from __future__ import annotations

import ast
import dataclasses
import inspect

from passhat.sandbox import (
    FlawConfig,
    ReferenceAgent,
    ReferenceRun,
    Sandbox,
    available_domains,
    identify,
    load_domain,
    perform_write,
    run_trials,
)
from passhat.sandbox.agents import _procedures as procedures
from passhat.sandbox.domain import declared_tools
from passhat.sandbox.domains.mock import domain as mock


async def _renew_all_at_once(run: ReferenceRun) -> None:
    member_id = await identify(run)
    found = await run.call("get_loans", {"member_id": member_id})
    loans = [loan for loan in found.data["loans"] if loan["renewals"] < 2]
    if not await run.confirm(f"I will renew {len(loans)} loans by a week."):
        await run.finish("Nothing changed.")
    for loan in loans:
        await perform_write(run, "renew_loan", {"loan_id": loan["loan_id"], "weeks": 1}, summary="renew", confirm=False)
    await run.finish("Done.")


async def test_a_chain_confirmed_once_asks_once_and_still_makes_every_write() -> None:
    task = dataclasses.replace(mock.task_types["renew_several_loans"], reference=_renew_all_at_once)
    domain = dataclasses.replace(mock, task_types={**mock.task_types, "renew_several_loans": task})
    with Sandbox(domain) as sandbox:
        scenario = sandbox.scenarios("renew_several_loans", 1)[0]
        (result,) = await run_trials(sandbox, [scenario], 1, ReferenceAgent.factory(FlawConfig.off()))
    asked = [text for role, text in result.record.transcript if role == "agent" and "Shall I go ahead" in text]
    writes = [call for call in result.record.tool_calls if call.name == "renew_loan"]
    assert len(asked) == 1
    assert len(writes) >= 3 and all(call.outcome == "ok" for call in writes)


async def _renew_without_a_broken_call(run: ReferenceRun) -> None:
    member_id = await identify(run)
    found = await run.call("get_loans", {"member_id": member_id})
    loan = found.data["loans"][0]
    await perform_write(run, "renew_loan", {"loan_id": loan["loan_id"], "weeks": 1}, summary="I will renew it.")
    await run.finish("Done.")


async def test_a_write_given_no_invalid_arguments_offers_no_chance_of_an_unretried_error() -> None:
    # The generic write knows no domain's arguments: only the plan can say which call the tool rejects.
    task = dataclasses.replace(mock.task_types["renew_several_loans"], reference=_renew_without_a_broken_call)
    domain = dataclasses.replace(mock, task_types={**mock.task_types, "renew_several_loans": task})
    with Sandbox(domain) as sandbox:
        scenario = sandbox.scenarios("renew_several_loans", 1)[0]
        (result,) = await run_trials(
            sandbox, [scenario], 1, ReferenceAgent.factory(FlawConfig.forced("error_not_retried"))
        )
    writes = [call for call in result.record.tool_calls if call.name == "renew_loan"]
    assert [call.outcome for call in writes] == ["ok"]


def test_the_shared_procedures_spell_no_domains_tool_or_argument() -> None:
    # Each domain's plans supply its tools and arguments; the procedures every domain shares name none of them.
    source = inspect.getsource(procedures)
    spelled = {
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    words: set[str] = set()
    for name in available_domains():
        for system in load_domain(name).systems:
            for tool, (method, _) in declared_tools(system.backend).items():
                parameters = inspect.signature(getattr(system.backend, method)).parameters
                words |= {tool, *(parameter for parameter in parameters if parameter != "self")}
    assert words and not spelled & words, sorted(spelled & words)
