"""The lists a team works with: the tickets list's filters, sort and pages (asked of the store) and a run's tickets,
least reliable first, a page at a time."""

from __future__ import annotations

import datetime as dt
import math
import threading
import urllib.parse
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, cast

from passhat.collector.reliability import HarnessFailure, harness_failures
from passhat.collector.store import (
    TICKET_SORTS,
    AlertEvent,
    ReplayRun,
    Source,
    StatusCode,
    Store,
    TicketFilter,
    TicketSort,
    TicketTally,
    parse_period,
    week_of,
)
from passhat.collector.ui._grades import graded_filters
from passhat.collector.ui._pages import REPORT_KIND, TicketDots, notices, ticket_dots

PAGE = 50
SORT_LABELS: dict[str, str] = {
    "time": "newest first",
    "task_type": "task type",
    "verdict": "least reliable first",
}
RECENT_WEEKS = 12
MAX_VALUE = 400  # characters of one filter (a ticket id's bound)


class ListError(ValueError):
    """A query string a list cannot read; the message says what is wrong and what to send instead."""


def _day_ns(value: str, *, end: bool = False) -> int | None:
    if not value:
        return None
    try:
        day = dt.date.fromisoformat(value)
    except ValueError:
        raise ListError(f"dates look like 2026-11-30, not {value!r}") from None
    moment = dt.datetime.combine(day + dt.timedelta(days=1 if end else 0), dt.time(), dt.UTC)
    return int(moment.timestamp()) * 10**9


def _period_ns(value: str) -> tuple[int | None, int | None]:
    if not value:
        return None, None
    try:
        period = parse_period(value)
    except ValueError:
        raise ListError(
            f"cannot read the period {value[:40]!r}: write an ISO week like 2026-W48 or a day like 2026-11-30, "
            "or leave it out"
        ) from None
    return int(period.start_datetime().timestamp()) * 10**9, int(period.end_datetime().timestamp()) * 10**9


def _later(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


def _earlier(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


@dataclass(frozen=True)
class TicketQuery:
    """The tickets list's query string, as sent (for the form and the links) and as a store filter."""

    values: dict[str, str]
    filters: TicketFilter
    offset: int

    KEYS = (
        "q", "ticket", "task_type", "domain", "source", "status", "outcome", "period", "since", "until", "verdict",
        "signature", "replays", "sort",
    )  # fmt: skip

    @classmethod
    def read(cls, values: dict[str, str], offset: int) -> TicketQuery:
        """Every filter of the query string; a select's unknown value is ignored, a malformed date refused."""
        kept = {key: values.get(key, "").strip() for key in cls.KEYS}
        for key, value in kept.items():
            if len(value) > MAX_VALUE:
                raise ListError(f"{key} is {len(value)} characters long: send at most {MAX_VALUE}")
        graded = graded_filters(kept["verdict"], kept["signature"], kept["replays"])
        kept.update(
            verdict=graded.verdict or "",
            signature=graded.signature or "",
            replays=graded.replays or "",
            sort=kept["sort"] if kept["sort"] in TICKET_SORTS and kept["sort"] != "time" else "",
        )
        start, end = _period_ns(kept["period"])
        filters = TicketFilter(
            search=kept["q"] or None,
            ticket_id_prefix=kept["ticket"] or None,
            task_type=kept["task_type"] or None,
            domain=kept["domain"] or None,
            source=cast(Source, kept["source"]) if kept["source"] in ("production", "sandbox") else None,
            status=cast(StatusCode, kept["status"]) if kept["status"] in ("ok", "error", "unset") else None,
            outcome=kept["outcome"] or None,
            since_ns=_later(_day_ns(kept["since"]), start),
            until_ns=_earlier(_day_ns(kept["until"], end=True), end),
            verdict=graded.verdict,
            signature=graded.signature,
            replays=graded.replays,
            sort=cast(TicketSort, kept["sort"] or "time"),
        )
        return cls(kept, filters, offset)

    def link(self, **changes: Any) -> str:
        """This query string with some values changed (empty values left out)."""
        merged = {**self.values, "offset": str(self.offset), **{k: str(v) for k, v in changes.items()}}
        return urllib.parse.urlencode({k: v for k, v in merged.items() if v and v != "0"})


@dataclass(frozen=True)
class Pager:
    """Where a page sits in its list: 'tickets 51–100 of 162' and the offsets of its neighbours."""

    offset: int
    shown: int
    total: int
    size: int = PAGE

    @property
    def first(self) -> int:
        return self.offset + 1 if self.shown else 0

    @property
    def last(self) -> int:
        return self.offset + self.shown

    @property
    def previous(self) -> int | None:
        return max(self.offset - self.size, 0) if self.offset > 0 else None

    @property
    def next(self) -> int | None:
        return self.offset + self.size if self.offset + self.size < self.total else None

    @property
    def pages(self) -> int:
        return max(math.ceil(self.total / self.size), 1)

    @property
    def number(self) -> int:
        return self.offset // self.size + 1


def ticket_list(store: Store, project: str, query: TicketQuery) -> dict[str, Any]:
    """One page of the tickets list, its total and its pager, all counted and sorted by the store."""
    page = store.ticket_page(project, query.filters, limit=PAGE, offset=query.offset)
    return {"rows": page.rows, "pager": Pager(query.offset, len(page.rows), page.total), "query": query}


def recent_periods(today: dt.date | None = None, weeks: int = RECENT_WEEKS) -> list[str]:
    """The ISO weeks a list offers to filter by, this week first."""
    week = week_of(today or dt.datetime.now(dt.UTC).date())
    return [week.name, *(week.previous(i).name for i in range(1, weeks))]


# --- a run's tickets -----------------------------------------------------------------------------------------
def _reliability(tally: TicketTally) -> tuple[float, str, str]:
    counted = tally.attempts.bit_count()  # its dots: the attempts that speak about the agent
    # Tickets whose every trial the harness broke say nothing about the agent: after the measured ones.
    return (tally.passes / counted if counted else 2.0, tally.task_type, tally.ticket_id)


@dataclass(frozen=True)
class RunTickets:
    """A run page's tickets: one page of them, least reliable first."""

    rows: list[TicketDots]
    pager: Pager
    failing: int = 0  # tickets with at least one failed attempt, in the whole run


def run_tickets(rows: RunRows, offset: int) -> RunTickets:
    """A page from `offset` of a run's tickets ranked by their pass rate (`RunRowsCache`: lowest first, then task
    type and id); only the page shown is drawn attempt by attempt."""
    shown = ticket_dots(rows.ranked[offset : offset + PAGE], ordered=False)
    return RunTickets(shown, Pager(offset, len(shown), len(rows.ranked)), rows.failing)


@dataclass(frozen=True)
class RunRows:
    """What a run page reads beyond its figures: its tickets' tallies ranked least reliable first, how many
    failed an attempt, and the causes of the trials the harness broke."""

    ranked: list[TicketTally]
    harness: list[HarnessFailure]
    failing: int = 0


class RunRowsCache:
    """`RunRows` of finished runs (they never change), computed once per (project, run): ranking a run's tickets
    walks every tally, and the harness's causes read the run's trials the harness broke."""

    def __init__(self, size: int = 64) -> None:
        self._lock = threading.Lock()
        self._size = size
        self._entries: OrderedDict[tuple[str, str], RunRows] = OrderedDict()

    def run(self, store: Store, project: str, run: ReplayRun, tallies: list[TicketTally]) -> RunRows:
        key = (project, run.run_id)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                return hit
        found = RunRows(
            sorted(tallies, key=_reliability),
            harness_failures(store.harness_trials(project, run.run_id)),
            sum(1 for tally in tallies if tally.passes < tally.attempts.bit_count()),
        )
        if run.status == "finished":
            with self._lock:
                self._entries[key] = found
                while len(self._entries) > self._size:
                    self._entries.popitem(last=False)
        return found


def run_report(store: Store, project: str, run: ReplayRun) -> AlertEvent | None:
    """The newest delivery of a report made from this run, if one was sent."""
    for event in notices(store, project):
        if event.payload.get("kind") == REPORT_KIND and event.payload.get("run_id") == run.run_id:
            return event
    return None


def report_written(run: ReplayRun) -> str:
    """Where the run's report was written when the run finished (its `report.html`, as the run's summary
    records it), or "" when it was not (a run without a report folder; `passhat report` records no file)."""
    written = (run.summary or {}).get("report")
    path = written.get("html") if isinstance(written, dict) else None
    return path if isinstance(path, str) else ""
