"""Curtailed replay: stop a ticket's trials as soon as its pass^k and pass@k are settled.

With k attempts a ticket, the full design's per-ticket pass^k is 1 when all k pass and pass@k is 1 when any
passes. Once one attempt passed and another failed, pass^k = 0 and pass@k = 1 whatever the remaining attempts
do, so running them changes neither estimator: stopping there gives exactly the values the full design computes
for the same attempts (a trial's outcome depends only on scenario, attempt and agent). Tickets that pass every
time, or fail every time, still run all k. Attempts that ended in a simulator or infrastructure error are not
outcomes of the agent, so they count towards the k attempts but do not settle a ticket.

pass@1 cannot use every trial run: the number of trials depends on their outcomes, and c/n of such a ticket is
biased. Each ticket therefore always runs its first ``min_trials`` attempts, and pass@1 is taken from those. The
binomial likelihood of a ticket's success rate is unchanged by a stopping rule that looks only at outcomes so
far, so the mixture fit (EM) uses every trial run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

Outcome = bool | None
"""A trial's outcome for the stopping rule: passed, failed, or None when a simulator or infra error ended it."""


@dataclass(frozen=True)
class Curtailment:
    """The curtailed design: at least ``min_trials`` attempts a ticket, then stop once settled or at k."""

    min_trials: int = 2

    def __post_init__(self) -> None:
        if self.min_trials < 1:
            raise ValueError(f"min_trials must be at least 1, got {self.min_trials}")


def is_settled(outcomes: list[Outcome], k: int) -> bool:
    """Whether a ticket's attempts so far settle its pass^k and pass@k (k attempts run, or a pass and a fail)."""
    return len(outcomes) >= k or (True in outcomes and False in outcomes)


async def run_curtailed(
    attempt: Callable[[int], Awaitable[Outcome]],
    k: int,
    curtailment: Curtailment,
    *,
    known: Mapping[int, Outcome] | None = None,
) -> int:
    """Run one ticket's attempts 0, 1, ... under the curtailed design; return how many attempts it has.

    The first ``min_trials`` attempts run concurrently, the rest one at a time (each depends on the outcomes
    before it). ``known`` holds outcomes of attempts already run (a resumed replay), which are not run again.
    """
    done = dict(known or {})
    first = [a for a in range(min(curtailment.min_trials, k)) if a not in done]
    for a, outcome in zip(first, await asyncio.gather(*(attempt(a) for a in first)), strict=True):
        done[a] = outcome
    count = min(curtailment.min_trials, k)
    while not is_settled([done[a] for a in range(count)], k):
        if count not in done:
            done[count] = await attempt(count)
        count += 1
    return count
