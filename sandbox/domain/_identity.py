"""How a domain verifies who is calling: one factor, two factors, or a requester with authority over a subject.

A domain declares its check once (`Domain.identity`); the ReferenceAgent's `identify` follows it, and the
domain's tools enforce it (an unverified session gets the domain's `precondition_failed`-category error).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

IdentityKind = Literal["one_factor", "two_factors", "requester_authority"]


@dataclass(frozen=True)
class Factor:
    """One verification step: a lookup tool, the customer's facts it takes, and where the verified id is.

    `facts` are fact keys of the customer's script; each is passed as the tool argument of the same name unless
    `arguments` renames it (fact key -> argument name). `id_field` is the field of the tool's result holding
    the verified person's id. `carries` names the argument that receives the id verified by the step before
    (a second factor checked against the first; an authority check given the requester).
    """

    tool: str
    facts: tuple[str, ...]
    id_field: str
    arguments: Mapping[str, str] = field(default_factory=dict)
    carries: str | None = None

    def call_arguments(self, facts: Mapping[str, object], carried: str | None = None) -> dict[str, str]:
        """The tool's arguments from the facts the customer gave (and the id carried from the step before)."""
        arguments = {self.arguments.get(key, key): str(facts.get(key, "")) for key in self.facts}
        if self.carries is not None and carried is not None:
            arguments[self.carries] = carried
        return arguments


@dataclass(frozen=True)
class IdentityCheck:
    """A domain's identity rule.

    - `one_factor`: any one of `factors` identifies the caller; they are tried in order, the first whose facts
      the caller knows (retail: email, else name and zip).
    - `two_factors`: every one of `factors` must pass, each carrying the id the one before verified (banking:
      the card's last four digits, then the date of birth for that customer).
    - `requester_authority`: `factors` verify the requester (as for one factor), then `authority` is called
      with the requester's id and the subject's facts, and returns the subject's id or refuses (IT & HR: HR or
      the employee's manager may ask for a change to the employee's accounts).
    """

    kind: IdentityKind
    factors: tuple[Factor, ...]
    authority: Factor | None = None

    def __post_init__(self) -> None:
        if not self.factors:
            raise ValueError("an identity check needs at least one factor")
        if self.kind == "two_factors" and len(self.factors) < 2:
            raise ValueError("a two-factor identity check needs two factors")
        if (self.kind == "requester_authority") != (self.authority is not None):
            raise ValueError("a requester_authority check needs an authority step, and only it has one")

    @property
    def tools(self) -> frozenset[str]:
        """Every tool the check calls."""
        steps = [*self.factors, *([self.authority] if self.authority else [])]
        return frozenset(step.tool for step in steps)


def one_factor(*factors: Factor) -> IdentityCheck:
    """The caller is verified by any one of `factors`, tried in order."""
    return IdentityCheck("one_factor", tuple(factors))


def two_factors(first: Factor, second: Factor) -> IdentityCheck:
    """The caller is verified by both factors; `second.carries` receives the id `first` verified."""
    return IdentityCheck("two_factors", (first, second))


def requester_authority(authority: Factor, *requester: Factor) -> IdentityCheck:
    """The requester is verified by one of `requester`, then `authority` grants (or refuses) the subject."""
    return IdentityCheck("requester_authority", tuple(requester), authority)
