"""Where a ticket's failing attempts depart from its passing ones: the first step that differs.

A step is one tool call (its name and arguments) and, for a write, whether the customer had confirmed before it
(the trial's consents, by transcript index, against the call's `turn`). Each failing attempt is lined up with the
passing attempt it shares the longest opening with; the first step after that shared opening is where it
departs: another tool, the same tool with other arguments, a write made without the confirmation the passing
attempt had, a call the passing attempt never made, or a stop where the passing attempt went on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from passhat.checks import ToolCallRecord
from passhat.collector.store import TrialRow

DivergenceKind = Literal["tool", "argument", "confirmation", "extra_call", "stopped"]


@dataclass(frozen=True)
class Step:
    """One tool call of an attempt, as compared across attempts."""

    name: str
    arguments: Mapping[str, Any]
    is_write: bool
    confirmed: bool  # a write made after the customer agreed (always True for a read)

    @property
    def call(self) -> str:
        arguments = ", ".join(f"{k}={v!r}" for k, v in self.arguments.items())
        return f"{self.name}({arguments})"


@dataclass(frozen=True)
class Divergence:
    """Where one failing attempt departs from the passing attempt closest to it."""

    attempt: int  # the failing attempt, counted from 1
    reference: int  # the passing attempt it is compared with, counted from 1
    step: int  # the step (tool call) where it departs, counted from 1
    kind: DivergenceKind
    failing: Step | None  # the failing attempt's step there (None: it made no further call)
    passing: Step | None  # the passing attempt's step there (None: it made no further call)
    fields: tuple[str, ...] = ()  # for an argument divergence: the arguments that differ

    @property
    def summary(self) -> str:
        """One line a reader takes in at a glance."""
        if self.kind == "stopped" and self.passing is not None:
            return f"stopped where attempt {self.reference} went on to call {self.passing.call}"
        if self.kind == "extra_call" and self.failing is not None:
            return f"called {self.failing.call}, which attempt {self.reference} never did"
        if self.kind == "confirmation" and self.failing is not None:
            return f"wrote {self.failing.call} before the customer confirmed (attempt {self.reference} waited)"
        if self.kind == "argument" and self.failing is not None and self.passing is not None:
            diffs = "; ".join(
                f"{name}={self.failing.arguments.get(name)!r} where attempt {self.reference} used "
                f"{self.passing.arguments.get(name)!r}"
                for name in self.fields
            )
            return f"{self.failing.name}: {diffs}"
        if self.failing is not None and self.passing is not None:
            return f"called {self.failing.call} where attempt {self.reference} called {self.passing.call}"
        return "departs here"


def steps(calls: Sequence[ToolCallRecord], consents: Sequence[tuple[int, str]]) -> list[Step]:
    """An attempt's tool calls as steps; a write counts as confirmed when a consent came at or before its turn
    (a call with no known turn counts as confirmed when the attempt had any consent)."""
    agreed = sorted(index for index, _ in consents)
    found = []
    for call in calls:
        confirmed = bool(agreed) if call.turn is None else any(index <= call.turn for index in agreed)
        found.append(Step(call.name, dict(call.arguments), call.is_write, confirmed or not call.is_write))
    return found


def _same(a: Step, b: Step) -> bool:
    return a.name == b.name and dict(a.arguments) == dict(b.arguments) and a.confirmed == b.confirmed


def _shared(a: Sequence[Step], b: Sequence[Step]) -> int:
    n = 0
    while n < len(a) and n < len(b) and _same(a[n], b[n]):
        n += 1
    return n


def departure(failing: Sequence[Step], passing: Sequence[Step]) -> tuple[int, DivergenceKind, tuple[str, ...]] | None:
    """(index of the first differing step, its kind, differing arguments), or None when the steps are equal."""
    n = _shared(failing, passing)
    if n == len(failing) and n == len(passing):
        return None
    if n == len(failing):
        return n, "stopped", ()
    if n == len(passing):
        return n, "extra_call", ()
    mine, theirs = failing[n], passing[n]
    if mine.name != theirs.name:
        return n, "tool", ()
    if dict(mine.arguments) != dict(theirs.arguments):
        names = sorted(set(mine.arguments) | set(theirs.arguments))
        return n, "argument", tuple(k for k in names if mine.arguments.get(k) != theirs.arguments.get(k))
    return n, "confirmation", ()


def divergences(trials: Sequence[TrialRow]) -> dict[int, Divergence]:
    """For each failing attempt of a ticket that also has passing attempts (harness failures left out: they say
    nothing about the agent), where it departs from the closest passing attempt; by attempt counted from 1.

    A failing attempt whose calls equal a passing attempt's is left out: its failure is not in its calls (what
    it said, or the state it found), and the page says so rather than marking a step."""
    counted = [t for t in trials if t.infra_error is None and t.simulator_error is None]
    passing = [(t.attempt, steps(t.details.tool_calls, t.details.consents)) for t in counted if t.passed]
    if not passing:
        return {}
    found: dict[int, Divergence] = {}
    for trial in counted:
        if trial.passed:
            continue
        mine = steps(trial.details.tool_calls, trial.details.consents)
        # The closest passing attempt: the longest shared opening, then the lowest attempt number.
        reference, theirs = max(passing, key=lambda p: (_shared(mine, p[1]), -p[0]))
        where = departure(mine, theirs)
        if where is None:
            continue
        index, kind, fields = where
        found[trial.attempt + 1] = Divergence(
            attempt=trial.attempt + 1,
            reference=reference + 1,
            step=index + 1,
            kind=kind,
            failing=mine[index] if index < len(mine) else None,
            passing=theirs[index] if index < len(theirs) else None,
            fields=fields,
        )
    return found
