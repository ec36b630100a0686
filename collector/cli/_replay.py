"""`passhat replay --period/--since`: the production loop on the store's tickets (trials, alerts, the report).

`passhat replay --domain ...` (the generated-scenario benchmark, before it had a command of its own) still runs,
as `passhat bench` with a deprecation note on stderr.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from typer.core import TyperCommand

from passhat.collector.cli._console import (
    console,
    emit_json,
    error_console,
    fail,
    fail_if_nothing_settled,
    print_design_notes,
    print_harness_failures,
)
from passhat.collector.cli._options import (
    BENCH_ONLY,
    AgentOption,
    ConfigPath,
    ExecutorOption,
    JsonOption,
    KOption,
    MinTrialsOption,
    ParallelOption,
    ProjectOption,
    RayAddressOption,
    RayWorkersOption,
    StopEarlyOption,
    StoreOption,
    TaskTypeOption,
    refused_option,
    task_types_of,
    unknown_option,
)
from passhat.collector.cli._store import load_loop_config, open_loop_store, period_from
from passhat.collector.cli._tables import (
    print_comparison,
    print_domain_table,
    print_reasons,
    print_trial_table,
    trial_table_rows,
)

if TYPE_CHECKING:
    from typer._click.core import Context as ClickContext  # the click typer carries (no public name)

    from passhat.collector.config import PasshatConfig
    from passhat.collector.replay import ReplayOutcome, ReplaySettings
    from passhat.collector.store import Period, Store

DEPRECATED = (
    "`passhat replay --domain` is deprecated: run `passhat bench --domain ...` (the same options); "
    "`passhat replay` replays production tickets (--period/--since)"
)


def _names_domain(args: list[str]) -> bool:
    return any(arg in ("--domain", "--domains") or arg.startswith(("--domain=", "--domains=")) for arg in args)


class ReplayCommand(TyperCommand):
    """`passhat replay`: the deprecated `--domain` spelling runs `passhat bench`; an option of the benchmark
    given to the production replay is named as such instead of "No such option"."""

    def parse_args(self, ctx: ClickContext, args: list[str]) -> list[str]:
        if _names_domain(args):
            from passhat.collector.cli._bench import bench_command

            error_console.print(f"[bold yellow]passhat:[/] {DEPRECATED}", highlight=False, soft_wrap=True)
            command = bench_command()
            with command.make_context("passhat bench", list(args), parent=ctx.parent) as bench_ctx:
                command.invoke(bench_ctx)
            ctx.exit(0)
        try:
            return super().parse_args(ctx, args)
        except typer.TyperException as exc:  # click's NoSuchOption (typer carries its own click)
            option = refused_option(exc, "passhat replay")
            if option == "--send-traces":
                fail(
                    "--send-traces applies to --domain only (`passhat bench`): --period/--since always store every "
                    "trial as a sandbox trace"
                )
            if option == "--flaws":
                fail(
                    "--flaws applies to --domain only (`passhat bench`); with --period the agent comes from the "
                    "config's [agent] table"
                )
            if option == "--timeout":
                fail(
                    "--timeout applies to `passhat bench`: `passhat replay` runs the agent of passhat.toml, whose "
                    "model requests (or an agent service's turns) may take agent.options.timeout seconds (120 by "
                    "default)"
                )
            if option in ("--model", "--base-url"):
                fail(
                    f"{option} applies to `passhat bench` and `passhat suite run`: `passhat replay` runs the agent "
                    'of passhat.toml, whose model is agent.model and agent.base_url (with agent.factory = "anthropic" '
                    'or "openai")'
                )
            if option in BENCH_ONLY:
                fail(
                    f"{option} applies to --domain only (`passhat bench`: a shipped domain's generated "
                    "scenarios), not to `passhat replay` (production tickets from the store)"
                )
            if option is not None:
                fail(unknown_option("passhat replay", option, getattr(exc, "possibilities", None)))
            raise


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
    task_types: tuple[str, ...] = ()  # none: every task type
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


def exploratory_reasons(options: StoreReplayOptions, config: PasshatConfig, settings: ReplaySettings) -> list[str]:
    """Why a run is a one-off, not the period's official run, by what it runs (empty: the configured settings)."""
    reasons: list[str] = []
    if settings.k != config.replay.k:
        reasons.append(f"k = {settings.k} (configured {config.replay.k})")
    trials, configured = settings.trials_per_ticket, config.replay.trials_per_ticket
    if trials != configured and trials != settings.k:
        reasons.append(f"{trials} trials per ticket (configured {configured})")
    wanted = options.tickets_per_task_type
    if wanted is not None and wanted != config.replay.tickets_per_task_type:
        reasons.append(f"{wanted} tickets per task type (configured {config.replay.tickets_per_task_type})")
    if settings.task_types:
        reasons.append(f"task type {', '.join(settings.task_types)} only")
    if options.agent is not None and options.agent != config.agent.factory:
        reasons.append(f"agent {options.agent} (configured {config.agent.factory})")
    if options.agent_version is not None and options.agent_version != (config.agent.version or ""):
        reasons.append(f"agent version {options.agent_version} (configured {config.agent.version or 'none'})")
    if options.compare_to is not None:
        reasons.append(f"candidate compared to run {options.compare_to}")
    if settings.stop_early != config.replay.stop_early:
        reasons.append(f"{'curtailed' if settings.stop_early else 'fixed'} trial design (configured otherwise)")
    if settings.min_trials != config.replay.min_trials:
        reasons.append(f"min_trials {settings.min_trials} (configured {config.replay.min_trials})")
    return reasons


def _settings(options: StoreReplayOptions, config: PasshatConfig, k: int, trials: int) -> ReplaySettings:
    from passhat.collector.loop import intent_model
    from passhat.collector.replay import ReplaySettings

    return ReplaySettings(
        k=k,
        trials=max(trials, k),
        tickets_per_task_type=(
            options.tickets_per_task_type
            if options.tickets_per_task_type is not None
            else config.replay.tickets_per_task_type
        ),
        parallel=options.parallel if options.parallel is not None else config.replay.concurrency,
        task_types=options.task_types,
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


def replay_store(options: StoreReplayOptions, *, as_json: bool) -> None:
    """`passhat replay --period P | --since T`: the production loop on the store's tickets for one period.

    An option given on the command line always wins over the config, even when it equals the built-in default.
    With ``compare_to`` the candidate replays that run's tickets (of ``task_type`` only, when given) at the
    baseline's k and trials per ticket unless ``k`` is given.
    """
    from passhat.collector.loop import agent_spec, alert_setup, ignored_model_settings, replay_targets

    config = load_loop_config(options.config_path)
    chosen = period_from(
        options.period, options.since,
        missing="give --period or --since (the production tickets to replay); `passhat bench --domain D` runs "
        "a shipped domain's generated scenarios",
    )  # fmt: skip
    name = options.project or config.project
    nothing = (
        f"no production tickets of {chosen.name} in project {name!r}: nothing to replay"
        if options.compare_to is None
        else f"no replay run {options.compare_to!r} in project {name!r}"
    )
    store = open_loop_store(config, options.store_url, reads=nothing, project=name)
    try:
        from passhat.collector.loop import run_period
        from passhat.collector.replay import ExecutorError, NothingToReplayError, compare_runs
        from passhat.collector.report import ReportInputError
        from passhat.collector.store import RunParams, StoreError
        from passhat.sandbox import DomainError, ModelServerUnusableError

        base_run = None
        if options.compare_to is not None:
            base_run = store.get_replay_run(name, options.compare_to)
            if base_run is None:
                fail(f"no replay run {options.compare_to!r} in project {name!r}: `passhat runs list` shows the runs")
            if RunParams.of(base_run).period != chosen.name:
                fail(f"run {base_run.run_id} replayed {RunParams.of(base_run).period}, not {chosen.name}")
        k = options.k if options.k is not None else (base_run.k if base_run is not None else config.replay.k)
        trials = config.replay.trials_per_ticket if options.k is None else max(options.k, config.replay.trials or 0)
        if base_run is not None and options.k is None:
            trials = RunParams.of(base_run).trials
        try:
            spec = agent_spec(config, options.agent)
            if options.agent_version is not None:
                spec = dataclasses.replace(spec, version=options.agent_version)
            targets = replay_targets(config)
            settings = _settings(options, config, k, trials)
        except (DomainError, ValueError) as exc:
            fail(str(exc))
        reasons = exploratory_reasons(options, config, settings)
        ignored = ignored_model_settings(config, options.agent)
        if ignored is not None:
            error_console.print(f"[bold yellow]passhat: note:[/] {escape(ignored)}", highlight=False, soft_wrap=True)
        with Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=console, disable=as_json,
        ) as progress:  # fmt: skip
            task = progress.add_task(f"{chosen.name}: replay, k = {settings.k}", total=1)
            try:
                result = asyncio.run(
                    run_period(
                        store, name, chosen, spec, settings=settings, domains=targets.domains,
                        adapters=targets.adapters, alerts=alert_setup(config), report_dir=config.report_dir_for(name),
                        progress=lambda done, total: progress.update(task, completed=done, total=total),
                        exploratory=reasons, fresh=options.fresh, same_tickets_as=base_run,
                    )
                )  # fmt: skip
            except ModelServerUnusableError as exc:  # a dead model server: stopped early, the trials stored are kept
                progress.remove_task(task)
                fail(f"{exc} (the trials stored are kept: the same command resumes the run)", code=1)
            except (NothingToReplayError, ReportInputError, StoreError, DomainError, ExecutorError) as exc:
                progress.remove_task(task)  # no bar left above the error
                fail(str(exc))
            except ImportError as exc:  # executor = "ray" without Ray installed
                if settings.executor != "ray":
                    raise
                progress.remove_task(task)
                fail(str(exc))
        arrived = _arrived_since(store, name, chosen, result.outcome) if result.outcome.reused else 0
        comparison = None
        if base_run is not None:
            try:
                comparison = compare_runs(store, name, base_run.run_id, result.outcome.run.run_id, k=settings.k)
            except ValueError as exc:
                fail(str(exc))
    finally:
        store.close()
    from passhat.collector.reliability import agent_trials, harness_failures
    from passhat.collector.report import UnreplayedReport, reason_counts

    run = result.outcome.run
    plan_design = RunParams.of(run).design
    design = plan_design.to_dict()
    first = plan_design.min_trials if plan_design.name == "curtailed" else None
    rows, domains, overall = trial_table_rows(list(result.outcome.trials), settings.k, min_trials=first)
    not_replayable = [n.to_dict() for n in result.outcome.not_replayable]
    missing = reason_counts(list(result.report.not_replayable))
    role = "official" if result.official else ("exploratory" if reasons else "superseded")
    # Runs of trials lost to the infrastructure (a harness error, a Ray worker that died) and run again.
    lost = sum(len(trial.details.infra_retries) for trial in result.outcome.trials)
    broken = [group.to_dict() for group in harness_failures(result.outcome.trials)]
    settled = len(agent_trials(result.outcome.trials))
    if as_json:
        print_harness_failures(broken, as_json=True)
        emit_json(
            {
                "task_types": rows,
                "domains": domains,
                "overall": overall,
                "k": settings.k,
                "trials_per_ticket": settings.trials_per_ticket,
                "period": chosen.name,
                "run_id": run.run_id,
                "role": role,
                "exploratory": reasons,
                "reused": result.outcome.reused,
                "arrived_since_sampled": arrived,
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
        fail_if_nothing_settled(f"run {run.run_id}", len(result.outcome.trials), settled, broken)
        return
    version = f" {spec.version}" if spec.version else ""
    if isinstance(result.report, UnreplayedReport):
        console.print(f"[bold red]{result.report.why}[/]")
    else:
        only = f", task type {', '.join(settings.task_types)} only" if settings.task_types else ""
        print_trial_table(
            f"{chosen.name}: {len(result.outcome.trials)} trials, k={settings.k}, "
            f"{settings.trials_per_ticket} per ticket{only}, agent {spec.label}{version}",
            rows,
            settings.k,
        )
        if len(domains) > 1:
            print_domain_table(domains, overall, settings.k)
        print_design_notes(rows, len(result.outcome.trials), settings.k, first)
    if lost:
        console.print(f"{lost} run(s) of trials were lost to the infrastructure and run again (never the agent's).")
    print_harness_failures(broken, as_json=False)
    for note in result.outcome.notes:
        console.print(f"Note: {note}")
    reused = " (a finished run with these settings: its trials were reused; --fresh re-runs them)"
    console.print(f"Run {run.run_id}, {role}{reused if result.outcome.reused else ''}.")
    if arrived > 0:
        from passhat.collector.reliability import counted

        console.print(
            f"{counted(arrived, 'production ticket')} of {chosen.name} arrived after this run sampled its tickets "
            f"(from {sum(result.outcome.population.values())}): `--fresh` replays a sample of them all."
        )
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
    fail_if_nothing_settled(f"run {run.run_id}", len(result.outcome.trials), settled, broken)


def replay(
    period: Annotated[
        str | None, typer.Option(help="Replay the store's production tickets of this period (e.g. 2026-W48).")
    ] = None,
    since: Annotated[str | None, typer.Option(help="Replay the store's production tickets since a day.")] = None,
    config_path: ConfigPath = None,
    store_url: StoreOption = None,
    project: ProjectOption = None,
    tickets_per_task_type: Annotated[
        int | None, typer.Option(help="Tickets sampled per task type [default: replay.tickets_per_task_type].")
    ] = None,
    task_type: TaskTypeOption = None,
    k: KOption = None,
    agent: AgentOption = None,
    agent_version: Annotated[
        str | None, typer.Option(help="The version of the agent under test [default: agent.version].")
    ] = None,
    parallel: ParallelOption = None,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Start a new run even if one with these settings finished.")
    ] = False,
    compare_to: Annotated[
        str | None,
        typer.Option(help="Replay the tickets of this run with the agent given, and compare the two."),
    ] = None,
    stop_early: StopEarlyOption = None,
    min_trials: MinTrialsOption = None,
    executor: ExecutorOption = None,
    ray_address: RayAddressOption = None,
    ray_workers: RayWorkersOption = None,
    workers: Annotated[
        int | None,
        typer.Option(min=0, help="Local worker processes (0: one per core) [default: replay.workers]."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Replay a period's production tickets from the store: k trials each, then the alerts and the report.

    Per task type: pass@1, pass@k and pass^k with intervals and failure signatures (the loop). A benchmark
    on a shipped domain's generated scenarios (no store) is `passhat bench --domain D`.
    """
    replay_store(
        StoreReplayOptions(
            period=period, since=since, config_path=config_path, store_url=store_url, project=project, k=k,
            tickets_per_task_type=tickets_per_task_type, task_types=task_types_of(task_type), agent=agent,
            agent_version=agent_version, parallel=parallel, fresh=fresh, compare_to=compare_to,
            stop_early=stop_early, min_trials=min_trials, executor=executor, ray_address=ray_address,
            ray_workers=ray_workers, workers=workers,
        ),
        as_json=as_json,
    )  # fmt: skip


def register(app: typer.Typer) -> None:
    """Add `passhat replay` to the app."""
    app.command("replay", cls=ReplayCommand)(replay)


def _arrived_since(store: Store, project: str, period: Period, outcome: ReplayOutcome) -> int:
    """Production tickets of ``period`` (of the task types the run sampled) stored after the reused run sampled."""
    days = (period.end - period.start).days
    now = store.traffic(project, days=days, today=period.end - dt.timedelta(days=1))
    kinds = set(outcome.population)
    return sum(day.tickets for day in now if day.task_type in kinds) - sum(outcome.population.values())
