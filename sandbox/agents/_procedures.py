"""Procedures every domain's reference plans share: identify the caller, look something up, make a write.

Each is where failure modes get their chances (`ReferenceRun.take_flaw`): identification and every lookup
can be mistyped and given up on (`empty_lookup`) or closed early (`unresolved`); every write can skip its
precondition, land on a sibling row, send a broken argument and repeat it, or not happen.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from passhat.sandbox.agents._conversation import ToolResult
from passhat.sandbox.agents._reference import ReferenceRun
from passhat.sandbox.domain import DomainError, Factor, IdentityCheck


def mangle(value: str) -> str:
    """A plausible typo of an identifier (the empty-lookup failure: the agent mistypes what it was told)."""
    if "@" in value:
        local, _, host = value.partition("@")
        return f"{local}x@{host}"
    if value and value[-1].isdigit():
        return value[:-1] + str((int(value[-1]) + 1) % 10)
    return value + "x"


def _words(factor: Factor) -> str:
    names = [key.replace("_", " ") for key in factor.facts]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


async def _verify(run: ReferenceRun, factor: Factor, facts: Mapping[str, Any], carried: str | None) -> str:
    """Call one factor's tool (one chance of a mistyped lookup); the verified id, or the plan ends."""
    arguments = factor.call_arguments(facts, carried)
    if run.take_flaw("empty_lookup"):
        typo = factor.arguments.get(factor.facts[-1], factor.facts[-1])
        found = await run.call(factor.tool, {**arguments, typo: mangle(arguments[typo])})
        if not found.ok:
            await run.end("I'm sorry, I could not find a record with those details. Please contact us again later.")
    found = await run.call(factor.tool, arguments)
    if not found.ok:
        await run.finish("I'm sorry, I could not verify your identity, so I cannot help with this request.")
    return str(found.data[factor.id_field])


async def _any_factor(run: ReferenceRun, factors: tuple[Factor, ...], opening: str) -> str:
    """Ask for each factor's facts in turn and verify with the first the caller knows."""
    for index, factor in enumerate(factors):
        lead = opening if index == 0 else "No problem. Could you"
        facts = await run.ask(f"{lead} give me your {_words(factor)}?", *factor.facts)
        if index == 0 and run.take_flaw("unresolved"):
            await run.end("Thank you, I have noted your request and a colleague will follow up. Goodbye!")
        if all(key in facts for key in factor.facts):
            return await _verify(run, factor, facts, None)
    await run.finish("I'm sorry, without those details I cannot verify your identity, so I cannot help.")
    raise AssertionError("unreachable")


async def identify(run: ReferenceRun, check: IdentityCheck | None = None) -> str | None:
    """Verify the caller the way the domain declares (`Domain.identity`); the id the plan acts on.

    One factor: the first factor whose facts the caller knows. Two factors: each in turn, the second carrying
    the id the first verified. Requester authority: the requester by one factor, then the authority step for
    the subject (the id returned is the subject's); a refusal there ends the plan with a refusal.
    None when the plan skips identification (the `skip_precondition` flaw).
    """
    check = check or run.context.domain.identity
    if check is None:
        raise DomainError(f"domain {run.context.domain.name!r} declares no identity check (Domain.identity)")
    if run.take_flaw("skip_precondition"):
        return None
    opening = "I can help with that. First, could you"
    if check.kind == "two_factors":
        verified: str | None = None
        for index, factor in enumerate(check.factors):
            lead = opening if index == 0 else "Thank you. And could you"
            facts = await run.ask(f"{lead} give me your {_words(factor)}?", *factor.facts)
            if index == 0 and run.take_flaw("unresolved"):
                await run.end("Thank you, I have noted your request and a colleague will follow up. Goodbye!")
            if not all(key in facts for key in factor.facts):
                await run.finish("I'm sorry, I need both verification details before I can help with this.")
            verified = await _verify(run, factor, facts, verified)
        return verified
    verified = await _any_factor(run, check.factors, opening)
    if check.authority is None:
        return verified
    authority = check.authority
    facts = await run.ask(f"Thank you. Who is this request for: their {_words(authority)}?", *authority.facts)
    granted = await run.call(authority.tool, authority.call_arguments(facts, verified))
    if not granted.ok:
        await run.finish(f"I'm sorry, I cannot act on this request for that person: {granted.error_message}")
    return str(granted.data[authority.id_field])


async def lookup(run: ReferenceRun, tool: str, arguments: Mapping[str, Any], *, typed: str, missing: str) -> ToolResult:
    """One lookup by an identifier the customer gave (`typed`, an argument name): a chance of `empty_lookup`.

    The flawed lookup mistypes `typed`, gets nothing back and gives up; otherwise a failed lookup finishes the
    plan with `missing` (what the agent tells the customer).
    """
    if run.take_flaw("empty_lookup"):
        mistyped = await run.call(tool, {**arguments, typed: mangle(str(arguments[typed]))})
        if not mistyped.ok:
            await run.end("I'm sorry, I could not find anything under that number. Please contact us again later.")
    found = await run.call(tool, arguments)
    if not found.ok:
        await run.finish(missing)
    return found


def proposal(run: ReferenceRun, tool: str, arguments: Mapping[str, Any], summary: str) -> str:
    """The summary of a write as proposed to the customer, with the key values the domain's consent rule names
    (`Domain.consent`) that the summary does not already state."""
    keys = run.context.domain.consent.get(tool, ())
    stated = [f"{key.replace('_', ' ')} {arguments[key]}" for key in keys if str(arguments.get(key, "")) not in summary]
    return f"{summary} ({', '.join(stated)})" if stated else summary


async def perform_write(
    run: ReferenceRun,
    tool: str,
    arguments: Mapping[str, Any],
    *,
    summary: str,
    sibling: Mapping[str, Any] | None = None,
    broken: Mapping[str, Any] | None = None,
    precondition: Callable[[], Awaitable[object]] | None = None,
    confirm: bool = True,
) -> ToolResult:
    """Confirm, then make one write the way the policy says; each call is one chance of each write-side mode.

    `precondition` is this write's own required step (an approval to record, a check to run): the
    `skip_precondition` flaw skips it and the write is rejected by the backend. Without one, the write's
    precondition is the caller's identification (`identify` offers that chance). `no_write` confirms and then
    closes without writing; `wrong_entity` writes `sibling` (the same kind of change to another row of the same
    customer); `error_not_retried` sends `broken` (the same call with an argument the tool rejects as invalid,
    which the domain's plan supplies: it knows its tools' arguments) and repeats it identically. A write given
    no `sibling` or no `broken` offers no chance of that mode. After a skipped identification the
    confirmation is skipped too. `confirm=False` skips this write's own confirmation when the plan has already
    confirmed a whole chain of writes with the customer (a long chain asks once, not once per step; the
    conversation's turn limit would cut a per-step chain short). Returns the successful result; every failure
    path ends the plan.
    """
    skipping = run.injected == "skip_precondition"
    if confirm and not skipping and not await run.confirm(proposal(run, tool, arguments, summary), tool):
        await run.finish("Understood, I have not changed anything.")
    if precondition is not None and not run.take_flaw("skip_precondition"):
        await precondition()
    if run.take_flaw("no_write"):
        await run.finish("Thank you for confirming. Everything is in order now. Is there anything else?")
    if sibling is not None and run.take_flaw("wrong_entity"):
        arguments = sibling
    if broken is not None and run.take_flaw("error_not_retried"):
        arguments = dict(broken)
        first = await run.call(tool, arguments)
        if not first.ok:
            await run.call(tool, arguments)
            await run.finish("I'm sorry, the system returned an error and I could not complete this request.")
    result = await run.call(tool, arguments)
    if not result.ok:
        await run.finish(f"I'm sorry, I could not complete this: {result.error_message}")
    return result
