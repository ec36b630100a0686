"""Sandbox fidelity: per task type, production tickets' own pass rate beside the replays' pass@1.

Both figures measure the same agent on the same kind of ticket: the production rate grades what the deployed
agent really wrote (each production ticket's own changes, checked by its task type's check), pass@1 grades the
sandbox's attempts at the sampled tickets. Where the two disagree beyond their intervals, the sandbox may not
reflect production for that task type (its seed, its tools, its simulated customer), and the replayed tickets
whose production verdict differs from most of their attempts are the place to look.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from passhat.collector.reliability import wilson_interval

Interval = tuple[float, float]

FIDELITY_TEST = (
    "The production pass rate (a Wilson interval over the graded production tickets) and the replays' pass@1 (the "
    "report's interval over the sampled tickets) disagree when their {level:g}% intervals do not overlap."
)


@dataclass(frozen=True)
class ProductionGrade:
    """One production ticket's own verdict, as the report reads it (`ProductionVerdict` in the store)."""

    domain: str
    task_type: str
    ticket_id: str
    passed: bool
    signature: str | None = None

    @property
    def label(self) -> str:
        return "passed" if self.passed else (self.signature or "failed")


@dataclass(frozen=True)
class DifferingTicket:
    """A replayed ticket whose production verdict differs from most of its sandbox attempts."""

    ticket_id: str
    production: str  # `passed`, or the production failure's signature
    replays_passed: int
    replays: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "ticket_id": self.ticket_id,
            "production": self.production,
            "replays_passed": self.replays_passed,
            "replays": self.replays,
        }


@dataclass(frozen=True)
class TaskTypeFidelity:
    """One task type's production pass rate beside its replays' pass@1, and whether they agree."""

    domain: str
    task_type: str
    production_tickets: int
    production_passed: int
    production_rate: float | None
    production_ci: Interval | None
    replay_pass_at_1: float | None
    replay_ci: Interval | None
    replay_tickets: int
    production_signatures: dict[str, int] = field(default_factory=dict)
    differing: list[DifferingTicket] = field(default_factory=list)

    @property
    def agrees(self) -> bool | None:
        """False when the two intervals do not overlap; None when one of the two figures is missing."""
        if self.production_ci is None or self.replay_ci is None:
            return None
        return not (self.production_ci[1] < self.replay_ci[0] or self.replay_ci[1] < self.production_ci[0])

    @property
    def difference(self) -> float | None:
        """Production rate minus pass@1."""
        if self.production_rate is None or self.replay_pass_at_1 is None:
            return None
        return self.production_rate - self.replay_pass_at_1

    def to_dict(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "task_type": self.task_type,
            "production_tickets": self.production_tickets,
            "production_passed": self.production_passed,
            "production_pass_rate": self.production_rate,
            "production_pass_rate_ci": None if self.production_ci is None else list(self.production_ci),
            "production_signatures": dict(self.production_signatures),
            "replay_pass_at_1": self.replay_pass_at_1,
            "replay_pass_at_1_ci": None if self.replay_ci is None else list(self.replay_ci),
            "replay_tickets": self.replay_tickets,
            "difference": self.difference,
            "agrees": self.agrees,
            "differing_tickets": [d.to_dict() for d in self.differing],
        }


def sandbox_fidelity(
    grades: Sequence[ProductionGrade],
    replays: Mapping[tuple[str, str], tuple[float | None, Interval | None, int]],
    attempts: Mapping[str, tuple[int, int]],
    *,
    level: float = 0.95,
) -> list[TaskTypeFidelity]:
    """Per (domain, task type) with graded production tickets or replays: the two figures side by side.

    ``replays`` maps (domain, task type) to (pass@1, its interval, tickets sampled); ``attempts`` maps a
    replayed ticket id to (attempts passed, attempts)."""
    by_type: dict[tuple[str, str], list[ProductionGrade]] = {}
    for grade in grades:
        by_type.setdefault((grade.domain, grade.task_type), []).append(grade)
    found = []
    for key in sorted(set(by_type) | set(replays)):
        graded = sorted(by_type.get(key, []), key=lambda g: g.ticket_id)
        passed = sum(g.passed for g in graded)
        pass_at_1, replay_ci, sampled = replays.get(key, (None, None, 0))
        signatures: dict[str, int] = {}
        for grade in graded:
            if not grade.passed:
                signatures[grade.label] = signatures.get(grade.label, 0) + 1
        differing = []
        for grade in graded:
            if grade.ticket_id not in attempts:
                continue
            good, total = attempts[grade.ticket_id]
            if total and grade.passed != (good * 2 >= total):
                differing.append(DifferingTicket(grade.ticket_id, grade.label, good, total))
        found.append(
            TaskTypeFidelity(
                domain=key[0],
                task_type=key[1],
                production_tickets=len(graded),
                production_passed=passed,
                production_rate=passed / len(graded) if graded else None,
                production_ci=wilson_interval(passed, len(graded), level) if graded else None,
                replay_pass_at_1=pass_at_1,
                replay_ci=replay_ci,
                replay_tickets=sampled,
                production_signatures=dict(sorted(signatures.items())),
                differing=differing,
            )
        )
    return found
