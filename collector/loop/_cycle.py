"""One period of the production loop: replay the sample, evaluate alerts, build and write the report.

production traces ─► store ─► sample per task type ─► k sandbox trials each ─► trials in the store
                                                   ─► alerts on pass^k ─► report.html / .json / .md
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import passhat
from passhat.collector.alerts import (
    AlertLog,
    AlertRule,
    Channel,
    PeriodCounts,
    PeriodOutcome,
    RetryPolicy,
    counts_from_trials,
)
from passhat.collector.replay import (
    AgentSpec,
    ProgressCallback,
    ReplayOutcome,
    ReplaySettings,
    SandboxPool,
    ScenarioAdapter,
    replay_period,
    runs_for_period,
)
from passhat.collector.report import (
    AlertFired,
    DailyTraffic,
    NotReplayable,
    PeriodFigures,
    Report,
    ReportInput,
    TrialResult,
    UnreplayedReport,
    build_report,
    write_report,
    write_unreplayed_report,
)
from passhat.collector.store import Period, ReplayRun, Store, TrialRow
from passhat.sandbox import Domain


@dataclass(frozen=True)
class AlertSetup:
    """The alert rules of a project and where notices go."""

    rules: Sequence[AlertRule] = ()
    channels: Sequence[Channel] = ()
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    baseline_periods: int = 4


@dataclass
class PeriodResult:
    """What one period of the loop produced."""

    outcome: ReplayOutcome
    report: Report | UnreplayedReport
    report_paths: dict[str, Path]
    alerts: PeriodOutcome | None


def _traffic_rows(store: Store, project: str, period: Period) -> list[tuple[dt.date, str, int]]:
    last_day = period.end - dt.timedelta(days=1)
    rows = store.traffic(project, days=period.days, source="production", today=last_day)
    return [(row.day, row.task_type, row.tickets) for row in rows if period.contains(row.day)]


def traffic_weights(store: Store, project: str, period: Period) -> dict[str, float]:
    """Tickets per task type over the period (the weights of an overall figure)."""
    weights: dict[str, float] = {}
    for _day, task_type, tickets in _traffic_rows(store, project, period):
        weights[task_type] = weights.get(task_type, 0.0) + tickets
    return weights


def _usable(trials: Sequence[TrialRow], k: int) -> tuple[list[TrialRow], list[NotReplayable]]:
    """Trials that speak about the agent (no simulator or infra error), of tickets whose pass^k they settle.

    A ticket counts with at least k such trials, or (curtailed replay) with one passed and one failed; the rest
    are listed with the reason, never dropped silently.
    """
    by_ticket: dict[str, list[TrialRow]] = {}
    for trial in trials:
        by_ticket.setdefault(trial.ticket_id, []).append(trial)
    kept: list[TrialRow] = []
    dropped: list[NotReplayable] = []
    for ticket_id, rows in by_ticket.items():
        good = [t for t in rows if not (t.simulator_error or t.infra_error)]
        passes = sum(t.passed for t in good)
        if len(good) >= k or 0 < passes < len(good):
            kept.extend(good)
        else:
            bad = len(rows) - len(good)
            if bad:
                reason = (
                    f"{bad} of {len(rows)} trials ended in a simulator or infrastructure error (fewer than k={k} left)"
                )
                fix = "read the trials' simulator_error / infra_error, fix the customer or tool server, replay again"
            else:
                reason = f"only {len(rows)} of k={k} trials have run"
                fix = "resume the replay run (run the same passhat replay --period again)"
            dropped.append(NotReplayable(ticket_id, rows[0].task_type, reason, fix))
    return kept, dropped


def previous_figures(store: Store, project: str, period: Period, *, count: int = 8) -> list[PeriodFigures]:
    """Earlier periods' overall figures, newest first, from the summaries their finished runs kept."""
    found: list[PeriodFigures] = []
    for step in range(1, count + 1):
        earlier = period.previous(step)
        for run in runs_for_period(store, project, earlier.name):
            figures = (run.summary or {}).get("figures")
            if isinstance(figures, dict):
                with contextlib.suppress(ValueError):  # an unreadable summary only thins the trend
                    found.append(PeriodFigures.from_report_json(figures))
                break
    return found


def _recorded_not_replayable(run: ReplayRun) -> list[dict[str, Any]]:
    """The run's unreplayable tickets: as it finished (overlay failures included), else as it was sampled."""
    final = (run.summary or {}).get("not_replayable_tickets")
    listed = final if isinstance(final, list) else run.params.get("not_replayable", [])
    return [item for item in listed if isinstance(item, dict)]


def report_input_for(
    store: Store,
    project: str,
    period: Period,
    run: ReplayRun,
    *,
    domains: Mapping[str, Domain] | None = None,
    alerts: Sequence[AlertFired] = (),
    resamples: int = 1000,
) -> ReportInput:
    """Everything the period's report needs, read from the store."""
    trials, dropped = _usable(store.list_trials(project, run.run_id), run.k)
    results = [TrialResult.from_row(t) for t in trials]
    owner = {r.task_type: r.domain for r in results}
    for domain in (domains or {}).values():
        for name in domain.task_types:
            owner.setdefault(name, domain.name)
    traffic = [
        DailyTraffic(owner.get(task_type, "unknown"), task_type, day, tickets)
        for day, task_type, tickets in _traffic_rows(store, project, period)
    ]
    not_replayable = [NotReplayable.from_dict(n) for n in _recorded_not_replayable(run)] + dropped
    return ReportInput(
        period=period.name,
        k=run.k,
        trials=results,
        traffic=traffic,
        not_replayable=not_replayable,
        alerts=list(alerts),
        previous=[f for f in previous_figures(store, project, period) if f.k == run.k],
        agent=str(run.params.get("agent", "")),
        simulated=bool(run.params.get("simulated", False)),
        generated_at=dt.datetime.now(dt.UTC),
        resamples=resamples,
    )


def period_counts(store: Store, project: str, period: Period, run: ReplayRun) -> PeriodCounts:
    """A period's per-ticket (n, c) per task type, traffic-weighted, for the alert rules."""
    trials, _ = _usable(store.list_trials(project, run.run_id), run.k)
    return counts_from_trials(period.name, trials, weights=traffic_weights(store, project, period) or None)


def baseline_counts(store: Store, project: str, period: Period, *, periods: int, k: int) -> list[PeriodCounts]:
    """The counts of up to ``periods`` earlier periods with a finished run at the same k, newest first."""
    found: list[PeriodCounts] = []
    for step in range(1, periods + 1):
        earlier = period.previous(step)
        runs = [r for r in runs_for_period(store, project, earlier.name) if r.k == k]
        if runs:
            found.append(period_counts(store, project, earlier, runs[0]))
    return found


def alerts_fired(store: Store, project: str, period: Period) -> list[AlertFired]:
    """The notices recorded for this period (fired and resolved), oldest first."""
    notices = AlertLog(store, project).notices(kinds=("fired", "resolved"), limit=500)
    return [
        AlertFired(rule=n.rule, task_type=n.task_type, message=n.message, fired_at=n.fired_at)
        for n in reversed(notices)
        if n.payload.get("period") == period.name
    ]


def nothing_measured(report_input: ReportInput, sampled: int) -> UnreplayedReport:
    """The report of a period none of whose sampled tickets could be measured, saying why."""
    unreplayable = len({item.ticket_id for item in report_input.not_replayable})
    why = (
        f"None of the {sampled} sampled tickets of {report_input.period} could be measured: "
        f"{unreplayable} could not be replayed or had too few usable trials. The reasons and their fixes are below."
    )
    return UnreplayedReport(
        period=report_input.period,
        k=report_input.k,
        agent=report_input.agent,
        why=why,
        not_replayable=sorted(report_input.not_replayable, key=lambda r: (r.task_type, r.ticket_id)),
    )


def period_report(report_input: ReportInput, sampled: int) -> Report | UnreplayedReport:
    """The period's report: its figures, or (when no ticket could be measured) why not."""
    if not report_input.trials:
        return nothing_measured(report_input, sampled)
    return build_report(report_input)


def write_period_report(report: Report | UnreplayedReport, folder: Path) -> dict[str, Path]:
    """Write either kind of period report as report.html, .json and .md into ``folder``."""
    if isinstance(report, UnreplayedReport):
        return write_unreplayed_report(report, folder)
    return write_report(report, folder)


async def run_period(
    store: Store,
    project: str,
    period: Period,
    agent: AgentSpec,
    *,
    settings: ReplaySettings | None = None,
    domains: Mapping[str, Domain] | None = None,
    adapters: Mapping[str, ScenarioAdapter] | None = None,
    alerts: AlertSetup | None = None,
    report_dir: Path | None = None,
    runtime: passhat.Passhat | None = None,
    pool: SandboxPool | None = None,
    progress: ProgressCallback | None = None,
    resamples: int = 1000,
) -> PeriodResult:
    """Replay the period (resuming an interrupted run), evaluate the alert rules, build and write the report.

    ``adapters`` turn tickets of your own domains into scenarios (``domains`` holds their sandbox Domains).
    A period none of whose tickets could be measured still gets a report saying why, and its run finishes;
    a run whose report or alerts fail is marked ``failed`` with the error, never left ``running``.
    """
    settings = settings or ReplaySettings()
    outcome = await replay_period(
        store,
        project,
        period,
        agent,
        domains=domains,
        adapters=adapters,
        settings=settings,
        runtime=runtime,
        pool=pool,
        progress=progress,
    )
    run = outcome.run
    try:
        result = _conclude(store, project, period, run, outcome, domains, alerts, report_dir, resamples)
    except Exception as exc:
        store.finish_replay_run(project, run.run_id, status="failed", error=f"{type(exc).__name__}: {exc}")
        raise
    return result


def _conclude(
    store: Store,
    project: str,
    period: Period,
    run: ReplayRun,
    outcome: ReplayOutcome,
    domains: Mapping[str, Domain] | None,
    alerts: AlertSetup | None,
    report_dir: Path | None,
    resamples: int,
) -> PeriodResult:
    not_replayable = [n.to_dict() for n in outcome.not_replayable]
    # The report reads the unreplayable tickets from the run: give it the final list (with overlay failures).
    run = replace(run, summary={**(run.summary or {}), "not_replayable_tickets": not_replayable})
    report_input = report_input_for(
        store, project, period, run, domains=domains, alerts=alerts_fired(store, project, period), resamples=resamples
    )
    alert_outcome: PeriodOutcome | None = None
    if alerts is not None and alerts.rules and report_input.trials:
        current = period_counts(store, project, period, run)
        baseline = baseline_counts(store, project, period, periods=alerts.baseline_periods, k=run.k)
        alert_outcome = AlertLog(store, project).run_period(
            alerts.rules, alerts.channels, alerts.retry, current, baseline, k=run.k
        )
        report_input = replace(report_input, alerts=alerts_fired(store, project, period))
    sampled = len(run.params.get("tickets", [])) or len(outcome.not_replayable)
    report = period_report(report_input, sampled)
    paths = write_period_report(report, report_dir / period.name) if report_dir is not None else {}
    summary: dict[str, Any] = {
        "trials": len(outcome.trials),
        "not_replayable": len(report_input.not_replayable),
        "not_replayable_tickets": not_replayable,
        "report": {name: str(path) for name, path in paths.items()},
    }
    if isinstance(report, Report):
        summary["figures"] = {key: report.to_json()[key] for key in ("period", "k", "overall", "unweighted")}
    else:
        summary["nothing_measured"] = report.why
    store.finish_replay_run(project, run.run_id, summary=summary)
    return PeriodResult(outcome=outcome, report=report, report_paths=paths, alerts=alert_outcome)
