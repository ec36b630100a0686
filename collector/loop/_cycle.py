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
    counts_from_tallies,
)
from passhat.collector.ingest import StoreSpanExporter
from passhat.collector.loop._deliver import DeliveryOutcome, ReportDelivery, send_report_safely
from passhat.collector.reliability import harness_failures
from passhat.collector.replay import (
    AgentSpec,
    ProgressCallback,
    ReplayOutcome,
    ReplaySettings,
    SandboxPool,
    ScenarioAdapter,
    WorkerProcesses,
    compare_tallies,
    exploratory_reasons,
    grade_period,
    keep_promotion,
    official_run,
    promote_run,
    replay_period,
)
from passhat.collector.report import (
    AlertFired,
    DailyTraffic,
    NotReplayable,
    PeriodFigures,
    ProductionGrade,
    Report,
    ReportInput,
    TrialResult,
    UnreplayedReport,
    build_report,
    write_report,
    write_unreplayed_report,
)
from passhat.collector.store import (
    Period,
    ReplayRun,
    RunParams,
    Store,
    TicketTally,
    TrialRow,
    parse_period,
    reclassified,
    run_weights,
    traffic_rows,
)
from passhat.sandbox import Domain


@dataclass(frozen=True)
class AlertSetup:
    """The alert rules of a project and where notices go (each linking to its page under ``ui_url``, if set)."""

    rules: Sequence[AlertRule] = ()
    channels: Sequence[Channel] = ()
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    baseline_periods: int = 4
    ui_url: str | None = None  # the web UI's address (`[report] ui_url`)


@dataclass
class PeriodResult:
    """What one period of the loop produced."""

    outcome: ReplayOutcome
    report: Report | UnreplayedReport
    report_paths: dict[str, Path]
    alerts: PeriodOutcome | None
    official: bool = True  # the run is the period's official run (its figures, alerts and baselines)
    delivery: DeliveryOutcome | None = None  # the report sent to `[report] send_to` (official runs only)


def traffic_weights(store: Store, project: str, period: Period, run: ReplayRun | None = None) -> dict[str, float]:
    """Tickets per task type over the period (the weights of an overall figure); with ``run``, as its report and
    the UI weigh them (the tickets its intent inference classified moved to their task type)."""
    return run_weights(store, project, period, run)


def _settled(
    tallies: Sequence[TicketTally], k: int, harness_broke: Sequence[TrialRow] = ()
) -> tuple[list[TicketTally], list[NotReplayable]]:
    """Tickets whose pass^k their counted trials settle (trials that ended in a simulator or infrastructure
    error never count: they say nothing about the agent; ``harness_broke`` are those trials, for the causes).

    A ticket counts with at least k such trials, or (curtailed replay) with one passed and one failed; the rest
    are listed with the reason, never dropped silently.
    """
    kept: list[TicketTally] = []
    dropped: list[NotReplayable] = []
    broken: dict[str, list[TrialRow]] = {}
    for trial in harness_broke:
        broken.setdefault(trial.ticket_id, []).append(trial)
    for tally in tallies:
        if tally.trials >= k or 0 < tally.passes < tally.trials:
            kept.append(tally)
            continue
        ran = tally.trials + tally.harness_errors
        if tally.harness_errors:
            causes = harness_failures(broken.get(tally.ticket_id, []))
            cause = f": {causes[0].error_type}: {causes[0].message}" if causes else ""
            reason = (
                f"{tally.harness_errors} of {ran} trials ended in a simulator or infrastructure error "
                f"(fewer than k={k} left){cause}"
            )
            fix = "fix the customer or tool server, replay again"
            if causes:  # a fix that already ends in replaying again is not told so twice
                fix = causes[0].fix if "again" in causes[0].fix else f"{causes[0].fix}; then replay again"
        else:
            reason = f"only {ran} of k={k} trials have run"
            fix = "resume the replay run (run the same passhat replay --period again)"
        dropped.append(NotReplayable(tally.ticket_id, tally.task_type, reason, fix))
    return kept, dropped


def previous_figures(store: Store, project: str, period: Period, *, count: int = 8) -> list[PeriodFigures]:
    """Earlier periods' overall figures, newest first, from the summaries their official runs kept."""
    found: list[PeriodFigures] = []
    for step in range(1, count + 1):
        earlier = period.previous(step)
        run = official_run(store, project, earlier.name)
        figures = None if run is None else (run.summary or {}).get("figures")
        if run is not None and isinstance(figures, dict):
            with contextlib.suppress(ValueError):  # an unreadable summary only thins the trend
                found.append(PeriodFigures.from_report_json(figures))
    return found


def _recorded_not_replayable(run: ReplayRun) -> list[dict[str, Any]]:
    """The run's unreplayable tickets: as it finished (overlay failures included), else as it was sampled."""
    final = (run.summary or {}).get("not_replayable_tickets")
    if not isinstance(final, list):
        return [item.to_dict() for item in RunParams.of(run).not_replayable]
    return [item for item in final if isinstance(item, dict)]


def report_input_for(
    store: Store,
    project: str,
    period: Period,
    run: ReplayRun,
    *,
    domains: Mapping[str, Domain] | None = None,
    alerts: Sequence[AlertFired] = (),
    resamples: int = 1000,
    role: str = "official",
    comparison: Mapping[str, Any] | None = None,
) -> ReportInput:
    """Everything the report of ``run`` needs, read from the store; ``role`` says how the run stands."""
    broken = store.list_trials(project, run.run_id, harness_only=True)
    tallies, dropped = _settled(store.ticket_tallies(project, run.run_id), run.k, broken)
    owner = {t.task_type: t.domain or "unknown" for t in tallies}
    for domain in (domains or {}).values():
        for name in domain.task_types:
            owner.setdefault(name, domain.name)
    traffic = [
        DailyTraffic(owner.get(task_type, "unknown"), task_type, day, tickets)
        for day, task_type, tickets in reclassified(traffic_rows(store, project, period), run)
    ]
    not_replayable = [NotReplayable.from_dict(n) for n in _recorded_not_replayable(run)] + dropped
    return ReportInput(
        production=production_grades(store, project, period),
        period=period.name,
        k=run.k,
        tallies=tallies,
        attempts_of=lambda ticket_id: [
            TrialResult.from_row(t) for t in store.list_trials(project, run.run_id, ticket_id=ticket_id)
        ],
        traffic=traffic,
        not_replayable=not_replayable,
        harness_failures=harness_failures(broken),
        alerts=list(alerts),
        previous=[f for f in previous_figures(store, project, period) if f.k == run.k],
        agent=RunParams.of(run).agent,
        simulated=RunParams.of(run).simulated,
        agent_version=RunParams.of(run).agent_version,
        run_id=run.run_id,
        run_role=role,
        comparison=None if comparison is None else dict(comparison),
        generated_at=dt.datetime.now(dt.UTC),
        resamples=resamples,
        inferred_intents=dict(RunParams.of(run).intents),
    )


def production_grades(store: Store, project: str, period: Period) -> list[ProductionGrade]:
    """The period's production tickets' own verdicts (`passhat grade`), as the report's fidelity reads them."""
    since = int(period.start_datetime().timestamp()) * 10**9
    until = int(period.end_datetime().timestamp()) * 10**9
    return [
        ProductionGrade(v.domain or "unknown", v.task_type, v.ticket_id, v.passed, v.signature)
        for v in store.list_production_verdicts(project, since_ns=since, until_ns=until, limit=1_000_000)
    ]


def store_runtime(store: Store, project: str) -> passhat.Passhat:
    """A passhat runtime tracing trials straight into the store, as ``passhat.source = sandbox`` tickets."""
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    exporter = StoreSpanExporter(store, project)
    return passhat.configure(
        # A trial's trace holds sandbox data only: blanking (not pseudonyms) keeps a replay from minting a key.
        make_global=False, source="sandbox", service_name="passhat replay", send=False, redact_mode="blank",
        span_processors=[BatchSpanProcessor(exporter, max_queue_size=100_000, schedule_delay_millis=500)],
    )  # fmt: skip


def report_folder(report_dir: Path, period: Period, run: ReplayRun, *, official: bool) -> Path:
    """Where a run's report goes: the period's folder for its official run, a folder of its own otherwise."""
    base = report_dir / period.name
    return base if official else base / "runs" / run.run_id


def period_counts(store: Store, project: str, period: Period, run: ReplayRun) -> PeriodCounts:
    """A period's per-ticket (n, c) per task type, traffic-weighted, for the alert rules."""
    tallies, _ = _settled(store.ticket_tallies(project, run.run_id), run.k)
    return counts_from_tallies(period.name, tallies, weights=traffic_weights(store, project, period, run) or None)


def baseline_counts(store: Store, project: str, period: Period, *, periods: int, k: int) -> list[PeriodCounts]:
    """The counts of up to ``periods`` earlier periods whose official run has the same k, newest first.

    Exploratory runs never enter a baseline (unless promoted, which makes them official)."""
    found: list[PeriodCounts] = []
    for step in range(1, periods + 1):
        earlier = period.previous(step)
        run = official_run(store, project, earlier.name)
        if run is not None and run.k == k:
            found.append(period_counts(store, project, earlier, run))
    return found


def alerts_fired(store: Store, project: str, period: Period) -> list[AlertFired]:
    """The notices recorded for this period (fired and resolved), oldest first."""
    notices = AlertLog(store, project).notices(kinds=("fired", "resolved"), limit=500)
    found = []
    for n in reversed(notices):
        if n.payload.get("period") != period.name:
            continue
        details = n.payload.get("details") or {}
        baseline = details.get("baseline_pass_hat_k")
        found.append(
            AlertFired(
                rule=n.rule, task_type=n.task_type, message=n.message, fired_at=n.fired_at,
                baseline=float(baseline) if isinstance(baseline, int | float) else None,
                baseline_note=baseline_note(details, n.task_type, period.name) if baseline is not None else "",
            )
        )  # fmt: skip
    return found


def baseline_note(details: Mapping[str, Any], task_type: str | None, period: str) -> str:
    """How a drop test's baseline was formed, in words: which periods, and how the tickets were weighted.

    The overall baseline weights each task type by *this* period's traffic mix (so the two figures compare the
    same mix), which is why it can differ from the overall figure an earlier report showed."""
    periods = ", ".join(str(p) for p in details.get("baseline_periods", [])) or "no earlier period"
    tickets = details.get("baseline_tickets")
    pooled = f"{tickets} tickets of {periods}" if tickets is not None else periods
    if task_type is None:
        return f"{pooled}, each task type weighted by {period}'s traffic mix (not the mix of those periods)"
    return f"{pooled} pooled, each ticket counted once"


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
    if not report_input.trials and not report_input.tallies:
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
    exploratory: Sequence[str] = (),
    fresh: bool = False,
    same_tickets_as: ReplayRun | None = None,
    delivery: ReportDelivery | None = None,
    processes: WorkerProcesses | None = None,
) -> PeriodResult:
    """Replay the period, evaluate the alert rules, build and write the report, and send it to ``delivery``.

    An interrupted run is resumed and a finished one with the same settings reused (its trials kept) unless
    ``fresh``. ``adapters`` turn tickets of your own domains into scenarios (``domains`` holds their sandbox
    Domains). Every trial is traced through ``runtime``, by default straight into ``store`` as a sandbox
    ticket of the run (`/api/tickets?source=sandbox&run=ID`), never counted as production traffic.
    Only the period's official run (see `passhat.collector.replay.official_run`) evaluates alerts
    and writes the report in ``report_dir/<period>``; an ``exploratory`` run (the reasons say why) writes its
    report in ``report_dir/<period>/runs/<run id>`` and leaves the period's figures, alerts and baselines alone.
    A period none of whose tickets could be measured still gets a report saying why, and its run finishes;
    a run whose report or alerts fail is marked ``failed`` with the error, never left ``running``.
    The official run's report goes to ``delivery``'s channels once it is finished (once per period and channel;
    a delivery failure is logged and recorded, never raised: see `send_report`).
    """
    settings = settings or ReplaySettings()
    own_runtime = store_runtime(store, project) if runtime is None else None
    try:
        outcome = await replay_period(
            store, project, period, agent, domains=domains, adapters=adapters, settings=settings,
            runtime=runtime or own_runtime, pool=pool, progress=progress, exploratory=exploratory, fresh=fresh,
            same_tickets_as=same_tickets_as, processes=processes,
        )  # fmt: skip
    finally:
        if own_runtime is not None:
            own_runtime.flush()
            own_runtime.shutdown()
    run = outcome.run
    try:
        # The period's production tickets graded on their own changes, for the ticket list and the report's
        # sandbox fidelity (a ticket that cannot be graded is left without a verdict, never failed).
        grade_period(store, project, period, domains=domains, adapters=adapters, pool=pool, graded_by=run.run_id)
        result = _conclude(
            store, project, period, run, outcome, domains, alerts, report_dir, resamples, same_tickets_as
        )
    except Exception as exc:
        store.finish_replay_run(project, run.run_id, status="failed", error=f"{type(exc).__name__}: {exc}")
        raise
    if result.official and delivery is not None and delivery.channels:
        result.delivery = send_report_safely(store, project, result.report, delivery, run_id=run.run_id, trigger="run")
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
    same_tickets_as: ReplayRun | None,
) -> PeriodResult:
    if outcome.reused:
        current_official = official_run(store, project, period.name)
        is_official = current_official is not None and current_official.run_id == run.run_id
    else:
        is_official = not exploratory_reasons(run)
    not_replayable = [n.to_dict() for n in outcome.not_replayable]
    # The report reads the unreplayable tickets from the run: give it the final list (with overlay failures).
    run = replace(run, summary={**(run.summary or {}), "not_replayable_tickets": not_replayable})
    comparison = None
    if same_tickets_as is not None:
        base = store.ticket_tallies(project, same_tickets_as.run_id)
        with contextlib.suppress(ValueError):  # no ticket in common with enough trials: nothing to compare
            comparison = compare_tallies(
                same_tickets_as, base, run, store.ticket_tallies(project, run.run_id), k=run.k
            ).to_dict()
    report_input = report_input_for(
        store, project, period, run, domains=domains, alerts=alerts_fired(store, project, period), resamples=resamples,
        role="official" if is_official else "exploratory", comparison=comparison,
    )  # fmt: skip
    alert_outcome: PeriodOutcome | None = None
    if is_official and report_input.tallies:
        alert_outcome = evaluate_alerts(store, project, period, run, alerts)
        report_input = replace(report_input, alerts=alerts_fired(store, project, period))
    sampled = len(RunParams.of(run).tickets) or len(outcome.not_replayable)
    report = period_report(report_input, sampled)
    folder = report_folder(report_dir, period, run, official=is_official) if report_dir is not None else None
    paths = write_period_report(report, folder) if folder is not None else {}
    summary: dict[str, Any] = {
        "trials": len(outcome.trials),
        "not_replayable": len(report_input.not_replayable),
        "not_replayable_tickets": not_replayable,
        "report": {name: str(path) for name, path in paths.items()},
    }
    if isinstance(report, Report):
        summary["figures"] = {
            key: report.to_json()[key]
            for key in ("period", "k", "confidence_level", "overall", "unweighted", "agent", "agent_version")
        }
    else:
        summary["nothing_measured"] = report.why
    summary = keep_promotion(run.summary, summary)
    # A reused run keeps its finishing time: that time is when it became official (see official_run).
    store.finish_replay_run(project, run.run_id, summary=summary, at=run.finished_at if outcome.reused else None)
    return PeriodResult(outcome=outcome, report=report, report_paths=paths, alerts=alert_outcome, official=is_official)


def evaluate_alerts(
    store: Store, project: str, period: Period, run: ReplayRun, alerts: AlertSetup | None
) -> PeriodOutcome | None:
    """Evaluate the alert rules on a run's figures (call it for the period's official run only)."""
    if alerts is None or not alerts.rules:
        return None
    current = period_counts(store, project, period, run)
    baseline = baseline_counts(store, project, period, periods=alerts.baseline_periods, k=run.k)
    log = AlertLog(store, project, ui_url=alerts.ui_url)
    return log.run_period(alerts.rules, alerts.channels, alerts.retry, current, baseline, k=run.k)


def promote(
    store: Store,
    project: str,
    run_id: str,
    *,
    alerts: AlertSetup | None = None,
    domains: Mapping[str, Domain] | None = None,
    report_dir: Path | None = None,
    resamples: int = 1000,
) -> tuple[ReplayRun, PeriodOutcome | None, dict[str, Path]]:
    """Make a run its period's official run, then let the period follow it: the alerts are evaluated on its
    figures (updating or withdrawing what was sent) and the period's report is rewritten from it."""
    run = promote_run(store, project, run_id)
    period = parse_period(str(RunParams.of(run).period))
    alert_outcome = evaluate_alerts(store, project, period, run, alerts)
    paths: dict[str, Path] = {}
    if report_dir is not None:
        report_input = report_input_for(
            store, project, period, run, domains=domains, alerts=alerts_fired(store, project, period),
            resamples=resamples,
        )  # fmt: skip
        report = period_report(report_input, len(RunParams.of(run).tickets))
        paths = write_period_report(report, report_folder(report_dir, period, run, official=True))
    return run, alert_outcome, paths
