"""What a weekly report is built from: plain dataclasses, independent of the store and the replay loop.

The replay loop (or a test, or the docs) fills a `ReportInput`; `build_report` turns it into figures. Nothing
here touches a database: the input model is the seam between "where the trials came from" and "what they say".
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from passhat.collector.reliability import HarnessFailure
from passhat.collector.report._fidelity import ProductionGrade
from passhat.collector.store import NotReplayable, Period, TicketTally, TrialRow, parse_period

CHANGE_OPS = frozenset({"insert", "update", "delete", "bulk_update", "bulk_delete", "bulk_insert"})


class ReportInputError(ValueError):
    """The report's input is inconsistent; the message says which item and what to fix."""


def report_period(period: str) -> Period:
    """The reporting period an input names: an ISO week (``2026-W48``) or one day (``2026-11-23``)."""
    if not isinstance(period, str):
        raise ReportInputError(f"period must be a string like 2026-W48, got {period!r}")
    try:
        return parse_period(period)
    except ValueError as exc:
        raise ReportInputError(str(exc)) from None


def period_days(period: str) -> tuple[dt.date, dt.date]:
    """The first and last day of a period (Monday and Sunday for an ISO week)."""
    parsed = report_period(period)
    return parsed.start, parsed.end - dt.timedelta(days=1)


@dataclass(frozen=True)
class BackendChange:
    """One row a trial changed in the sandbox backend (the checks' RowChange, as plain data)."""

    table: str
    key: dict[str, Any]
    op: str
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"table": self.table, "key": self.key, "op": self.op, "before": self.before, "after": self.after}

    @classmethod
    def from_dict(cls, change: dict[str, Any]) -> BackendChange:
        """Read a ``{table, key, op, before, after}`` mapping (a state write as the SDK records it)."""
        try:
            return cls(
                table=str(change["table"]),
                key=dict(change["key"]),
                op=str(change["op"]),
                before=None if change.get("before") is None else dict(change["before"]),
                after=None if change.get("after") is None else dict(change["after"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ReportInputError(
                f"a backend change needs table, key (an object) and op; got {change!r} ({exc})"
            ) from None


@dataclass(frozen=True)
class TrialResult:
    """One graded sandbox trial of one sampled ticket, as the report reads it.

    A view of a stored trial (`from_row`) kept as its own small type because a report is also built by hand,
    with no store (see docs/reports.md): it names only what the report shows, counts attempts from 1 as the page
    does, and carries a signature only on a failed trial.
    """

    domain: str
    task_type: str
    ticket_id: str
    attempt: int
    passed: bool
    signature: str | None = None
    termination_reason: str = "agent_stop"
    changes: list[BackendChange] = field(default_factory=list)
    final_response: str = ""
    simulated: bool = False

    @classmethod
    def from_row(cls, trial: TrialRow) -> TrialResult:
        """The report's view of a stored trial and its details."""
        details = trial.details
        return cls(
            domain=trial.domain or "unknown",
            task_type=trial.task_type,
            ticket_id=trial.ticket_id,
            attempt=trial.attempt + 1,  # the sandbox counts attempts from 0, the report from 1
            passed=trial.passed,
            signature=None if trial.passed else trial.failure_label,
            termination_reason=trial.termination_reason,
            changes=[BackendChange(c.table, dict(c.key), c.op, c.before, c.after) for c in details.changes],
            final_response=details.final_response,
            simulated=details.simulated,
        )


@dataclass(frozen=True)
class DailyTraffic:
    """Production tickets of one (domain, task type) on one day of the period."""

    domain: str
    task_type: str
    day: dt.date
    tickets: int


@dataclass(frozen=True)
class AlertFired:
    """An alert that fired during the period; ``task_type`` is None for a rule on the overall figure."""

    rule: str
    task_type: str | None
    message: str
    fired_at: dt.datetime
    baseline: float | None = None  # the baseline pass^k a drop test compared against
    baseline_note: str = ""  # which periods it pooled and how they were weighted

    def to_dict(self) -> dict[str, str | float | None]:
        data: dict[str, str | float | None] = {
            "rule": self.rule,
            "task_type": self.task_type,
            "message": self.message,
            "fired_at": self.fired_at.isoformat(),
        }
        if self.baseline is not None:  # a drop test's alert: the figure it compared against, and how
            data.update(baseline=self.baseline, baseline_note=self.baseline_note)
        return data


def _interval(value: Any) -> tuple[float, float] | None:
    """An interval read back from report.json ([low, high] or null)."""
    return None if value is None else (float(value[0]), float(value[1]))


@dataclass(frozen=True)
class PeriodFigures:
    """An earlier period's overall (traffic-weighted) figures, for the week-over-week trend."""

    period: str
    k: int
    pass_at_1: float | None
    pass_hat_k: float | None
    pass_at_k: float | None = None
    expected_failed_tickets_per_day: float | None = None
    agent: str = ""
    agent_version: str = ""
    pass_at_1_ci: tuple[float, float] | None = None
    pass_hat_k_ci: tuple[float, float] | None = None
    tickets: int | None = None  # tickets sampled that period (None: an older report.json did not say)

    @classmethod
    def from_report_json(cls, report: dict[str, Any]) -> PeriodFigures:
        """Read the figures back from an earlier period's ``report.json``."""
        try:
            overall = report["overall"]
            return cls(
                period=str(report["period"]),
                k=int(report["k"]),
                pass_at_1=overall["pass_at_1"],
                pass_hat_k=overall["pass_hat_k"],
                pass_at_k=overall.get("pass_at_k"),
                expected_failed_tickets_per_day=overall.get("expected_failed_tickets_per_day"),
                agent=str(report.get("agent") or ""),
                agent_version=str(report.get("agent_version") or ""),
                pass_at_1_ci=_interval(overall.get("pass_at_1_ci")),
                pass_hat_k_ci=_interval(overall.get("pass_hat_k_ci")),
                tickets=None if overall.get("tickets") is None else int(overall["tickets"]),
            )
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise ReportInputError(f"an earlier report.json lacks its period, k or overall figures ({exc})") from None


@dataclass(frozen=True)
class ReportInput:
    """Everything one period's report is computed from.

    The sampled tickets come either as their graded ``trials`` (a report built by hand) or as the store's
    per-ticket ``tallies`` (`Store.ticket_tallies`: the loop's way, which never loads every trial), with
    ``attempts_of`` reading back the trials of the one ticket the report shows attempt by attempt.
    """

    period: str
    k: int
    trials: list[TrialResult] = field(default_factory=list)
    traffic: list[DailyTraffic] = field(default_factory=list)
    not_replayable: list[NotReplayable] = field(default_factory=list)
    # Trials the harness broke (reliability.harness_failures): in no figure, shown with their cause.
    harness_failures: list[HarnessFailure] = field(default_factory=list)
    alerts: list[AlertFired] = field(default_factory=list)
    previous: list[PeriodFigures] = field(default_factory=list)
    agent: str = ""
    simulated: bool = False
    agent_version: str = ""
    run_id: str = ""  # the replay run the figures come from
    run_role: str = ""  # official or exploratory (see passhat.collector.replay.official_run)
    comparison: dict[str, Any] | None = None  # a paired comparison with a baseline run (RunComparison.to_dict)
    production: list[ProductionGrade] = field(default_factory=list)  # production tickets' own verdicts
    generated_at: dt.datetime | None = None
    confidence_level: float = 0.95
    resamples: int = 1000
    seed: int = 0
    tallies: list[TicketTally] = field(default_factory=list)
    attempts_of: Callable[[str], list[TrialResult]] | None = None
    # Intents the replay inferred for tickets that recorded none: ticket id -> source, task type, intent, evidence.
    inferred_intents: dict[str, dict[str, Any]] = field(default_factory=dict)


def _is_probability(value: float | None) -> bool:
    return value is None or (isinstance(value, int | float) and math.isfinite(value) and 0.0 <= value <= 1.0)


def _check_settled(ticket_id: str, trials: int, passes: int, k: int) -> None:
    # A ticket stopped early by curtailed replay is settled once it has a pass and a failure.
    if not (trials >= k or 0 < passes < trials):
        raise ReportInputError(
            f"ticket {ticket_id!r} has {trials} trials but the report's k is {k}: every sampled ticket "
            f"needs at least k finished trials, or a pass and a failure under curtailed replay (finish or "
            f"resume its replay run, or lower k)"
        )


def tallies_of(tickets: dict[tuple[str, str, str], list[TrialResult]]) -> list[TicketTally]:
    """The per-ticket tallies of trials given by hand (attempts counted from 1, as the report shows them)."""
    found = []
    for (domain, task_type, ticket_id), trials in sorted(tickets.items()):
        attempts = passed = 0
        signatures: dict[str, int] = {}
        for trial in trials:
            attempts |= 1 << (trial.attempt - 1)
            if trial.passed:
                passed |= 1 << (trial.attempt - 1)
            elif trial.signature:
                signatures[trial.signature] = signatures.get(trial.signature, 0) + 1
        found.append(
            TicketTally(
                domain, task_type, ticket_id, len(trials), sum(t.passed for t in trials), attempts, passed,
                signatures=dict(sorted(signatures.items())),
            )
        )  # fmt: skip
    return found


def validate(report_input: ReportInput) -> dict[tuple[str, str, str], list[TrialResult]]:
    """Check the input for the mistakes a caller can make; return the trials grouped by (domain, type, ticket).

    Raises `ReportInputError` with one message naming the offending item.
    """
    first, last = period_days(report_input.period)
    k = report_input.k
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ReportInputError(f"k must be a whole number of attempts >= 1, got {k!r}")
    if not 0.0 < report_input.confidence_level < 1.0:
        raise ReportInputError(
            f"confidence_level must lie strictly between 0 and 1, got {report_input.confidence_level}"
        )
    if report_input.resamples < 1:
        raise ReportInputError(f"resamples must be at least 1, got {report_input.resamples}")
    if not report_input.trials and not report_input.tallies:
        raise ReportInputError(
            f"period {report_input.period} has no trials: replay some sampled tickets before building its report"
        )
    if report_input.trials and report_input.tallies:
        raise ReportInputError("give the sampled tickets as trials or as tallies, not both")
    for tally in report_input.tallies:
        if not tally.domain or not tally.task_type or not tally.ticket_id:
            raise ReportInputError(f"the tally of ticket {tally.ticket_id!r} needs a domain, a task type and an id")
        _check_settled(tally.ticket_id, tally.trials, tally.passes, k)
    tickets: dict[tuple[str, str, str], list[TrialResult]] = {}
    type_of_ticket: dict[str, tuple[str, str]] = {}
    for trial in report_input.trials:
        where = f"trial {trial.attempt} of ticket {trial.ticket_id!r}"
        if not trial.domain or not trial.task_type or not trial.ticket_id:
            raise ReportInputError(f"{where} needs a domain, a task type and a ticket id")
        if isinstance(trial.attempt, bool) or not isinstance(trial.attempt, int) or trial.attempt < 1:
            raise ReportInputError(f"{where}: attempt must be a whole number >= 1")
        owner = type_of_ticket.setdefault(trial.ticket_id, (trial.domain, trial.task_type))
        if owner != (trial.domain, trial.task_type):
            raise ReportInputError(
                f"ticket {trial.ticket_id!r} appears under both {owner[0]}/{owner[1]} and "
                f"{trial.domain}/{trial.task_type}: a ticket has one task type"
            )
        if trial.passed and trial.signature is not None:
            raise ReportInputError(f"{where} passed but carries the failure signature {trial.signature!r}")
        for change in trial.changes:
            if not isinstance(change, BackendChange):
                raise ReportInputError(
                    f"{where}: changes must be BackendChange items (BackendChange.from_dict reads a mapping)"
                )
            if change.op not in CHANGE_OPS:
                raise ReportInputError(
                    f"{where} has a backend change with op {change.op!r}; use one of {sorted(CHANGE_OPS)}"
                )
        tickets.setdefault((trial.domain, trial.task_type, trial.ticket_id), []).append(trial)
    for (_, _, ticket_id), trials in tickets.items():
        attempts = [t.attempt for t in trials]
        if len(set(attempts)) != len(attempts):
            raise ReportInputError(f"ticket {ticket_id!r} has the same attempt number twice")
        _check_settled(ticket_id, len(trials), sum(t.passed for t in trials), k)
        trials.sort(key=lambda t: t.attempt)
    seen_days: set[tuple[str, str, dt.date]] = set()
    for row in report_input.traffic:
        if not first <= row.day <= last:
            raise ReportInputError(
                f"traffic for {row.domain}/{row.task_type} on {row.day} lies outside period {report_input.period} "
                f"({first} to {last})"
            )
        if isinstance(row.tickets, bool) or not isinstance(row.tickets, int) or row.tickets < 0:
            raise ReportInputError(f"traffic for {row.domain}/{row.task_type} on {row.day} must be a count >= 0")
        if (row.domain, row.task_type, row.day) in seen_days:
            raise ReportInputError(f"traffic for {row.domain}/{row.task_type} on {row.day} is given twice")
        seen_days.add((row.domain, row.task_type, row.day))
    for alert in report_input.alerts:
        if alert.fired_at.tzinfo is None:
            raise ReportInputError(
                f"alert {alert.rule!r} has a fired_at without a time zone: give an aware UTC datetime"
            )
    if report_input.generated_at is not None and report_input.generated_at.tzinfo is None:
        raise ReportInputError("generated_at has no time zone: give an aware UTC datetime")
    periods = [report_period(p.period).name for p in report_input.previous]
    if len(set(periods)) != len(periods):
        raise ReportInputError("previous periods list the same period twice")
    this_period = report_period(report_input.period)
    for previous in report_input.previous:
        if report_period(previous.period).start >= this_period.start:
            raise ReportInputError(
                f"previous period {previous.period} is not earlier than the report's period {report_input.period}"
            )
        for name in ("pass_at_1", "pass_at_k", "pass_hat_k"):
            if not _is_probability(getattr(previous, name)):
                raise ReportInputError(f"previous period {previous.period}: {name} must lie in [0, 1]")
    return tickets
