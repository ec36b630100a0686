"""Combining checks: ``all_of`` (every part must pass) and ``any_of`` (one part is enough)."""

from __future__ import annotations

import dataclasses
from typing import Any

from passhat.checks._registry import as_checks, check, check_name, claims_of, evaluate, matches_of
from passhat.checks._verdict import Check, CheckContext, Claim, Diagnostic, Verdict


class _AllOf:
    name = "all_of"

    def __init__(self, members: list[Check]) -> None:
        self.members = members

    def __call__(self, ctx: CheckContext, /) -> Verdict:
        member_claims = [claims_of(member, ctx) for member in self.members]
        member_matches = [matches_of(member, ctx) for member in self.members]
        verdicts: list[Verdict] = []
        for index, member in enumerate(self.members):
            # What a sibling accounts for is not collateral damage for this member's no_other_writes, and
            # rows a sibling matched exactly are not near misses of this member's inserted.
            claimed = set().union(*(rows for other, rows in enumerate(member_claims) if other != index))
            matched = set().union(*(rows for other, rows in enumerate(member_matches) if other != index))
            member_ctx = dataclasses.replace(
                ctx, claimed=ctx.claimed | frozenset(claimed), matched=ctx.matched | frozenset(matched)
            )
            verdicts.append(evaluate(member, member_ctx))
        failed = [verdict.check for verdict in verdicts if not verdict.passed]
        diagnostics = (
            [Diagnostic(self.name, f"all_of: {len(failed)} of {len(verdicts)} checks failed: {', '.join(failed)}")]
            if failed
            else []
        )
        return Verdict(not failed, self.name, diagnostics, verdicts)

    def claims(self, ctx: CheckContext) -> set[Claim]:
        return set().union(*(claims_of(member, ctx) for member in self.members))

    def matches(self, ctx: CheckContext) -> set[tuple[str, str]]:
        return set().union(*(matches_of(member, ctx) for member in self.members))


class _AnyOf:
    name = "any_of"

    def __init__(self, members: list[Check]) -> None:
        self.members = members

    def __call__(self, ctx: CheckContext, /) -> Verdict:
        verdicts = [evaluate(member, ctx) for member in self.members]
        passed = any(verdict.passed for verdict in verdicts)
        names = ", ".join(check_name(member) for member in self.members)
        diagnostics = [] if passed else [Diagnostic(self.name, f"any_of: none of {names} passed")]
        return Verdict(passed, self.name, diagnostics, verdicts)

    def claims(self, ctx: CheckContext) -> set[Claim]:
        # Only the alternative that holds accounts for rows; a failed alternative claims nothing.
        return set().union(*(claims_of(member, ctx) for member in self._passing(ctx)))

    def matches(self, ctx: CheckContext) -> set[tuple[str, str]]:
        return set().union(*(matches_of(member, ctx) for member in self._passing(ctx)))

    def _passing(self, ctx: CheckContext) -> list[Check]:
        return [member for member in self.members if evaluate(member, ctx).passed]


@check
def all_of(*checks: Any) -> Check:
    """Passes when every check passes; ``no_other_writes`` inside it allows rows its siblings account for."""
    members = as_checks(checks)
    if not members:
        raise ValueError("all_of() needs at least one check")
    return _AllOf(members)


@check
def any_of(*checks: Any) -> Check:
    """Passes when at least one check passes (alternatives a policy allows)."""
    members = as_checks(checks)
    if not members:
        raise ValueError("any_of() needs at least one check")
    return _AnyOf(members)
