"""Per task type figures from graded trials: the table `passhat replay` prints, whatever the trials' source."""

from __future__ import annotations

import collections
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from passhat.collector.reliability._summary import TaskTypeSummary, summarize_task_type


class GradedTrial(Protocol):
    """What a per-task-type summary reads of one trial (a stored trial row and a sandbox result both have it)."""

    @property
    def domain(self) -> str | None: ...

    @property
    def task_type(self) -> str: ...

    @property
    def ticket_id(self) -> str: ...

    @property
    def passed(self) -> bool: ...

    @property
    def failure_label(self) -> str | None: ...


@dataclass(frozen=True)
class TaskTypeTrials:
    """One (domain, task type): its tickets' pass@1, pass@k and pass^k with intervals, and failure signatures."""

    domain: str
    task_type: str
    summary: TaskTypeSummary
    signatures: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The row `passhat replay --json` prints for the task type."""
        summary = self.summary.to_dict()
        return {
            "domain": self.domain,
            "task_type": self.task_type,
            **{name: summary[name] for name in ("tickets", "trials_per_ticket")},
            **{name: summary[name] for name in ("pass_at_1", "pass_at_k", "pass_hat_k", "pass_hat_k_ci")},
            "signatures": dict(self.signatures),
        }


def summarize_trials(trials: Iterable[GradedTrial], k: int) -> list[TaskTypeTrials]:
    """Per (domain, task type), in that order: tickets with at least k trials, summarised at k.

    A ticket with fewer than k trials says nothing about pass^k and is left out of the figures (its failed
    trials still count under their signature); a task type left with no ticket is absent. Which trials count
    (say, not those the simulated customer broke) is the caller's choice.
    """
    passed: dict[tuple[str, str], dict[str, list[bool]]] = collections.defaultdict(dict)
    signatures: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for trial in trials:
        key = (trial.domain or "unknown", trial.task_type)
        passed[key].setdefault(trial.ticket_id, []).append(trial.passed)
        if trial.failure_label and not trial.passed:
            signatures[key][trial.failure_label] += 1
    found = []
    for key in sorted(passed):
        tickets = [outcomes for outcomes in passed[key].values() if len(outcomes) >= k]
        if not tickets:
            continue
        n = np.array([len(outcomes) for outcomes in tickets])
        c = np.array([sum(outcomes) for outcomes in tickets])
        found.append(
            TaskTypeTrials(key[0], key[1], summarize_task_type(n, c, k), dict(sorted(signatures[key].items())))
        )
    return found
