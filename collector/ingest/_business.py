"""Business gauges for Prometheus, read from the store at scrape time: today's tickets per project, task type and
source, and each task type's pass@1 and pass^k in the official run of the project's latest period that has one
(`passhat.collector.store.latest_official_run`: the run the UI, the report and the alerts take for that period, so
a promotion moves the gauges and an exploratory one-off never does); per project only for a scrape authorised for
it, aggregates otherwise.

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

from passhat.collector.reliability import settled_summary
from passhat.collector.store import RunParams, Store, StoreError, TicketTally, latest_official_run

ALL_PROJECTS = "*"
"""The scope of a scrape authorised for every project (no project is named `*`)."""


@dataclass(frozen=True)
class _Figures:
    tickets: list[tuple[str, str, str, float]]  # project, task type, source, tickets today
    pass_at_1: list[tuple[str, str, float]]  # project, task type, pass@1
    pass_hat_k: list[tuple[str, str, int, float]]  # project, task type, k, pass^k


class BusinessGauges:
    """`passhat_tickets_today`, `passhat_pass_at_1` and `passhat_pass_hat_k` (with `k` as a label).

    Project names and task types are another tenant's business: a scrape sees them only for the projects it is
    authorised for (`families`); without authorisation it gets today's tickets per source, summed over all."""

    def __init__(self, store: Store, *, refresh_s: float = 30.0) -> None:
        self._store = store
        self._refresh_s = refresh_s
        self._lock = threading.Lock()
        self._cached = _Figures([], [], [])
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
        pass_hat_k = GaugeMetricFamily(
            "passhat_pass_hat_k",
            "pass^k per task type in the official run of the project's latest period (k trials per ticket).",
            labels=["project", "task_type", "k"],
        )
        for project, task_type, source, count in figures.tickets:
            if shown(project):
                tickets.add_metric([project, task_type, source], count)
        for project, task_type, value in figures.pass_at_1:
            if shown(project):
                pass_at_1.add_metric([project, task_type], value)
        for project, task_type, k, value in figures.pass_hat_k:
            if shown(project):
                pass_hat_k.add_metric([project, task_type, str(k)], value)
        return [tickets, pass_at_1, pass_hat_k]

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
        figures = _Figures([], [], [])
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
                    figures.pass_at_1.append((project.name, task_type, found[0].pass_at_1))
                    figures.pass_hat_k.append((project.name, task_type, run.k, found[0].pass_hat_k))
        return figures


class FixedFamilies(Collector):
    """Metric families made for one scrape, to render with `generate_latest`."""

    def __init__(self, families: list[Metric]) -> None:
        self._families = families

    def collect(self) -> Iterator[Metric]:
        return iter(self._families)
