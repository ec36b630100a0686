"""Choosing which real tickets to replay: deterministic, stratified by task type, by the ticket-id hash.

Within one (project, period, task type) the sample is the ``size`` tickets with the smallest
``passhat.ticket_hash``: the same rule as the SDK's head sampling (``is_sampled`` keeps hashes below a threshold),
so a ticket the SDK kept at a low rate is also among the first the collector replays, and re-running a sample
over the same data always picks the same tickets. Task types with no more than ``size`` tickets are taken whole.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar


class SampleableTicket(Protocol):
    """What the sampler needs to know of a ticket."""

    @property
    def ticket_id(self) -> str: ...
    @property
    def task_type(self) -> str: ...
    @property
    def ticket_hash(self) -> int: ...


T = TypeVar("T", bound=SampleableTicket)


@dataclass(frozen=True)
class StratumSample(Generic[T]):
    """The sample of one task type: which tickets, out of how many."""

    task_type: str
    population: int
    tickets: tuple[T, ...]

    @property
    def complete(self) -> bool:
        """True when the task type was small enough to be taken whole."""
        return len(self.tickets) == self.population


def sample_tickets(
    tickets: Iterable[T], *, size: int, sizes: Mapping[str, int] | None = None
) -> dict[str, StratumSample[T]]:
    """Stratified deterministic sample: per task type, the ``size`` tickets with the smallest hash.

    ``sizes`` overrides the size for named task types. A ticket id seen twice (e.g. two traces of one ticket)
    counts once.
    """
    if size < 1:
        raise ValueError(f"the sample size per task type must be at least 1, got {size}")
    for name, value in (sizes or {}).items():
        if value < 1:
            raise ValueError(f"the sample size of task type {name!r} must be at least 1, got {value}")
    strata: dict[str, dict[str, T]] = defaultdict(dict)
    for ticket in tickets:
        strata[ticket.task_type].setdefault(ticket.ticket_id, ticket)
    result: dict[str, StratumSample[T]] = {}
    for task_type in sorted(strata):
        members = sorted(strata[task_type].values(), key=lambda t: (t.ticket_hash, t.ticket_id))
        wanted = (sizes or {}).get(task_type, size)
        result[task_type] = StratumSample(task_type, len(members), tuple(members[:wanted]))
    return result
