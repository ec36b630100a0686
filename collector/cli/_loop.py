"""`passhat replay --period/--since` (the production loop from the store) and `passhat report`."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from passhat.collector.cli._console import (
    ci_text,
    console,
    emit_json,
    fail,
    pct,
    print_design_notes,
    print_harness_failures,
)
from passhat.collector.cli._send import send_period_report, send_targets
from passhat.collector.store import Period, parse_period

if TYPE_CHECKING:  # imported where used: `passhat --help` should not load pydantic, numpy or SQLAlchemy
    from passhat.collector.config import PasshatConfig
    from passhat.collector.replay import RunComparison
    from passhat.collector.report import UnreplayedReport
    from passhat.collector.store import Store, TrialRow

ConfigPath = Annotated[
    Path | None, typer.Option("--config", help="passhat.toml [env PASSHAT_CONFIG; ./passhat.toml if present].")
]
StoreOption = Annotated[str | None, typer.Option("--store", help="Store URL (overrides the config's).")]
ProjectOption = Annotated[str | None, typer.Option("--project", help="Project (overrides the config's).")]


def load_loop_config(path: Path | None) -> PasshatConfig:
    """The config named, or $PASSHAT_CONFIG, or ./passhat.toml when present, else the defaults."""
    from passhat.collector.config import ConfigError, PasshatConfig, load_config

    chosen = path or (Path(os.environ["PASSHAT_CONFIG"]) if os.environ.get("PASSHAT_CONFIG") else None)
    if chosen is None and Path("passhat.toml").exists():
        chosen = Path("passhat.toml")
    if chosen is None:
        return PasshatConfig()
    try:
        return load_config(chosen)
    except ConfigError as exc:
        fail(f"{exc.source}: " + "; ".join(exc.problems))


def open_loop_store(config: PasshatConfig, store_url: str | None) -> Store:
    from passhat.collector.store import StoreError, open_store

    url = store_url or os.environ.get("PASSHAT_STORE_URL") or config.store_url()
    try:
        return open_store(url)
    except StoreError as exc:
        fail(str(exc))


def period_from(period: str | None, since: str | None) -> Period:
    """`--period 2026-W48` or `--since 2026-11-20` (up to now)."""
    if (period is None) == (since is None):
        fail("give one of --domain, --period or --since")
    try:
        if period is not None:
            return parse_period(period)
        assert since is not None
        start = dt.date.fromisoformat(since[:10])
    except ValueError as exc:
        fail(str(exc))
    end = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)
    if start >= end:
        fail(f"--since {since} is in the future")
    return Period(f"since-{start.isoformat()}", start, end)


def trial_table_rows(trials: list[TrialRow], k: int, *, min_trials: int | None = None) -> list[dict[str, Any]]:
    """Per (domain, task type): the same fields `passhat replay --domain` prints, by the same rule (a trial the
    harness broke is in no figure, only in ``harness_failures``: `reliability.summarize_trials`).

    Tickets whose usable trials do not settle pass^k are counted as ``unsettled_tickets``; ``min_trials``
    (curtailed replay) takes pass@1 from each ticket's first attempts.
    """
    from passhat.collector.reliability import summarize_trials

    return [row.to_dict() for row in summarize_trials(trials, k, min_trials=min_trials)]


def print_trial_table(title: str, rows: list[dict[str, Any]], k: int) -> None:
    table = Table(title=title)
    for column in ("task type", "n", "pass@1", f"pass@{k}", f"pass^{k}", f"pass^{k} CI", "signatures"):
        table.add_column(column)
    for row in rows:
        signatures = ", ".join(f"{name} {count}" for name, count in row["signatures"].items()) or "-"
        table.add_row(
            row["task_type"], str(row["tickets"]), pct(row["pass_at_1"]), pct(row["pass_at_k"]),
            pct(row["pass_hat_k"]), ci_text(row["pass_hat_k_ci"]), signatures,
        )  # fmt: skip
    console.print(table)


@dataclass(frozen=True)
class StoreReplayOptions:
    """What `passhat replay --period/--since` was given; None means "not given: use the config"."""

    period: str | None
    since: str | None
    config_path: Path | None = None
    store_url: str | None = None
    project: str | None = None
    k: int | None = None
    tickets_per_task_type: int | None = None
    task_type: str | None = None
    agent: str | None = None
    agent_version: str | None = None
    parallel: int | None = None
    fresh: bool = False
    compare_to: str | None = None
    stop_early: bool | None = None
    min_trials: int | None = None
    executor: str | None = None
    ray_address: str | None = None
    ray_workers: int | None = None
    workers: int | None = None


def exploratory_reasons(options: StoreReplayOptions, config: PasshatConfig) -> list[str]:
    """Why a run with these options is a one-off, not the period's official run (empty: configured settings)."""
    reasons: list[str] = []
    if options.k is not None and options.k != config.replay.k:
        reasons.append(f"k = {options.k} (configured {config.replay.k})")
    wanted = options.tickets_per_task_type
    if wanted is not None and wanted != config.replay.tickets_per_task_type:
        reasons.append(f"{wanted} tickets per task type (configured {config.replay.tickets_per_task_type})")
    if options.task_type is not None:
        reasons.append(f"task type {options.task_type} only")
    if options.agent is not None and options.agent != config.agent.factory:
        reasons.append(f"agent {options.agent} (configured {config.agent.factory})")
    if options.agent_version is not None and options.agent_version != (config.agent.version or ""):
        reasons.append(f"agent version {options.agent_version} (configured {config.agent.version or 'none'})")
    if options.compare_to is not None:
        reasons.append(f"candidate compared to run {options.compare_to}")
    if options.stop_early is not None and options.stop_early != config.replay.stop_early:
        reasons.append(f"{'curtailed' if options.stop_early else 'fixed'} trial design (configured otherwise)")
    if options.min_trials is not None and options.min_trials != config.replay.min_trials:
        reasons.append(f"min_trials {options.min_trials} (configured {config.replay.min_trials})")
    return reasons


def replay_store(options: StoreReplayOptions, *, as_json: bool) -> None:
    """`passhat replay --period P | --since T`: the production loop on the store's tickets for one period.

    An option given on the command line always wins over the config, even when it equals the built-in default.
    """
    import dataclasses

    from passhat.collector.loop import agent_spec, alert_setup, intent_model, replay_targets

    config = load_loop_config(options.config_path)
    chosen = period_from(options.period, options.since)
    store = open_loop_store(config, options.store_url)
    name = options.project or config.project
    try:
        from passhat.collector.loop import run_period
        from passhat.collector.replay import ExecutorError, NothingToReplayError, ReplaySettings, compare_runs
        from passhat.collector.report import ReportInputError
        from passhat.collector.store import RunParams, StoreError
        from passhat.sandbox import DomainError

        base_run = None
        if options.compare_to is not None:
            base_run = store.get_replay_run(name, options.compare_to)
            if base_run is None:
                fail(f"no replay run {options.compare_to!r} in project {name!r}: `passhat runs list` shows the runs")
            if RunParams.of(base_run).period != chosen.name:
                fail(f"run {base_run.run_id} replayed {RunParams.of(base_run).period}, not {chosen.name}")
        k = options.k if options.k is not None else (base_run.k if base_run is not None else config.replay.k)
        trials = config.replay.trials_per_ticket if options.k is None else max(options.k, config.replay.trials or 0)
        if base_run is not None:
            trials = RunParams.of(base_run).trials
        try:
            spec = agent_spec(config, options.agent)
            if options.agent_version is not None:
                spec = dataclasses.replace(spec, version=options.agent_version)
            targets = replay_targets(config)
            settings = ReplaySettings(
                k=k,
                trials=max(trials, k),
                tickets_per_task_type=(
                    options.tickets_per_task_type
                    if options.tickets_per_task_type is not None
                    else config.replay.tickets_per_task_type
                ),
                parallel=options.parallel if options.parallel is not None else config.replay.concurrency,
                task_types=(options.task_type,) if options.task_type is not None else (),
                stop_early=config.replay.stop_early if options.stop_early is None else options.stop_early,
                min_trials=options.min_trials if options.min_trials is not None else config.replay.min_trials,
                executor=options.executor or config.replay.executor,
                ray_address=options.ray_address or config.replay.ray_address,
                workers=options.workers if options.workers is not None else config.replay.workers,
                ray_workers=options.ray_workers if options.ray_workers is not None else config.replay.ray_workers,
                ray_concurrency=config.replay.ray_concurrency,
                ray_env=tuple(config.replay.ray_env),
                harness_retries=config.replay.harness_retries,
                infer_intent=config.replay.infer_intent,
                intent_model=intent_model(config),
            )
        except (DomainError, ValueError) as exc:
            fail(str(exc))
        reasons = exploratory_reasons(options, config)
        with Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=console, disable=as_json,
        ) as progress:  # fmt: skip
            task = progress.add_task(f"{chosen.name}: replay, k = {settings.k}", total=1)
            try:
                result = asyncio.run(
                    run_period(
                        store, name, chosen, spec, settings=settings, domains=targets.domains,
                        adapters=targets.adapters, alerts=alert_setup(config), report_dir=config.report_dir(),
                        progress=lambda done, total: progress.update(task, completed=done, total=total),
                        exploratory=reasons, fresh=options.fresh, same_tickets_as=base_run,
                    )
                )  # fmt: skip
            except (NothingToReplayError, ReportInputError, StoreError, DomainError, ExecutorError) as exc:
                fail(str(exc))
            except ImportError as exc:  # executor = "ray" without Ray installed
                if settings.executor != "ray":
                    raise
                fail(str(exc))
        comparison = None
        if base_run is not None:
            try:
                comparison = compare_runs(store, name, base_run.run_id, result.outcome.run.run_id, k=settings.k)
            except ValueError as exc:
                fail(str(exc))
    finally:
        store.close()
    from passhat.collector.reliability import harness_failures
    from passhat.collector.report import UnreplayedReport, reason_counts

    run = result.outcome.run
    from passhat.collector.store import RunParams

    plan_design = RunParams.of(run).design
    design = plan_design.to_dict()
    first = plan_design.min_trials if plan_design.name == "curtailed" else None
    rows = trial_table_rows(result.outcome.trials, settings.k, min_trials=first)
    not_replayable = [n.to_dict() for n in result.outcome.not_replayable]
    missing = reason_counts(list(result.report.not_replayable))
    role = "official" if result.official else ("exploratory" if reasons else "superseded")
    # Runs of trials lost to the infrastructure (a harness error, a Ray worker that died) and run again.
    lost = sum(len(trial.details.infra_retries) for trial in result.outcome.trials)
    broken = [group.to_dict() for group in harness_failures(result.outcome.trials)]
    if as_json:
        print_harness_failures(broken, as_json=True)
        emit_json(
            {
                "task_types": rows,
                "k": settings.k,
                "trials_per_ticket": settings.trials_per_ticket,
                "period": chosen.name,
                "run_id": run.run_id,
                "role": role,
                "exploratory": reasons,
                "reused": result.outcome.reused,
                "agent": spec.label,
                "agent_version": spec.version,
                "design": design,
                "trials": len(result.outcome.trials),
                "infra_retries": lost,
                "notes": result.outcome.notes,
                "harness_failures": broken,
                "not_replayable": not_replayable,
                "not_replayable_reasons": [
                    {"reason": reason, "fix": fix, "tickets": count} for reason, fix, count in missing
                ],
                "measured": not isinstance(result.report, UnreplayedReport),
                "report": {kind: str(path) for kind, path in result.report_paths.items()},
                **({"comparison": comparison.to_dict()} if comparison is not None else {}),
            }
        )
        return
    version = f" {spec.version}" if spec.version else ""
    if isinstance(result.report, UnreplayedReport):
        console.print(f"[bold red]{result.report.why}[/]")
    else:
        print_trial_table(
            f"{chosen.name}: {len(result.outcome.trials)} trials, k={settings.k}, "
            f"{settings.trials_per_ticket} per ticket, agent {spec.label}{version}",
            rows,
            settings.k,
        )
        print_design_notes(rows, len(result.outcome.trials), settings.k, first)
    if lost:
        console.print(f"{lost} run(s) of trials were lost to the infrastructure and run again (never the agent's).")
    print_harness_failures(broken, as_json=False)
    for note in result.outcome.notes:
        console.print(f"Note: {note}")
    reused = " (a finished run with these settings: its trials were reused; --fresh re-runs them)"
    console.print(f"Run {run.run_id}, {role}{reused if result.outcome.reused else ''}.")
    if reasons:
        console.print(
            f"Exploratory ({'; '.join(reasons)}): not the period's figures nor a baseline; "
            f"`passhat runs promote {run.run_id}` makes it official."
        )
    if missing:  # the unreplayable tickets and the tickets left out for too few usable trials, with fixes
        print_reasons(missing)
    if comparison is not None:
        print_comparison(comparison)
    console.print(f"Report: {result.report_paths.get('html')}")


def print_comparison(comparison: RunComparison) -> None:
    """The per-task-type paired differences, candidate minus baseline."""
    k = comparison.k
    base, cand = comparison.baseline, comparison.candidate
    table = Table(
        title=f"{cand.run_id} vs {base.run_id} on the same tickets (candidate minus baseline, "
        f"{100 * comparison.level:g}% paired interval)"
    )
    for column in ("task type", "tickets", "pass@1", "change", f"pass^{k}", "change", "interval", "verdict"):
        table.add_column(column)
    for row in comparison.task_types:
        at_1, hat = row.pass_at_1, row.pass_hat_k
        verdict = "worse" if hat.credibly_lower else ("better" if hat.credibly_higher else "no clear change")
        table.add_row(
            row.task_type, str(hat.tickets), f"{pct(at_1.baseline)} → {pct(at_1.candidate)}",
            signed_points(at_1.difference), f"{pct(hat.baseline)} → {pct(hat.candidate)}",
            signed_points(hat.difference), ci_points(hat.interval), verdict,
        )  # fmt: skip
    console.print(table)


def signed_points(value: float) -> str:
    return f"{100.0 * value:+.1f} pp"


def ci_points(interval: tuple[float, float] | None) -> str:
    if interval is None:
        return "too few tickets"
    return f"[{100.0 * interval[0]:+.1f}, {100.0 * interval[1]:+.1f}] pp"


def print_reasons(reasons: list[tuple[str, str, int]]) -> None:
    """The reasons sampled tickets were not measured, with how many tickets each and what fixes it."""
    total = sum(count for _, _, count in reasons)
    table = Table(title=f"{total} sampled ticket(s) not measured (also listed in the report)")
    for column in ("tickets", "reason", "fix"):
        table.add_column(column, overflow="fold")
    for reason, fix, count in reasons:
        table.add_row(str(count), reason, fix or "-")
    console.print(table)


def reason_counts_of(report: UnreplayedReport) -> list[tuple[str, str, int]]:
    from passhat.collector.report import reason_counts

    return reason_counts(report.not_replayable)


def report(
    period: Annotated[str, typer.Option(help="The period: an ISO week like 2026-W48, or a day.")],
    out: Annotated[Path | None, typer.Option(help="Folder for report.html/.json/.md (default: the config's).")] = None,
    config_path: ConfigPath = None,
    store_url: StoreOption = None,
    project: ProjectOption = None,
    run_id: Annotated[
        str | None, typer.Option("--run", help="Report this run of the period (default: its official run).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print report.json to stdout as well.")] = False,
    send: Annotated[
        bool, typer.Option("--send", help="Send the report to the [report] send_to channels (once per channel).")
    ] = False,
    resend: Annotated[
        bool, typer.Option("--resend", help="Send even to channels that have this period's report (implies --send).")
    ] = False,
    channel: Annotated[
        list[str] | None, typer.Option("--channel", help="With --send: this configured channel instead (repeatable).")
    ] = None,
) -> None:
    """Write a period's reliability report (HTML, JSON, Markdown) from its official replay run in the store.

    The official run is the finished run made official most recently: a run with the configured settings when it
    finishes, any run when promoted (`passhat runs promote`). The report says which run it shows.
    `--send` sends it to the `[report] send_to` channels, each once per period (`--resend` sends again);
    `passhat alerts history` shows every delivery."""
    from passhat.collector.loop import (
        alerts_fired,
        domains_of,
        period_report,
        report_folder,
        report_input_for,
        write_period_report,
    )  # fmt: skip
    from passhat.collector.replay import official_run, period_runs, role_of
    from passhat.collector.report import ReportInputError, UnreplayedReport
    from passhat.collector.store import RunParams
    from passhat.sandbox import DomainError

    config = load_loop_config(config_path)
    try:
        chosen = parse_period(period)
    except ValueError as exc:
        fail(str(exc))
    send = send or resend
    targets = send_targets(config, channel) if send else []
    if channel and not send:
        fail("--channel chooses where --send sends the report: add --send")
    name = project or config.project
    store = open_loop_store(config, store_url)
    try:
        official = official_run(store, name, chosen.name)
        shown = official
        if run_id is not None:
            shown = store.get_replay_run(name, run_id)
            if shown is None or RunParams.of(shown).period != chosen.name:
                fail(f"no replay run {run_id!r} of {chosen.name} in project {name!r}: `passhat runs list` shows them")
            if shown.status != "finished":
                fail(f"the replay run {run_id} is {shown.status}: `passhat replay --period {chosen.name}` resumes it")
        if shown is None:
            runs = period_runs(store, name, chosen.name)
            if any(r.status == "running" for r in runs):
                unfinished = next(r for r in runs if r.status == "running")
                fail(
                    f"the replay run {unfinished.run_id} of {chosen.name} has not finished: "
                    f"`passhat replay --period {chosen.name}` resumes it"
                )
            if runs:
                fail(
                    f"{chosen.name} has only exploratory runs ({', '.join(r.run_id for r in runs)}): pass --run ID, "
                    f"`passhat runs promote ID`, or `passhat replay --period {chosen.name}` with configured settings"
                )
            fail(f"no replay run for {chosen.name} in project {name!r}: run `passhat replay --period {chosen.name}`")
        role = "official" if official is not None and shown.run_id == official.run_id else role_of(shown, official)
        try:
            report_input = report_input_for(
                store, name, chosen, shown, domains=domains_of(config), alerts=alerts_fired(store, name, chosen),
                role=role,
            )  # fmt: skip
            built = period_report(report_input, len(RunParams.of(shown).tickets))
        except (ReportInputError, DomainError) as exc:
            fail(str(exc))
        if send and role != "official":
            fail(
                f"only the official run's report of {chosen.name} is sent, and run {shown.run_id} is {role}: "
                f"`passhat runs promote {shown.run_id}` makes it official"
            )
        folder = out or report_folder(config.report_dir(), chosen, shown, official=role == "official")
        paths = write_period_report(built, folder)
        delivered = (
            send_period_report(store, name, built, config, targets, shown.run_id, resend, quiet=as_json)
            if send
            else None
        )
    finally:
        store.close()
    if as_json:
        typer.echo(json.dumps(built.to_json(), indent=2, ensure_ascii=False))
        if delivered is not None and not delivered.ok:
            raise typer.Exit(1)
        return
    if isinstance(built, UnreplayedReport):
        console.print(f"[bold red]{built.why}[/]")
        print_reasons(reason_counts_of(built))
        for kind, path in paths.items():
            console.print(f"  {kind}: {path}")
        if delivered is not None and not delivered.ok:
            raise typer.Exit(1)
        return
    data = built.to_json()
    overall = data["overall"]
    failed = overall["expected_failed_tickets_per_day"] or 0.0
    console.print(f"{chosen.name}: {role} run {shown.run_id}")
    console.print(
        f"{chosen.name}, k = {built.k}: pass@1 {pct(overall['pass_at_1'])}, "
        f"pass^{built.k} {pct(overall['pass_hat_k'])} (traffic-weighted); expected failed tickets per day {failed:,.1f}"
    )
    for kind, path in paths.items():
        console.print(f"  {kind}: {path}")
    if delivered is not None and not delivered.ok:
        raise typer.Exit(1)
