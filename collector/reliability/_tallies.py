"""Per task type figures from per-ticket tallies: what a store counts (`Store.ticket_tallies`), never every trial.

The same figures as `summarize_trials` computes from trial rows, read from a ticket's counts: its trials and
passes, the passes among its first attempts (curtailed replay's pass@1), and its failures by signature.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

import numpy as np

from passhat.collector.reliability._estimators import settled
from passhat.collector.reliability._summary import TaskTypeSummary, summarize_task_type
from passhat.collector.reliability._trials import TaskTypeTrials


class TicketCounted(Protocol):
    """What a summary reads of one ticket's tally (`passhat.collector.store.TicketTally` has it)."""

    @property
    def domain(self) -> str | None: ...

    @property
    def task_type(self) -> str: ...

    @property
    def trials(self) -> int: ...

    @property
    def passes(self) -> int: ...

    @property
    def harness_errors(self) -> int: ...

    @property
    def signatures(self) -> Mapping[str, int]: ...

    def passes_in_first(self, m: int) -> int: ...


def settled_summary(
    tallies: Sequence[TicketCounted], k: int, *, min_trials: int | None = None
) -> tuple[TaskTypeSummary, int] | None:
    """The summary at k of the tickets among ``tallies`` (each with a counted trial) whose pass^k is settled, and
    how many those are; None when none is. Under a curtailed design (``min_trials``) pass@1 comes from each
    ticket's first ``min_trials`` attempts."""
    n_all = np.array([t.trials for t in tallies], dtype=np.int64)
    c_all = np.array([t.passes for t in tallies], dtype=np.int64)
    keep = settled(n_all, c_all, k)
    if not keep.any():
        return None
    kept = [t for t, ok in zip(tallies, keep, strict=True) if ok]
    first_n = first_c = None
    if min_trials is not None:
        first_n = [min(t.trials, min_trials) for t in kept]
        first_c = [t.passes_in_first(min_trials) for t in kept]
    return summarize_task_type(n_all[keep], c_all[keep], k, first_n=first_n, first_c=first_c), len(kept)


def summarize_tallies(
    tallies: Iterable[TicketCounted], k: int, *, min_trials: int | None = None
) -> list[TaskTypeTrials]:
    """Per (domain, task type), in that order: the settled tickets summarised at k (as `summarize_trials`).

    A ticket with no counted trial (every one ended in a harness error) says nothing and is skipped; a ticket
    whose pass^k is not settled is left out of the figures and counted as ``unsettled_tickets``; failures count
    under their signature whether or not their ticket settled.
    """
    grouped: dict[tuple[str, str], list[TicketCounted]] = collections.defaultdict(list)
    signatures: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(collections.Counter)
    broken: collections.Counter[tuple[str, str]] = collections.Counter()
    for tally in tallies:
        key = (tally.domain or "unknown", tally.task_type)
        broken[key] += tally.harness_errors
        if tally.trials <= 0:
            continue
        grouped[key].append(tally)
        signatures[key].update(tally.signatures)
    found = []
    for key in sorted(grouped):
        everything = grouped[key]
        found_settled = settled_summary(everything, k, min_trials=min_trials)
        if found_settled is None:
            continue
        summary, settled_count = found_settled
        unsettled = len(everything) - settled_count
        labels = dict(sorted(signatures[key].items()))
        found.append(TaskTypeTrials(key[0], key[1], summary, labels, unsettled, broken[key]))
    return found
