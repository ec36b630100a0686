"""`passhat replay --period/--since` (the production loop from the store) and `passhat report`."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from passhat.collector.cli._console import ci_text, console, emit_json, fail, pct, print_design_notes
from passhat.collector.store import Period, parse_period

if TYPE_CHECKING:  # imported where used: `passhat --help` should not load pydantic, numpy or SQLAlchemy
    from passhat.collector.config import PasshatConfig
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
    """Per (domain, task type): the same fields `passhat replay --domain` prints, from the trials that speak
    about the agent (a simulator or infrastructure error is not the agent's failure).

    Tickets whose usable trials do not settle pass^k are counted as ``unsettled_tickets``; ``min_trials``
    (curtailed replay) takes pass@1 from each ticket's first attempts.
    """
    from passhat.collector.reliability import summarize_trials

    usable = [trial for trial in trials if not (trial.simulator_error or trial.infra_error)]
    return [row.to_dict() for row in summarize_trials(usable, k, min_trials=min_trials)]


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


def replay_store(
    *,
    period: str | None,
    since: str | None,
    config_path: Path | None,
    store_url: str | None,
    project: str | None,
    k: int | None,
    tickets_per_task_type: int | None,
    agent: str | None,
    parallel: int | None,
    as_json: bool,
    stop_early: bool | None = None,
    min_trials: int | None = None,
) -> None:
    """`passhat replay --period P | --since T`: the production loop on the store's tickets for one period."""
    from passhat.collector.loop import agent_spec, alert_setup, replay_targets

    config = load_loop_config(config_path)
    chosen = period_from(period, since)
    store = open_loop_store(config, store_url)
    try:
        from passhat.collector.loop import run_period
        from passhat.collector.replay import NothingToReplayError, ReplaySettings
        from passhat.collector.report import ReportInputError
        from passhat.collector.store import StoreError
        from passhat.sandbox import DomainError

        try:
            spec = agent_spec(config, agent)
            targets = replay_targets(config)
            settings = ReplaySettings(
                k=k or config.replay.k,
                tickets_per_task_type=tickets_per_task_type or config.replay.tickets_per_task_type,
                parallel=parallel or config.replay.concurrency,
                stop_early=config.replay.stop_early if stop_early is None else stop_early,
                min_trials=min_trials or config.replay.min_trials,
            )
        except (DomainError, ValueError) as exc:
            fail(str(exc))
        name = project or config.project
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
                )
            )  # fmt: skip
            except (NothingToReplayError, ReportInputError, StoreError, DomainError) as exc:
                fail(str(exc))
    finally:
        store.close()
    from passhat.collector.report import UnreplayedReport, reason_counts

    design = result.outcome.run.params.get("design", {"name": "fixed", "k": settings.k})
    first = design.get("min_trials") if design.get("name") == "curtailed" else None
    rows = trial_table_rows(result.outcome.trials, settings.k, min_trials=first)
    not_replayable = [n.to_dict() for n in result.outcome.not_replayable]
    reasons = reason_counts(list(result.report.not_replayable))
    if as_json:
        emit_json(
            {
                "task_types": rows,
                "k": settings.k,
                "period": chosen.name,
                "run_id": result.outcome.run.run_id,
                "agent": spec.label,
                "design": design,
                "trials": len(result.outcome.trials),
                "not_replayable": not_replayable,
                "not_replayable_reasons": [
                    {"reason": reason, "fix": fix, "tickets": count} for reason, fix, count in reasons
                ],
                "measured": not isinstance(result.report, UnreplayedReport),
                "report": {kind: str(path) for kind, path in result.report_paths.items()},
            }
        )
        return
    if isinstance(result.report, UnreplayedReport):
        console.print(f"[bold red]{result.report.why}[/]")
    else:
        print_trial_table(
            f"{chosen.name}: {len(result.outcome.trials)} trials, k={settings.k}, agent {spec.label}", rows, settings.k
        )
        print_design_notes(rows, len(result.outcome.trials), settings.k, first)
    if reasons:  # the unreplayable tickets and the tickets left out for too few usable trials, with fixes
        print_reasons(reasons)
    console.print(f"Report: {result.report_paths.get('html')}")


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
    as_json: Annotated[bool, typer.Option("--json", help="Print report.json to stdout as well.")] = False,
) -> None:
    """Write a period's reliability report (HTML, JSON, Markdown) from its replay run in the store."""
    from passhat.collector.loop import alerts_fired, domains_of, period_report, report_input_for, write_period_report
    from passhat.collector.replay import runs_for_period
    from passhat.collector.report import ReportInputError, UnreplayedReport
    from passhat.sandbox import DomainError

    config = load_loop_config(config_path)
    try:
        chosen = parse_period(period)
    except ValueError as exc:
        fail(str(exc))
    name = project or config.project
    store = open_loop_store(config, store_url)
    try:
        runs = runs_for_period(store, name, chosen.name)
        if not runs:
            unfinished = [r for r in store.list_replay_runs(name, limit=500) if r.params.get("period") == chosen.name]
            if unfinished:
                fail(
                    f"the replay run {unfinished[0].run_id} of {chosen.name} has not finished: "
                    f"`passhat replay --period {chosen.name}` resumes it"
                )
            fail(f"no replay run for {chosen.name} in project {name!r}: run `passhat replay --period {chosen.name}`")
        try:
            report_input = report_input_for(
                store, name, chosen, runs[0], domains=domains_of(config), alerts=alerts_fired(store, name, chosen)
            )
            built = period_report(report_input, len(runs[0].params.get("tickets", [])))
        except (ReportInputError, DomainError) as exc:
            fail(str(exc))
        folder = out or config.report_dir() / chosen.name
        paths = write_period_report(built, folder)
    finally:
        store.close()
    if as_json:
        typer.echo(json.dumps(built.to_json(), indent=2, ensure_ascii=False))
        return
    if isinstance(built, UnreplayedReport):
        console.print(f"[bold red]{built.why}[/]")
        print_reasons(reason_counts_of(built))
        for kind, path in paths.items():
            console.print(f"  {kind}: {path}")
        return
    data = built.to_json()
    overall = data["overall"]
    failed = overall["expected_failed_tickets_per_day"] or 0.0
    console.print(
        f"{chosen.name}, k = {built.k}: pass@1 {pct(overall['pass_at_1'])}, "
        f"pass^{built.k} {pct(overall['pass_hat_k'])} (traffic-weighted); expected failed tickets per day {failed:,.1f}"
    )
    for kind, path in paths.items():
        console.print(f"  {kind}: {path}")
