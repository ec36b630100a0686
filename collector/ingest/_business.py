"""Business gauges for Prometheus, read from the store at scrape time: today's tickets per project, task type and
source, and each task type's pass@1 and pass^k in the project's latest finished replay run (the official run).

Answers are kept for `refresh_s` so a scrape every few seconds costs the store one query set per interval.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import threading
import time
from collections import defaultdict
from collections.abc import Iterator

import numpy as np
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from passhat.collector.reliability import pass_hat_k_array
from passhat.collector.store import Store, StoreError, TicketTally


class BusinessGauges(Collector):
    """`passhat_tickets_today`, `passhat_pass_at_1` and `passhat_pass_hat_k` (with `k` as a label)."""

    def __init__(self, store: Store, *, refresh_s: float = 30.0) -> None:
        self._store = store
        self._refresh_s = refresh_s
        self._lock = threading.Lock()
        self._cached: list[Metric] = []
        self._cached_at = -float("inf")

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            now = time.monotonic()
            if now - self._cached_at >= self._refresh_s:
                # The store is down: /healthz says so; the last answer is kept rather than failing the scrape.
                with contextlib.suppress(StoreError):
                    self._cached = self._read()
                self._cached_at = now
            return iter(list(self._cached))

    def _read(self) -> list[Metric]:
        tickets = GaugeMetricFamily(
            "passhat_tickets_today",
            "Tickets started today (UTC) per project, task type and source.",
            labels=["project", "task_type", "source"],
        )
        pass_at_1 = GaugeMetricFamily(
            "passhat_pass_at_1",
            "pass@1 per task type in the project's latest finished replay run.",
            labels=["project", "task_type"],
        )
        pass_hat_k = GaugeMetricFamily(
            "passhat_pass_hat_k",
            "pass^k per task type in the project's latest finished replay run (k trials per ticket).",
            labels=["project", "task_type", "k"],
        )
        today = dt.datetime.now(dt.UTC).date()
        for project in self._store.list_projects():
            for source in ("production", "sandbox"):
                for day in self._store.traffic(project.name, days=1, source=source):
                    if day.day == today:
                        tickets.add_metric([project.name, day.task_type, source], day.tickets)
            run = next(
                (r for r in self._store.list_replay_runs(project.name, limit=20) if r.status == "finished"), None
            )
            if run is None:
                continue
            by_type: dict[str, list[TicketTally]] = defaultdict(list)
            for tally in self._store.ticket_tallies(project.name, run.run_id):
                if tally.trials >= run.k:
                    by_type[tally.task_type].append(tally)
            for task_type, counted in sorted(by_type.items()):
                n = np.array([t.trials for t in counted])
                c = np.array([t.passes for t in counted])
                pass_at_1.add_metric([project.name, task_type], float(np.mean(c / n)))
                pass_hat_k.add_metric(
                    [project.name, task_type, str(run.k)], float(np.mean(pass_hat_k_array(n, c, run.k)))
                )
        return [tickets, pass_at_1, pass_hat_k]
