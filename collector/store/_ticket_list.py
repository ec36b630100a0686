"""The ticket list's query: every filter, the sort and the page asked of a store at once (`Store.ticket_page`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from passhat.collector.store._rows import ReplaysFilter, Source, StatusCode, TicketRow, VerdictFilter

#: `time`: newest first; `task_type`: by task type, then newest first; `verdict`: the least reliable first
#: (production tickets graded failed, then ungraded and sandbox tickets, then passed; newest first within each).
TicketSort = Literal["time", "task_type", "verdict"]
TICKET_SORTS: tuple[TicketSort, ...] = ("time", "task_type", "verdict")


@dataclass(frozen=True)
class TicketFilter:
    """Which ticket attempts the list shows; a field left None does not filter.

    `search` keeps tickets whose id or recorded intent (its JSON text: field names and values) contains it,
    ignoring ASCII case and taken literally (`%` and `_` are not wildcards); `ticket_id_prefix` keeps ids starting
    with it (case kept). `since_ns` is inclusive and `until_ns` exclusive (start time). `verdict`, `signature` and
    `replays` are production tickets' (as in `Store.search_tickets_by_verdict`): any of them keeps production
    tickets only."""

    search: str | None = None
    ticket_id_prefix: str | None = None
    task_type: str | None = None
    domain: str | None = None
    source: Source | None = None
    status: StatusCode | None = None
    outcome: str | None = None
    since_ns: int | None = None
    until_ns: int | None = None
    verdict: VerdictFilter | None = None
    signature: str | None = None
    replays: ReplaysFilter | None = None
    sort: TicketSort = "time"

    @property
    def graded(self) -> bool:
        """Whether a production-only filter (verdict, signature, replays) is set."""
        return self.verdict is not None or self.signature is not None or self.replays is not None

    @property
    def empty(self) -> bool:
        """Whether the filters can match nothing at all (a production-only filter on sandbox tickets)."""
        return self.graded and self.source == "sandbox"


@dataclass(frozen=True)
class TicketPage:
    """One page of the ticket list and how many ticket attempts match the filters in all."""

    rows: list[TicketRow]
    total: int
