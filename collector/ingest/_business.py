"""Business gauges for Prometheus, read from the store at scrape time: today's tickets per project, task type and
source, and each task type's pass@1 and pass^k in the official run of the project's latest period that has one
(`passhat.collector.store.latest_official_run`: the run the UI, the report and the alerts take for that period, so
a promotion moves the gauges and an exploratory one-off never does), each with its confidence interval and the
tickets and trials it counts, as the UI shows them; per project only for a scrape authorised for it, aggregates
otherwise.

Answers are kept for `refresh_s` so a scrape every few seconds costs the store one query set per interval.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from passhat.collector.reliability import TaskTypeSummary, settled_summary
from passhat.collector.store import RunParams, Store, StoreError, TicketTally, latest_official_run

ALL_PROJECTS = "*"
"""The scope of a scrape authorised for every project (no project is named `*`)."""


@dataclass(frozen=True)
class _Rates:
    """One task type's figures in a run: what the UI shows for it."""

    project: str
    task_type: str
    k: int
    summary: TaskTypeSummary
    tickets: int  # settled at k: the tickets the figures count (their trials: ``summary.trials``)


@dataclass(frozen=True)
class _Figures:
    tickets: list[tuple[str, str, str, float]]  # project, task type, source, tickets today
    rates: list[_Rates]


class BusinessGauges:
    """`passhat_tickets_today`, `passhat_pass_at_1` and `passhat_pass_hat_k` (with `k` as a label), each rate with
    its interval's bounds (`passhat_pass_at_1_interval`, `passhat_pass_hat_k_interval`, labelled `bound` and
    `level`) and its sample (`passhat_replay_tickets`, `passhat_replay_trials`): a rate alone says nothing of how
    sure it is.

    Project names and task types are another tenant's business: a scrape sees them only for the projects it is
    authorised for (`families`); without authorisation it gets today's tickets per source, summed over all."""

    def __init__(self, store: Store, *, refresh_s: float = 30.0) -> None:
        self._store = store
        self._refresh_s = refresh_s
        self._lock = threading.Lock()
        self._cached = _Figures([], [])
        self._cached_at = -float("inf")

    def families(self, scope: str | None) -> list[Metric]:
        """The gauges for one scrape: `scope` is a project, `ALL_PROJECTS`, or None (aggregates only)."""
        figures = self._figures()
        if scope is None:
            total = GaugeMetricFamily(
                "passhat_tickets_today",
                "Tickets started today (UTC) per source, all projects together (authorise the scrape for more).",
                labels=["source"],
            )
            by_source: dict[str, float] = {"production": 0.0, "sandbox": 0.0}
            for _, _, source, count in figures.tickets:
                by_source[source] = by_source.get(source, 0.0) + count
            for source, count in by_source.items():
                total.add_metric([source], count)
            return [total]

        def shown(project: str) -> bool:
            return scope in (ALL_PROJECTS, project)

        tickets = GaugeMetricFamily(
            "passhat_tickets_today",
            "Tickets started today (UTC) per project, task type and source.",
            labels=["project", "task_type", "source"],
        )
        pass_at_1 = GaugeMetricFamily(
            "passhat_pass_at_1",
            "pass@1 per task type in the official run of the project's latest period.",
            labels=["project", "task_type"],
        )
        pass_at_1_interval = GaugeMetricFamily(
            "passhat_pass_at_1_interval",
            "The confidence interval of passhat_pass_at_1: its lower and upper bound (label bound) at the level "
            "given (label level).",
            labels=["project", "task_type", "bound", "level"],
        )
        pass_hat_k = GaugeMetricFamily(
            "passhat_pass_hat_k",
            "pass^k per task type in the official run of the project's latest period (k trials per ticket).",
            labels=["project", "task_type", "k"],
        )
        pass_hat_k_interval = GaugeMetricFamily(
            "passhat_pass_hat_k_interval",
            "The confidence interval of passhat_pass_hat_k: its lower and upper bound (label bound) at the level "
            "given (label level).",
            labels=["project", "task_type", "k", "bound", "level"],
        )
        replay_tickets = GaugeMetricFamily(
            "passhat_replay_tickets",
            "The replayed tickets passhat_pass_at_1 and passhat_pass_hat_k count (those settled at k).",
            labels=["project", "task_type"],
        )
        replay_trials = GaugeMetricFamily(
            "passhat_replay_trials",
            "The trials of those tickets counted (a trial the harness broke is not counted).",
            labels=["project", "task_type"],
        )
        for project, task_type, source, count in figures.tickets:
            if shown(project):
                tickets.add_metric([project, task_type, source], count)
        for rates in figures.rates:
            if not shown(rates.project):
                continue
            named, summary, k = [rates.project, rates.task_type], rates.summary, str(rates.k)
            level = f"{summary.level:g}"
            pass_at_1.add_metric(named, summary.pass_at_1)
            pass_hat_k.add_metric([*named, k], summary.pass_hat_k)
            for bound, at_1, hat_k in zip(("lower", "upper"), summary.pass_at_1_ci, summary.pass_hat_k_ci, strict=True):
                pass_at_1_interval.add_metric([*named, bound, level], at_1)
                pass_hat_k_interval.add_metric([*named, k, bound, level], hat_k)
            replay_tickets.add_metric(named, rates.tickets)
            replay_trials.add_metric(named, summary.trials)
        return [
            tickets, pass_at_1, pass_at_1_interval, pass_hat_k, pass_hat_k_interval, replay_tickets, replay_trials
        ]  # fmt: skip

    def _figures(self) -> _Figures:
        with self._lock:
            now = time.monotonic()
            if now - self._cached_at >= self._refresh_s:
                # The store is down: /healthz says so; the last answer is kept rather than failing the scrape.
                with contextlib.suppress(StoreError):
                    self._cached = self._read()
                self._cached_at = now
            return self._cached

    def _read(self) -> _Figures:
        figures = _Figures([], [])
        today = dt.datetime.now(dt.UTC).date()
        for project in self._store.list_projects():
            for source in ("production", "sandbox"):
                for day in self._store.traffic(project.name, days=1, source=source):
                    if day.day == today:
                        figures.tickets.append((project.name, day.task_type, source, day.tickets))
            run = latest_official_run(self._store, project.name)
            if run is None:
                continue
            by_type: dict[str, list[TicketTally]] = defaultdict(list)
            for tally in self._store.ticket_tallies(project.name, run.run_id):
                if tally.trials > 0:  # a ticket whose every trial the harness broke says nothing of the agent
                    by_type[tally.task_type].append(tally)
            min_trials = RunParams.of(run).design.min_trials
            for task_type, counted in sorted(by_type.items()):
                # As the UI, the report and the alerts count them: the tickets settled at k.
                found = settled_summary(counted, run.k, min_trials=min_trials)
                if found is not None:
                    summary, settled = found
                    figures.rates.append(_Rates(project.name, task_type, run.k, summary, settled))
        return figures


class FixedFamilies(Collector):
    """Metric families made for one scrape, to render with `generate_latest`."""

    def __init__(self, families: list[Metric]) -> None:
        self._families = families

    def collect(self) -> Iterator[Metric]:
        return iter(self._families)
