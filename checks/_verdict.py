"""What a check sees (the context) and what it returns (a verdict with diagnostics, never a bare boolean)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from passhat import semconv
from passhat.checks._conversation import ToolCallRecord, Turn
from passhat.checks._diff import StateDiff
from passhat.checks._snapshot import Snapshot
from passhat.checks._values import to_jsonable

Claim = tuple[str, ...]
"""What a check accounts for: ``(table, key)`` claims a whole row, ``(table, key, column)`` one column of it."""

ROLES: tuple[str, ...] = (
    "required_write",
    "forbidden_change",
    "other_writes",
    "disclosure",
    "confidentiality",
    "consent",
)
"""What a check declares it checks (``@check(role=...)``, or a ``role`` attribute on a plain check): a write the
task requires, a change it forbids, writes nothing else accounts for, a fact the agent must say, a value it must
never say, the customer's yes before a write. The failure classifier reads roles, never check names."""


@dataclass(frozen=True)
class Diagnostic:
    """Why a check failed, precisely: which table, row, field, what was expected and what was there."""

    check: str
    message: str
    table: str | None = None
    key: dict[str, Any] | None = None
    field: str | None = None
    expected: Any = None
    actual: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "message": self.message,
            "table": self.table,
            "key": to_jsonable(self.key),
            "field": self.field,
            "expected": to_jsonable(self.expected),
            "actual": to_jsonable(self.actual),
        }


@dataclass(frozen=True)
class Verdict:
    """The outcome of one check: passed or not, why (diagnostics), and the verdicts of its parts.

    ``error`` is set when the check itself broke (raised, or returned something that is not a verdict): that
    is a fault in the check, not in the agent, and the failure classifier never blames the agent for it.
    ``spec`` is the JSON-serialisable spec the check was built from, when it has one, so it can be re-run.
    """

    passed: bool
    check: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    children: list[Verdict] = field(default_factory=list)
    spec: dict[str, Any] | None = None
    error: str | None = None
    role: str | None = None
    """What the check declares it checks (one of ``ROLES``); None for a composite or an undeclared check."""

    @property
    def score(self) -> float:
        """1.0 or 0.0, for ``gen_ai.evaluation.score.value``."""
        return 1.0 if self.passed else 0.0

    @property
    def label(self) -> str:
        """``pass`` or ``fail``, for ``gen_ai.evaluation.score.label``."""
        return "pass" if self.passed else "fail"

    def walk(self) -> list[Verdict]:
        """This verdict and every verdict below it, depth first."""
        found = [self]
        for child in self.children:
            found.extend(child.walk())
        return found

    def failures(self) -> list[Diagnostic]:
        """Every diagnostic of every failing verdict in the tree (what went wrong, in order)."""
        return [diagnostic for verdict in self.walk() if not verdict.passed for diagnostic in verdict.diagnostics]

    def errors(self) -> list[str]:
        """The faults of checks that broke, anywhere in the tree."""
        return [verdict.error for verdict in self.walk() if verdict.error is not None]

    @property
    def explanation(self) -> str:
        """One sentence per failure, or that the check passed; for ``gen_ai.evaluation.explanation``."""
        if self.passed:
            return f"{self.check}: passed"
        lines = [diagnostic.message for diagnostic in self.failures()]
        return "\n".join(lines) if lines else f"{self.check}: failed"

    def evaluation_attributes(self) -> dict[str, str | float]:
        """The attributes of a ``gen_ai.evaluation.result`` span event reporting this verdict."""
        return {
            semconv.EVALUATION_NAME: self.check,
            semconv.EVALUATION_SCORE_VALUE: self.score,
            semconv.EVALUATION_SCORE_LABEL: self.label,
            semconv.EVALUATION_EXPLANATION: self.explanation,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "check": self.check,
            "diagnostics": [diagnostic.to_dict() for diagnostic in self.diagnostics],
            "children": [child.to_dict() for child in self.children],
            "spec": self.spec,
            "error": self.error,
            "role": self.role,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        """A verdict read back from ``to_dict`` (expected and actual values stay in their JSON form)."""
        try:
            return cls(
                passed=bool(data["passed"]),
                check=str(data["check"]),
                diagnostics=[Diagnostic(**item) for item in data.get("diagnostics", [])],
                children=[cls.from_dict(child) for child in data.get("children", [])],
                spec=data.get("spec"),
                error=data.get("error"),
                role=data.get("role"),
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a stored verdict ({type(exc).__name__}: {exc})") from None


@dataclass(frozen=True)
class CheckContext:
    """Everything a check may look at after a trial: the state diff, what the agent said, the starting state.

    ``claimed`` holds what sibling checks inside ``all_of`` account for: ``(table, key)`` for a whole row and
    ``(table, key, column)`` for one column of it (``key`` as produced by ``RowChange.sort_key``);
    ``no_other_writes`` allows exactly those. ``matched`` holds the rows siblings found exactly as expected;
    ``inserted`` does not report them as near misses. ``all_of`` sets both.

    ``conversation`` holds the trial's turns (with the customer's consents) and ``tool_calls`` the agent's calls,
    each with its turn: what ``confirmed_before`` reads. Empty when unknown (a check then has nothing to judge).
    """

    diff: StateDiff
    final_response: str = ""
    agent_messages: list[str] = field(default_factory=list)
    initial: Snapshot | None = None
    conversation: tuple[Turn, ...] = ()
    tool_calls: tuple[ToolCallRecord, ...] = ()
    claimed: frozenset[Claim] = frozenset()
    matched: frozenset[tuple[str, str]] = frozenset()


class Check(Protocol):
    """A check: called with the context of one trial, returns its verdict."""

    def __call__(self, ctx: CheckContext, /) -> Verdict: ...
