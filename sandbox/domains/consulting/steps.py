"""What every consulting reference plan shares: verify the requester, open the subject, run a chain of writes.

A plan reads only what the requester said (`run.facts`) and what the tools return, never the scenario's intent.
A chain is confirmed once with the requester and then runs step by step; each step is one `perform_write`
(one chance of each write-side failure), and a step that depends on an earlier one runs it as its precondition,
so a skipped step shows up as the dependent tool's `precondition_failed`-category refusal.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from passhat.sandbox.agents import ReferenceRun, identify, lookup, perform_write
from passhat.sandbox.domains.consulting.effects import Call, flatten


def _broken(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The same call with the employee left out, which every write refuses as an invalid request."""
    return {**arguments, "employee_id": ""}


def _describe(expected: Call) -> str:
    detail = ", ".join(f"{k} {v}" for k, v in expected["args"].items())
    return f"{expected['tool']}({detail})" if detail else str(expected["tool"])


async def subject(run: ReferenceRun) -> dict[str, Any]:
    """Verify the requester and their authority, then open the employee's HR record (a lookup)."""
    verified = await identify(run)
    employee_id = verified
    if employee_id is None:  # identification skipped (a flaw): the agent goes on with the id it is told
        employee_id = str(
            (await run.ask("Which employee is this for: their employee id?", "employee_id"))["employee_id"]
        )
    found = await lookup(
        run,
        "get_employee",
        {"employee_id": employee_id},
        typed="employee_id",
        missing="I'm sorry, I could not open that employee's record, so I cannot go ahead.",
    )
    record: dict[str, Any] = found.data
    return record


async def read(run: ReferenceRun, tool: str, **arguments: Any) -> dict[str, Any]:
    """A lookup the plan cannot do without: its data, or the plan ends explaining what failed."""
    found = await run.call(tool, arguments)
    if not found.ok:
        await run.finish(f"I'm sorry, I could not complete this: {found.error_message}")
    data: dict[str, Any] = found.data
    return data


async def _do(run: ReferenceRun, expected: Call) -> None:
    done = await run.call(expected["tool"], expected["args"])
    if not done.ok:
        await run.finish(f"I'm sorry, I could not complete this: {done.error_message}")


def _precondition(run: ReferenceRun, expected: Call) -> Callable[[], Awaitable[None]] | None:
    needs = expected.get("needs")
    return (lambda: _do(run, needs)) if needs else None


async def run_steps(run: ReferenceRun, calls: Sequence[Call], goal: str) -> None:
    """Confirm the whole chain once, then make each write in order (with the write it needs first, if any).

    The calls are the policy's, computed from what the tools returned (the same policy function the
    scenario's check is built from, fed with the starting state instead).
    """
    listed = "; ".join(_describe(c) for c in flatten(calls))
    if run.injected != "skip_precondition" and not await run.confirm(f"To {goal} I will: {listed}."):
        await run.finish("Understood, I have not changed anything.")
    for expected in calls:
        await perform_write(
            run,
            expected["tool"],
            expected["args"],
            summary=_describe(expected),
            sibling=expected.get("sibling"),
            broken=_broken(expected["args"]),
            precondition=_precondition(run, expected),
            confirm=False,
        )
