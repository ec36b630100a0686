"""What each page shows, assembled from the store (HTTP and templates live in `_router`)."""

from __future__ import annotations

import datetime as dt
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from passhat.collector.store import AlertEvent, NotReplayable, ReplayRun, RunParams, Store, TicketTally
from passhat.collector.ui._digest import RunDigest, digest_of
from passhat.collector.ui._figures import History, TaskTypeFigures, official_runs, period_of
from passhat.collector.ui._kept import keep_digest, kept_digest

NOTICE_KINDS = ("fired", "resolved", "test")
REPORT_KIND = "report"  # a period's report sent to channels (passhat.collector.alerts.REPORT_KIND)
TRAFFIC_DAYS = 14
_V = TypeVar("_V")


class _Lru(Generic[_V]):
    """A few values kept per (project, run id), the least recently used dropped first."""

    def __init__(self, size: int) -> None:
        self._lock = threading.Lock()
        self._size = size
        self._entries: OrderedDict[tuple[str, str], _V] = OrderedDict()

    def get(self, key: tuple[str, str]) -> _V | None:
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
            return hit

    def put(self, key: tuple[str, str], value: _V) -> None:
        with self._lock:
            self._entries[key] = value
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)


class FigureCache:
    """Digests (figures, headlines, failures) and per-ticket tallies of finished runs, which never change: read
    once per (project, run). A finished run's digest is read from the store, where the first computation of it
    after the run finished kept it (`_kept`), so a start does not count every ticket again."""

    def __init__(self, size: int = 64, tallies: int = 16) -> None:
        self._digests: _Lru[RunDigest] = _Lru(size)
        self._tallies: _Lru[list[TicketTally]] = _Lru(tallies)  # a run's tickets: pages of one run at a time

    def tallies(self, store: Store, project: str, run: ReplayRun) -> list[TicketTally]:
        key = (project, run.run_id)
        hit = self._tallies.get(key)
        if hit is not None:
            return hit
        tallies = store.ticket_tallies(project, run.run_id)
        if run.status == "finished":
            self._tallies.put(key, tallies)
        return tallies

    def task_type_tallies(self, store: Store, project: str, run: ReplayRun, task_type: str) -> list[TicketTally]:
        """One task type's tickets of a run: from the run's tallies when they were read, else only its own (a
        task type's page reads its tickets, not the run's)."""
        whole = self._tallies.get((project, run.run_id))
        if whole is not None:
            return [t for t in whole if t.task_type == task_type]
        key = (project, f"{run.run_id}\x00{task_type}")
        hit = self._tallies.get(key)
        if hit is not None:
            return hit
        tallies = store.ticket_tallies(project, run.run_id, task_type=task_type)
        if run.status == "finished":
            self._tallies.put(key, tallies)
        return tallies

    def digest(self, store: Store, project: str, run: ReplayRun) -> RunDigest:
        key = (project, run.run_id)
        hit = self._digests.get(key)
        if hit is not None:
            return hit
        digest = kept_digest(store, project, run)
        if digest is None:
            digest = digest_of(run, self.tallies(store, project, run))
            keep_digest(store, project, run, digest)
        if run.status == "finished":
            self._digests.put(key, digest)
        return digest

    def history(self, store: Store, project: str, *, periods: int = 8) -> History:
        runs = list(reversed(official_runs(store, project, periods=periods)))
        by_period = {period_of(r): r for r in runs}
        return History(
            list(by_period),
            by_period,
            {name: self.digest(store, project, run).figures for name, run in by_period.items()},
            _LazyTallies(lambda run: self.tallies(store, project, run), by_period),
        )


class _LazyTallies(Mapping[str, list[TicketTally]]):
    """Each period's tallies, read from the store when a page first asks for them (the overview never does)."""

    def __init__(self, load: Callable[[ReplayRun], list[TicketTally]], runs: Mapping[str, ReplayRun]) -> None:
        self._load = load
        self._runs = runs

    def __getitem__(self, period: str) -> list[TicketTally]:
        return self._load(self._runs[period])

    def __iter__(self) -> Iterator[str]:
        return iter(self._runs)

    def __len__(self) -> int:
        return len(self._runs)


# --- overview ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OverviewRow:
    task_type: str
    latest: TaskTypeFigures | None
    trend: list[float | None]
    traffic: list[int]
    open_alerts: int


def open_alerts(events: list[AlertEvent]) -> list[AlertEvent]:
    """Alerts whose latest notice (per rule and scope) fired and has not resolved since."""
    latest: dict[tuple[str, str | None], AlertEvent] = {}
    for event in events:  # newest first
        kind = event.payload.get("kind")
        if kind in ("fired", "resolved"):
            latest.setdefault((event.rule, event.task_type), event)
    return [e for e in latest.values() if e.payload.get("kind") == "fired"]


def notices(store: Store, project: str, *, limit: int = 200) -> list[AlertEvent]:
    """Alert notices (fired, resolved, test) and report deliveries, newest first: not delivery attempts or
    evaluation state."""
    events = store.list_alert_events(project, limit=limit * 5)
    return [e for e in events if e.payload.get("kind") in (*NOTICE_KINDS, REPORT_KIND)][:limit]


def overview(store: Store, project: str, cache: FigureCache, *, today: dt.date | None = None) -> dict[str, Any]:
    today = today or dt.datetime.now(dt.UTC).date()
    hist = cache.history(store, project)
    days = [today - dt.timedelta(days=i) for i in range(TRAFFIC_DAYS - 1, -1, -1)]
    per_day: dict[str, Counter[dt.date]] = {}
    for row in store.traffic(project, days=TRAFFIC_DAYS, today=today):
        per_day.setdefault(row.task_type, Counter())[row.day] += row.tickets
    alerts = open_alerts(notices(store, project))
    open_by_type = Counter(a.task_type for a in alerts)
    names = sorted(set(hist.task_types()) | set(per_day))
    rows = [
        OverviewRow(
            task_type=name,
            latest=hist.latest(name),
            trend=[None if f is None else f.summary.pass_hat_k for _, f in hist.series(name)],
            traffic=[per_day.get(name, Counter())[d] for d in days],
            open_alerts=open_by_type[name],
        )
        for name in names
    ]
    # The least reliable first; task types without figures (traffic only) last.
    rows.sort(key=lambda r: (r.latest is None, r.latest.summary.pass_hat_k if r.latest else 0.0, r.task_type))
    return {"rows": rows, "periods": hist.periods, "alerts": alerts, "days": days}


# --- task type ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SampledTicket:
    ticket_id: str
    run_id: str
    trials: int
    passed: int
    signatures: list[str] = field(default_factory=list)

    @property
    def outcome(self) -> str:
        if self.passed == self.trials:
            return "all_passed"
        return "all_failed" if self.passed == 0 else "some_failed"


OUTCOME_LABELS = {"all_passed": "passed every time", "some_failed": "failed some", "all_failed": "failed every time"}


def sampled_tickets(tallies: list[TicketTally], task_type: str, run_id: str) -> list[SampledTicket]:
    """The task type's sampled tickets of a run, least reliable first (tickets with counted trials only)."""
    found = []
    for tally in tallies:
        if tally.task_type != task_type or tally.trials <= 0:
            continue
        labels = set(tally.signatures)
        if tally.trials - tally.passes > sum(tally.signatures.values()):
            labels.add("unclassified")
        found.append(SampledTicket(tally.ticket_id, run_id, tally.trials, tally.passes, sorted(labels)))
    return sorted(found, key=lambda t: (t.passed / t.trials, t.ticket_id))


def task_type_page(
    store: Store, project: str, cache: FigureCache, name: str, *, period: str | None, outcome: str, signature: str
) -> dict[str, Any]:
    hist = cache.history(store, project)
    series = hist.series(name)
    chosen = period if period in hist.periods else (hist.periods[-1] if hist.periods else None)
    run = hist.runs[chosen] if chosen else None
    tickets = sampled_tickets(cache.task_type_tallies(store, project, run, name), name, run.run_id) if run else []
    all_signatures = sorted({s for t in tickets for s in t.signatures})
    if outcome in OUTCOME_LABELS:
        tickets = [t for t in tickets if t.outcome == outcome]
    if signature:
        tickets = [t for t in tickets if signature in t.signatures]
    signature_rows = sorted({s for _, f in series if f is not None for s in f.signatures})
    return {
        "name": name,
        "series": series,
        "chart_points": [
            (p, None, None, None) if f is None else (p, f.summary.pass_hat_k, *f.summary.pass_hat_k_ci)
            for p, f in series
        ],
        "periods": hist.periods,
        "period": chosen,
        "run": hist.runs.get(chosen) if chosen else None,
        "tickets": tickets,
        "signatures": all_signatures,
        "signature_rows": signature_rows,
        "outcome": outcome,
        "signature": signature,
        "known": bool(signature_rows) or any(f is not None for _, f in series),
    }


# --- runs and attempts -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunProgress:
    """A run's trials done of those planned, and its sampled tickets, of which those not measured."""

    done: int
    planned: int
    sampled: int
    unreplayable: list[NotReplayable]


def run_progress(run: ReplayRun, tallies: list[TicketTally]) -> RunProgress:
    """The trials done and planned (the trials per ticket of each sampled ticket but those never replayed), and
    the sampled tickets not measured: a finished run's final list (with the tickets whose rows did not fit the
    sandbox), a running run's what planning found."""
    params = RunParams.of(run)
    final = (run.summary or {}).get("not_replayable_tickets")
    unreplayable = (
        [NotReplayable.from_dict(item) for item in final if isinstance(item, dict)]
        if isinstance(final, list)
        else list(params.not_replayable)
    )
    # Tickets never replayed plan no trial; those whose every trial the harness broke ran theirs.
    skipped = {item.ticket_id for item in unreplayable} & set(params.tickets) - {t.ticket_id for t in tallies}
    planned = (len(params.tickets) - len(skipped)) * params.trials
    done = sum(t.trials + t.harness_errors for t in tallies)
    return RunProgress(done, max(planned, done), len(params.tickets), unreplayable)


@dataclass(frozen=True)
class TicketDots:
    """One ticket's row on a run page: a dot per counted attempt, and its trials lost to the harness."""

    task_type: str
    ticket_id: str
    dots: list[tuple[int, bool]]  # (attempt counted from 1, passed)
    passes: int
    harness_errors: int
    signatures: list[str]


def ticket_dots(tallies: list[TicketTally], *, ordered: bool = True) -> list[TicketDots]:
    """Tickets each drawn attempt by attempt from its tally's bit sets: by task type and id, or (``ordered=False``)
    in the order given."""
    rows = []
    for tally in sorted(tallies, key=lambda t: (t.task_type, t.ticket_id)) if ordered else tallies:
        dots, bits, attempt = [], tally.attempts, 0
        while bits:
            if bits & 1:
                dots.append((attempt + 1, bool(tally.passed >> attempt & 1)))
            bits >>= 1
            attempt += 1
        rows.append(
            TicketDots(
                tally.task_type, tally.ticket_id, dots, tally.passes, tally.harness_errors, sorted(tally.signatures)
            )
        )
    return rows


def failing_diagnostics(verdict: dict[str, Any] | None) -> list[str]:
    """The messages of every failing check in a stored verdict tree (what went wrong, in order)."""
    if not verdict:
        return []
    found: list[str] = []
    stack = [verdict]
    while stack:
        node = stack.pop(0)
        if not node.get("passed", True):
            found.extend(str(d.get("message", "")) for d in node.get("diagnostics", []) if isinstance(d, dict))
            if node.get("error"):
                found.append(f"the check broke: {node['error']}")
        stack.extend(c for c in node.get("children", []) if isinstance(c, dict))
    return found
