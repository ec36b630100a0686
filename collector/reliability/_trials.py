"""Per task type figures from graded trials: the table `passhat replay` prints, whatever the trials' source."""

from __future__ import annotations

import collections
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from passhat.collector.reliability._estimators import settled
from passhat.collector.reliability._harness import is_harness_failure
from passhat.collector.reliability._summary import TaskTypeSummary, summarize_task_type

TABLE_FIELDS = (
    "tickets",
    "trials_per_ticket",
    "trials",
    "settled_early",
    "pass_at_1",
    "pass_at_k",
    "pass_hat_k",
    "pass_at_1_ci",
    "pass_at_k_ci",
    "pass_hat_k_ci",
    "pass_hat_k_half_width",
    "sample_size",
)
"""The per-task-type summary fields both replay tables print and emit (keys of ``TaskTypeSummary.to_dict``)."""


class GradedTrial(Protocol):
    """What a per-task-type summary reads of one trial (a stored trial row and a sandbox result both have it)."""

    @property
    def domain(self) -> str | None: ...

    @property
    def task_type(self) -> str: ...

    @property
    def ticket_id(self) -> str: ...

    @property
    def attempt(self) -> int: ...

    @property
    def passed(self) -> bool: ...

    @property
    def failure_label(self) -> str | None: ...

    @property
    def failure_evidence(self) -> str | None: ...


@dataclass(frozen=True)
class TaskTypeTrials:
    """One (domain, task type): its tickets' pass@1, pass@k and pass^k with intervals, and failure signatures."""

    domain: str
    task_type: str
    summary: TaskTypeSummary
    signatures: dict[str, int] = field(default_factory=dict)
    unsettled_tickets: int = 0
    harness_failures: int = 0  # trials the harness broke (infra_error, simulator_error): in no figure

    def to_dict(self) -> dict[str, Any]:
        """The row `passhat replay --json` prints for the task type."""
        summary = self.summary.to_dict()
        return {
            "domain": self.domain,
            "task_type": self.task_type,
            **{name: summary[name] for name in TABLE_FIELDS},
            "unsettled_tickets": self.unsettled_tickets,
            "harness_failures": self.harness_failures,
            "signatures": dict(self.signatures),
        }


def summarize_trials(trials: Iterable[GradedTrial], k: int, *, min_trials: int | None = None) -> list[TaskTypeTrials]:
    """Per (domain, task type), in that order: the tickets whose pass^k is settled, summarised at k.

    A ticket is settled with k trials, or earlier once one trial passed and one failed (curtailed replay); an
    unsettled ticket says nothing about pass^k and is left out of the figures but counted as
    ``unsettled_tickets`` (its failed trials still count under their signature); a task type left with no
    ticket is absent. ``min_trials`` (curtailed replay) takes pass@1 from each ticket's first ``min_trials``
    attempts. A trial the harness broke (`is_harness_failure`) is in no figure and no signature count, only in
    ``harness_failures``: whichever path calls this, the rule is the same.
    """
    passed: dict[tuple[str, str], dict[str, list[bool]]] = collections.defaultdict(dict)
    signatures: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(collections.Counter)
    broken: collections.Counter[tuple[str, str]] = collections.Counter()
    for trial in sorted(trials, key=lambda t: t.attempt):
        key = (trial.domain or "unknown", trial.task_type)
        if is_harness_failure(trial):
            broken[key] += 1
            continue
        passed[key].setdefault(trial.ticket_id, []).append(trial.passed)
        if trial.failure_label and not trial.passed:
            signatures[key][trial.failure_label] += 1
    found = []
    for key in sorted(passed):
        everything = list(passed[key].values())
        keep = settled([len(v) for v in everything], [sum(v) for v in everything], k)
        tickets = [outcomes for outcomes, ok in zip(everything, keep, strict=True) if ok]
        if not tickets:
            continue
        n = np.array([len(outcomes) for outcomes in tickets])
        c = np.array([sum(outcomes) for outcomes in tickets])
        first = None if min_trials is None else [outcomes[:min_trials] for outcomes in tickets]
        summary = summarize_task_type(
            n,
            c,
            k,
            first_n=None if first is None else [len(v) for v in first],
            first_c=None if first is None else [sum(v) for v in first],
        )
        found.append(
            TaskTypeTrials(
                key[0],
                key[1],
                summary,
                dict(sorted(signatures[key].items())),
                len(everything) - len(tickets),
                broken[key],
            )
        )
    return found
