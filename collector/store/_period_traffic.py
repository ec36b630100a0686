"""A period's production traffic as the figures weigh it: tickets per task type per day, with the tickets intent
inference classified (a replay run records them) moved from their unnamed task type to theirs.

The weekly report and the web UI read their traffic weights here, so both weigh a period's figures alike.
"""

from __future__ import annotations

import datetime as dt

from passhat.collector.store._interface import Store
from passhat.collector.store._period import Period
from passhat.collector.store._rows import ReplayRun
from passhat.collector.store._run_params import RunParams

DailyRow = tuple[dt.date, str, int]


def traffic_rows(store: Store, project: str, period: Period) -> list[DailyRow]:
    """(day, task type, production tickets) for each day of ``period`` with traffic."""
    last_day = period.end - dt.timedelta(days=1)
    rows = store.traffic(project, days=period.days, source="production", today=last_day)
    return [(row.day, row.task_type, row.tickets) for row in rows if period.contains(row.day)]


def reclassified(rows: list[DailyRow], run: ReplayRun) -> list[DailyRow]:
    """Daily traffic with the tickets intent inference classified moved from their unnamed task type to theirs."""
    moved = RunParams.of(run).classified_traffic
    counts: dict[tuple[dt.date, str], int] = {}
    for day, task_type, tickets in rows:
        counts[(day, task_type)] = counts.get((day, task_type), 0) + tickets
    for day_text, changes in moved.items():
        day = dt.date.fromisoformat(day_text)
        for change, tickets in changes.items():
            source, _, target = change.partition("->")
            taken = min(tickets, counts.get((day, source), 0))
            counts[(day, source)] = counts.get((day, source), 0) - taken
            counts[(day, target)] = counts.get((day, target), 0) + taken
    return [(day, task_type, tickets) for (day, task_type), tickets in sorted(counts.items()) if tickets > 0]


def run_weights(store: Store, project: str, period: Period, run: ReplayRun | None = None) -> dict[str, float]:
    """Production tickets per task type over ``period``: the weights of an overall figure (the report's headline,
    the UI's, the alert rules'). With ``run``, as its figures weigh them (classified tickets moved)."""
    rows = traffic_rows(store, project, period)
    weights: dict[str, float] = {}
    for _day, task_type, tickets in rows if run is None else reclassified(rows, run):
        weights[task_type] = weights.get(task_type, 0.0) + tickets
    return weights
