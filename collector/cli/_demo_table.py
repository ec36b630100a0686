"""The demo's closing table: each simulated week's figures with their 95% intervals and sample sizes, then its
alerts (a line each, below the table, so the table fits an 80-column terminal)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.table import Table

from passhat.collector.cli._console import console, pct


@dataclass(frozen=True)
class WeekRow:
    """One week as the demo summarises it: its production tickets, the plain mean over its sampled tickets and
    the traffic-weighted overall figures (each as the report's JSON has them), and its alerts."""

    period: str
    production_tickets: int
    unweighted: Mapping[str, Any]
    overall: Mapping[str, Any]
    alerts: Sequence[str]


def figure(values: Mapping[str, Any], name: str) -> str:
    """A figure and, on the line below, its 95% interval ("-" when the week has none)."""
    value = values.get(name)
    interval = values.get(f"{name}_ci")
    if value is None:
        return "-"
    if not interval:
        return pct(value)
    return f"{pct(value)}\n[dim]{100.0 * interval[0]:.0f}–{100.0 * interval[1]:.0f}%[/]"


def print_weeks(weeks: Sequence[WeekRow], k: int | str) -> None:
    table = Table(
        title="Two simulated weeks (figures from a simulated agent)", caption="below each figure: its 95% interval"
    )
    table.add_column("week", no_wrap=True)
    for column in ("tickets", "sampled", "pass@1", f"pass@{k}", f"pass^{k}", f"pass^{k}\nby traffic"):
        table.add_column(column, justify="right")
    for week in weeks:
        table.add_row(
            week.period,
            f"{week.production_tickets:,}",
            str(week.unweighted.get("tickets", "-")),
            figure(week.unweighted, "pass_at_1"),
            figure(week.unweighted, "pass_at_k"),
            figure(week.unweighted, "pass_hat_k"),
            figure(week.overall, "pass_hat_k"),
        )
    console.print(table)
    for week in weeks:
        for alert in week.alerts:
            console.print(f"{week.period} alert: {alert}", soft_wrap=False)
        if not week.alerts:
            console.print(f"{week.period}: no alert")
