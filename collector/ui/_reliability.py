"""The seed's views from a run's per-ticket tallies: headline figures (overall, per domain, per task type) with
their curve over k, the mixture behind the curve, what the figures mean for a day of traffic, and failure
signatures as shares per period.

Every figure comes from `reliability.headline_curve` (and, weighted by the period's traffic as the weekly report
weighs its headline, `reliability.weighted_headline_curve`), so a headline and the curve's band at the same k are
the same number and interval, and the traffic-weighted overall figure is the weekly report's. A day of traffic
is the run's period's own, as the report counts it (`reliability.daily_volumes`), so the failing customers a day are
the report's expected failed tickets a day. Tallies come from
the store's aggregation (`Store.ticket_tallies`), never from every trial, through each run's digest
(`_digest.RunDigest`, which a finished run keeps in the store: `_kept`).
"""

from __future__ import annotations

import datetime as dt
import functools
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

import numpy as np

from passhat.collector.reliability import (
    FailureProjection,
    MixtureSpread,
    SignatureShare,
    daily_volumes,
    mixture_spread,
    project_failures,
    signature_shares,
    weighted_headline_curve,
)
from passhat.collector.store import (
    ReplayRun,
    RunParams,
    Store,
    parse_period,
    reclassified,
    run_weights,
    traffic_rows,
)
from passhat.collector.ui._digest import ALL, Headline, RunDigest
from passhat.collector.ui._figures import History
from passhat.collector.ui._pages import FigureCache


# --- a run's views -----------------------------------------------------------------------------------------
class RunViews:
    """Everything the seed's views read of one run: its digest (kept in the store once the run finished), with
    the headlines weighted by the period's traffic combined from the task types' curves when first asked for."""

    def __init__(
        self, run: ReplayRun, digest: RunDigest, traffic: Callable[[], Mapping[str, float]] | None = None
    ) -> None:
        self.run = run
        self.digest = digest
        self._traffic = traffic  # the period's production tickets per task type, read when first needed
        self.names = digest.names
        self.failures = digest.failures
        self.settled_counts = digest.settled_counts
        self.task_types = digest.task_types

    @functools.cached_property
    def headlines(self) -> list[Headline]:
        """All task types weighted by the period's traffic (the weekly report's headline) and pooled (every ticket
        once), then each domain: weighted when its task types had traffic, pooled otherwise."""
        weights = dict(self._traffic()) if self._traffic is not None else {}
        found = [self.weighted(ALL, weights, None), self.digest.pooled]
        for domain, (names, pooled) in sorted(self.digest.domains.items()):
            found.append(self.weighted(domain, weights, names) or pooled)
        return [h for h in found if h is not None]

    def weighted(self, scope: str, weights: Mapping[str, float], names: AbstractSet[str] | None) -> Headline | None:
        """The task types' headlines (``names``, or all) combined by their traffic; None without any."""
        parts = [
            (h, weights.get(name, 0.0)) for name, h in sorted(self.task_types.items()) if names is None or name in names
        ]
        if not parts or sum(w for _, w in parts) <= 0:
            return None
        curve = weighted_headline_curve([h.curve for h, _ in parts], [w for _, w in parts])
        return Headline(scope, self.run.k, curve, sum(h.left_out for h, _ in parts), weighting="traffic")

    def mixture(self, task_type: str | None = None) -> MixtureSpread | None:
        """The mixture fitted to the settled tickets (cached by their distinct counts: fitted once)."""
        counts = self.settled_counts.get(task_type)
        if not counts:
            return None
        return _spread(tuple(sorted((n, c, w) for (n, c), w in counts.items())))


class ViewCache:
    """`RunViews` of finished runs (which never change), per (project, run): a page reads them in microseconds."""

    def __init__(self, size: int = 64) -> None:
        self._lock = threading.Lock()
        self._size = size
        self._entries: OrderedDict[tuple[str, str], RunViews] = OrderedDict()

    def get(
        self,
        project: str,
        run: ReplayRun,
        digest: RunDigest,
        traffic: Callable[[], Mapping[str, float]] | None = None,
    ) -> RunViews:
        key = (project, run.run_id)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                return hit
        views = RunViews(run, digest, traffic)
        if run.status == "finished":
            with self._lock:
                self._entries[key] = views
                while len(self._entries) > self._size:
                    self._entries.popitem(last=False)
        return views


# --- the mixture behind the curve --------------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def _spread(pairs: tuple[tuple[int, int, int], ...]) -> MixtureSpread:
    n = np.repeat([p[0] for p in pairs], [p[2] for p in pairs])
    c = np.repeat([p[1] for p in pairs], [p[2] for p in pairs])
    return mixture_spread(n, c)


# --- signatures as shares per period -----------------------------------------------------------------------
@dataclass(frozen=True)
class SignatureTable:
    """Failure signatures (rows) by period (columns): each cell a share of that period's failed trials."""

    periods: list[str]
    totals: list[int]
    rows: list[tuple[str, list[SignatureShare | None]]]


def signature_table(periods: dict[str, RunViews], task_type: str | None = None) -> SignatureTable:
    """Shares per period (oldest first), overall (``task_type`` None) or for one task type."""
    per_period = {
        p: {s.signature: s for s in signature_shares(views.failures.get(task_type, Counter()))}
        for p, views in periods.items()
    }
    names = Counter[str]()
    for shares in per_period.values():
        names.update({name: s.failures for name, s in shares.items()})
    rows = [(name, [per_period[p].get(name) for p in periods]) for name, _ in names.most_common()]
    totals = [sum(s.failures for s in per_period[p].values()) for p in periods]
    return SignatureTable(list(periods), totals, rows)


# --- traffic -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PeriodTraffic:
    """A period's production tickets a day per task type, as the weekly report counts them (`daily_volumes`:
    the period's tickets over its days with any traffic, classified tickets moved to their task type)."""

    period: str
    days: int  # the period's days with traffic
    volumes: dict[str, float]  # tickets a day per task type


def period_traffic(period: str, rows: Sequence[tuple[dt.date, str, int]]) -> PeriodTraffic:
    """``rows`` (day, task type, tickets) of one period, as the report's traffic basis."""
    return PeriodTraffic(period, len({day for day, _, _ in rows}), daily_volumes(rows))


def run_traffic(store: Store, project: str, run: ReplayRun) -> PeriodTraffic | None:
    """The production traffic of a run's period as its report weighs it; None for a run without a period."""
    name = RunParams.of(run).period
    if name is None:
        return None
    return period_traffic(name, reclassified(traffic_rows(store, project, parse_period(name)), run))


@dataclass(frozen=True)
class TrafficRow:
    task_type: str
    volume: float  # the period's production tickets a day
    projection: FailureProjection
    headline: Headline


@dataclass(frozen=True)
class TrafficView:
    period: str
    days: int  # the period's days with traffic
    measured_daily: float
    daily_tickets: float
    k: int
    rows: list[TrafficRow]
    unmeasured: list[str]  # task types with traffic but no figures (not replayed yet)
    failing: float
    failing_ci: tuple[float, float]
    repeat_affected: float
    repeat_affected_ci: tuple[float, float]


def traffic_view(views: RunViews, traffic: PeriodTraffic, *, daily_tickets: float | None = None) -> TrafficView | None:
    """Daily tickets × each task type's share of the period's traffic × its failure probability, summed.

    Daily tickets and shares are the run's period's own (`PeriodTraffic`, the weekly report's basis), so the
    failing customers a day are the report's expected failed tickets a day; ``daily_tickets`` (the calculator's)
    replaces the period's total, the shares kept. The total's interval adds the task types' bounds (every task
    type at its worst at once: conservative).
    """
    total = sum(traffic.volumes.values())
    if total <= 0:
        return None
    daily = total if daily_tickets is None else daily_tickets
    run = views.run
    rows, unmeasured = [], []
    for name, volume in sorted(traffic.volumes.items(), key=lambda item: (-item[1], item[0])):
        headline = views.task_types.get(name)
        if headline is None:
            unmeasured.append(name)
            continue
        projection = project_failures(
            daily_tickets=daily,
            share=volume / total,
            k=run.k,
            pass_at_1=(headline.curve.pass_at_1, *headline.curve.pass_at_1_ci),
            pass_hat_k=headline.pass_hat_k,
        )
        rows.append(TrafficRow(name, volume, projection, headline))

    def summed(value: str) -> float:
        return float(sum(getattr(r.projection, value) for r in rows))

    def summed_ci(value: str) -> tuple[float, float]:
        return (float(sum(getattr(r.projection, value)[0] for r in rows)),
                float(sum(getattr(r.projection, value)[1] for r in rows)))  # fmt: skip

    return TrafficView(
        traffic.period, traffic.days, total, daily, run.k, rows, unmeasured,
        summed("failing"), summed_ci("failing_ci"), summed("repeat_affected"), summed_ci("repeat_affected_ci"),
    )  # fmt: skip


# --- the overview's views ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class OverviewViews:
    """What the overview shows of the newest official run, beside its task type table."""

    period: str
    run: ReplayRun
    k: int
    headlines: list[Headline]
    mixture: MixtureSpread | None
    traffic: TrafficView | None
    traffic_error: str
    signatures: SignatureTable


def daily_tickets(text: str) -> tuple[float | None, str]:
    """The calculator's "tickets a day" as typed: (value or None for the measured one, an error to show)."""
    text = text.strip().replace(",", "").replace("_", "")
    if not text:
        return None, ""
    try:
        value = float(text)
    except ValueError:
        return None, f"tickets a day must be a number such as 5000, not {text[:40]!r}: showing the measured volume"
    if not 0 <= value <= 1e9 or value != value:
        return None, "tickets a day must lie between 0 and 1,000,000,000: showing the measured volume"
    return value, ""


def overview_views(
    hist: History,
    traffic: Callable[[ReplayRun], PeriodTraffic | None],
    views: Callable[[str], RunViews],
    *,
    daily: str = "",
) -> OverviewViews | None:
    """Headlines, curve, mixture, traffic (``traffic`` of the newest official run: `run_traffic`) and signature
    shares of the newest official period, if any."""
    if not hist.periods:
        return None
    period = hist.periods[-1]
    latest = views(period)
    if not any(h.scope == ALL for h in latest.headlines):
        return None
    value, error = daily_tickets(daily)
    measured = traffic(latest.run)
    return OverviewViews(
        period=period,
        run=latest.run,
        k=latest.run.k,
        headlines=latest.headlines,
        mixture=latest.mixture(),
        traffic=None if measured is None else traffic_view(latest, measured, daily_tickets=value),
        traffic_error=error,
        signatures=signature_table({p: views(p) for p in hist.periods}),
    )


def period_weights(store: Store, project: str, run: ReplayRun) -> dict[str, float]:
    """Production tickets per task type over the run's period, as the weekly report weighs its headline."""
    name = RunParams.of(run).period
    return {} if name is None else run_weights(store, project, parse_period(name), run)


def _views_of(store: Store, project: str, figures: FigureCache, views: ViewCache) -> tuple[History, Any]:
    hist = figures.history(store, project)

    def of(period: str) -> RunViews:
        run = hist.runs[period]
        digest = figures.digest(store, project, run)
        return views.get(project, run, digest, lambda: period_weights(store, project, run))

    return hist, of


def seed_overview(
    store: Store, project: str, figures: FigureCache, views: ViewCache, daily: str
) -> OverviewViews | None:
    hist, of = _views_of(store, project, figures, views)
    return overview_views(hist, lambda run: run_traffic(store, project, run), of, daily=daily)


# --- a task type's views -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class TaskTypeViews:
    """A task type in one official period: its headline and curve, its mixture, its signatures over periods."""

    period: str | None
    headline: Headline | None
    mixture: MixtureSpread | None
    signatures: SignatureTable


def seed_task_type(
    store: Store, project: str, figures: FigureCache, views: ViewCache, name: str, period: str | None
) -> TaskTypeViews:
    hist, of = _views_of(store, project, figures, views)
    chosen = period if period in hist.periods else (hist.periods[-1] if hist.periods else None)
    headline = mixture = None
    if chosen is not None:
        run_views = of(chosen)
        headline = run_views.task_types.get(name)
        mixture = run_views.mixture(name) if headline is not None else None
    return TaskTypeViews(chosen, headline, mixture, signature_table({p: of(p) for p in hist.periods}, name))
