"""`passhat suite list|run|table`: the frozen benchmark suite on the command line (logic: passhat.collector.suite)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from passhat.collector.cli._console import (
    console,
    emit_json,
    fail,
    fail_if_nothing_settled,
    harness_cause,
    pct,
    print_harness_failures,
)
from passhat.collector.cli._options import (
    ConfigPath,
    JsonOption,
    ProjectOption,
    StoreOption,
    TimeoutOption,
    check_model_options,
    check_timeout,
)
from passhat.collector.cli._store import load_loop_config, open_loop_store

if TYPE_CHECKING:
    from passhat.collector.suite import SuiteTable

COMPACT: dict[str, Any] = {"box": box.SIMPLE_HEAD, "collapse_padding": True, "pad_edge": False}
"""Light rules and one space between columns: the tables fit 80 columns (a pipe, a narrow terminal)."""

suite_app = typer.Typer(
    no_args_is_help=True,
    help="The frozen benchmark suite: list its tasks, run an agent on it, and table one or more runs.",
)


def _names(text: str | None, what: str) -> tuple[str, ...]:
    if text is None or text.strip() in ("", "all"):
        return ()
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    if not names:
        fail(f"{what} takes names separated by commas, or all")
    return names


@suite_app.command("list")
def list_command(as_json: JsonOption = False) -> None:
    """The suite versions, each with its content hash, domains and task types with their task counts."""
    from passhat.collector.suite import SUITE_VERSION, SuiteError, load_suite, versions
    from passhat.sandbox import DomainError

    try:
        manifests = [load_suite(version).manifest() for version in versions()]
    except (SuiteError, DomainError) as exc:
        fail(str(exc))
    if as_json:
        emit_json({"current": SUITE_VERSION, "versions": manifests})
        return
    for manifest in manifests:
        table = Table(
            title=f"suite {manifest['version']}: {manifest['tasks']} tasks, {manifest['response_checked']} also "
            f"graded on the final response; hash {manifest['content_hash'][:16]}",
            **COMPACT,
        )
        # The task type's name is what a reader looks up: never cut, even on an 80-column terminal.
        table.add_column("domain (tasks)", min_width=10)
        table.add_column("task type", no_wrap=True)
        table.add_column("kind", no_wrap=True)
        table.add_column("tasks", justify="right", min_width=5)
        table.add_column("reply checked", min_width=7)
        for domain, entry in manifest["domains"].items():
            for index, (name, info) in enumerate(entry["task_types"].items()):
                table.add_row(
                    f"{domain} ({entry['tasks']})" if index == 0 else "", name, info["kind"], str(info["tasks"]),
                    "yes" if info["response_check"] else "",
                )  # fmt: skip
        console.print(table)


@suite_app.command("run")
def run_command(
    agent: Annotated[
        str,
        typer.Option(help="reference, anthropic, openai, an agent service's http(s):// URL, or module:function."),
    ] = "reference",
    flaws: Annotated[
        str | None,
        typer.Option(help="The reference agent's flaw profile: off, careful, default, sloppy or wrong_entity."),
    ] = None,
    k: Annotated[int, typer.Option("--k", help="Trials per task (pass^k's k).")] = 20,
    domains: Annotated[str | None, typer.Option(help="Domains, comma-separated, or all [default: all].")] = None,
    task_type: Annotated[
        str | None, typer.Option("--task-type", help="Task types, comma-separated [default: every one].")
    ] = None,
    stop_early: Annotated[
        bool, typer.Option("--stop-early", help="Stop a task's trials once one passed and one failed.")
    ] = False,
    min_trials: Annotated[int, typer.Option(help="Attempts every task runs under --stop-early.")] = 2,
    executor: Annotated[str, typer.Option(help="Where trials run: local (every core) or ray.")] = "local",
    ray_address: Annotated[str, typer.Option(help="--executor ray: a cluster's address, or local.")] = "local",
    workers: Annotated[int, typer.Option(min=0, help="Local worker processes (0: one per core).")] = 0,
    parallel: Annotated[int, typer.Option(min=1, help="Trials in flight at once.")] = 8,
    label: Annotated[str, typer.Option(help="The run's name in tables (default: the agent).")] = "",
    model: Annotated[str | None, typer.Option(help="Model of the anthropic or openai agent.")] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            help="Server of the openai (Chat Completions) or anthropic agent [default: OPENAI_BASE_URL or "
            "ANTHROPIC_BASE_URL]."
        ),
    ] = None,
    timeout: TimeoutOption = None,
    agent_version: Annotated[str, typer.Option(help="The version of the agent under test.")] = "",
    version: Annotated[str | None, typer.Option("--suite-version", help="Suite version [default: current].")] = None,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Start a new run even if one with these settings finished.")
    ] = False,
    config_path: ConfigPath = None,
    store_url: StoreOption = None,
    project: ProjectOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run the suite's tasks k times each with an agent; trials and traces go to the store (resumable)."""
    from passhat.collector.loop import store_runtime
    from passhat.collector.replay import ExecutorError
    from passhat.collector.suite import SUITE_VERSION, SuiteError, SuiteRunSettings, load_suite, run_suite, suite_agent
    from passhat.sandbox import DomainError, ModelServerUnusableError

    if k < 1 or min_trials < 1:
        fail("--k and --min-trials must be at least 1")
    wrong_model = check_model_options(agent, model=model, base_url=base_url)
    if wrong_model is not None:
        fail(wrong_model)
    wrong_timeout = check_timeout(agent, "scripted", timeout)
    if wrong_timeout is not None:
        fail(wrong_timeout)
    if executor not in ("local", "ray"):
        fail(f"--executor must be local or ray, got {executor!r}")
    config = load_loop_config(config_path)
    try:
        spec = suite_agent(agent, flaws=flaws, model=model, base_url=base_url, version=agent_version,
                           base_dir=config.base_dir, timeout=timeout)  # fmt: skip
        settings = SuiteRunSettings(
            version=version or SUITE_VERSION, domains=_names(domains, "--domains"),
            task_types=_names(task_type, "--task-type"), k=k, stop_early=stop_early, min_trials=min_trials,
            executor=executor, ray_address=ray_address, workers=workers, parallel=parallel, label=label,
        )  # fmt: skip
        load_suite(settings.version).select(domains=settings.domains, task_types=settings.task_types)
    except (SuiteError, DomainError, ValueError) as exc:
        fail(str(exc))
    store = open_loop_store(config, store_url)
    name = project or config.project
    store.ensure_project(name)
    runtime = store_runtime(store, name)
    try:
        with Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=console, disable=as_json,
        ) as progress:  # fmt: skip
            task = progress.add_task(f"suite {settings.version}: {spec.label}, k = {k}", total=1)
            outcome = asyncio.run(
                run_suite(
                    store, name, spec, settings, runtime=runtime, fresh=fresh,
                    progress=lambda done, total: progress.update(task, completed=done, total=total),
                )
            )  # fmt: skip
    except ModelServerUnusableError as exc:  # a dead model server: stopped early, the trials stored are kept
        fail(f"{exc} (the trials stored are kept: the same command resumes the run)", code=1)
    except (SuiteError, DomainError, ExecutorError) as exc:
        fail(str(exc))
    except ImportError as exc:  # --executor ray without Ray installed
        if executor != "ray":
            raise
        fail(str(exc))
    finally:
        runtime.shutdown()
        store.close()
    from passhat.collector.reliability import agent_trials, harness_failures

    run = outcome.run
    settled = len(agent_trials(outcome.trials))
    broken = [group.to_dict() for group in harness_failures(outcome.trials)]
    summary = {
        "run_id": run.run_id, "status": run.status, "suite_version": settings.version, "agent": spec.label,
        "simulated": spec.simulated, "label": label, "k": k, "trials": len(outcome.trials), "settled": settled,
        "ran": outcome.ran, "resumed": outcome.resumed, "reused": outcome.reused, "notes": outcome.notes,
        "harness_failures": broken,
    }  # fmt: skip
    if as_json:
        print_harness_failures(broken, as_json=True)
        emit_json(summary)
        fail_if_nothing_settled(f"suite run {run.run_id}", len(outcome.trials), settled, broken)
        return
    how = (
        " (resumed)"
        if outcome.resumed
        else " (a finished run with these settings, reused; --fresh re-runs)"
        if outcome.reused
        else ""
    )
    console.print(f"Suite run {run.run_id}{how}: {len(outcome.trials)} trials stored, {outcome.ran} run now.")
    for note in outcome.notes:
        console.print(f"Note: {note}")
    print_harness_failures(broken, as_json=False)
    fail_if_nothing_settled(f"suite run {run.run_id}", len(outcome.trials), settled, broken)
    if broken:
        lost = len(outcome.trials) - settled
        console.print(
            f"[bold yellow]Warning:[/] {lost} of {len(outcome.trials)} trials were lost to the harness (never the "
            f"agent's, in no figure; first cause: {escape(harness_cause(broken[0]))}): the table uses the other "
            f"{settled}.",
            highlight=False,
        )
    console.print(f"The table: passhat suite table {run.run_id} \\[other runs...]")


@suite_app.command("table")
def table_command(
    runs: Annotated[list[str], typer.Argument(help="Suite run ids (passhat runs list).")],
    html_file: Annotated[Path | None, typer.Option("--html", help="Also write the offline HTML page here.")] = None,
    config_path: ConfigPath = None,
    store_url: StoreOption = None,
    project: ProjectOption = None,
    as_json: JsonOption = False,
) -> None:
    """The seed's table: per domain and agent pass@1, pass@k, pass^k with intervals; ranks, agreement, swings."""
    from passhat.collector.suite import SuiteError, suite_table, write_html

    config = load_loop_config(config_path)
    name = project or config.project
    store = open_loop_store(
        config, store_url, reads=f"no replay run {runs[0] if runs else ''!r} in project {name!r}", project=name
    )
    try:
        table = suite_table(store, name, runs)
    except SuiteError as exc:
        fail(str(exc))
    finally:
        store.close()
    if html_file is not None:
        try:
            write_html(table, html_file)
        except OSError as exc:
            fail(f"cannot write {html_file}: {exc.strerror or exc}")
    if as_json:
        emit_json({**table.to_dict(), **({"html": str(html_file)} if html_file else {})})
        return
    print_table(table)
    if html_file is not None:
        console.print(f"HTML: {html_file}")


def _ci(values: list[float] | None) -> str:
    return "-" if values is None else f"[{100 * values[0]:.0f}, {100 * values[1]:.0f}]"


def print_table(table: SuiteTable) -> None:
    labels = {a["run_id"]: a["label"] for a in table.agents}
    k = table.k
    level = int(100 * table.level)
    # Each figure with its interval below it: in 80 columns the three figures, their intervals and the agent's
    # name fit (side by side, pass^k's interval was cut off at the edge).
    grid = Table(
        title=f"suite {table.version}: k = {k}, {level}% intervals over tasks",
        caption=f"below each figure: its {level}% interval",
        **COMPACT,
    )
    grid.add_column("domain", no_wrap=True)
    grid.add_column("rank", justify="right")
    grid.add_column("agent", min_width=10, overflow="fold")
    for column in ("tasks", "trials"):
        grid.add_column(column, justify="right")
    for column in ("pass@1", f"pass@{k}", f"pass^{k}"):
        grid.add_column(column, justify="right", no_wrap=True)
    for domain in [*table.domains, "overall"]:
        for rank, rid in enumerate(table.ranks[domain], start=1):
            cell: dict[str, Any] = table.cells[domain][rid]
            grid.add_row(
                domain if rank == 1 else "", str(rank), labels[rid], str(cell["tasks"]), str(cell["trials"]),
                *(f"{pct(cell[name])}\n{_ci(cell[name + '_ci'])}" for name in ("pass_at_1", "pass_at_k", "pass_hat_k")),
                end_section=rank == len(table.ranks[domain]),
            )  # fmt: skip
    console.print(grid)
    agreement = table.agreement
    if agreement.get("value") is None:
        console.print(f"Rank agreement across domains: not computed ({agreement.get('why')}).")
    else:
        low, high = agreement["interval"] or (float("nan"), float("nan"))
        console.print(
            f"Rank agreement across domains (Kendall's W on pass@1; 1 = the same order in every domain): "
            f"{agreement['value']:.2f} [{low:.2f}, {high:.2f}], over {agreement['tasks']} tasks in "
            f"{agreement['domains']} domains."
        )
    swings = Table(title="each agent's swing across domains (best domain's pass@1 minus worst's)", **COMPACT)
    for column in ("agent", "swing", "interval", "best", "worst"):
        swings.add_column(column)
    for rid, swing in table.swing.items():
        if swing["swing"] is None:
            swings.add_row(labels[rid], "-", f"not computed: {swing['why']}", "-", "-")
            continue
        swings.add_row(labels[rid], f"{100 * swing['swing']:.1f} pts", _ci(swing["interval"]), swing["highest"],
                       swing["lowest"])  # fmt: skip
    console.print(swings)
    if table.paired:
        paired = Table(title="paired differences on the same tasks (candidate minus baseline, points)", **COMPACT)
        for column in ("domain", "candidate - baseline", "tasks", "pass@1", f"pass^{k}"):
            paired.add_column(column)
        for item in table.paired:
            cells = [
                f"{100 * d['difference']:+.1f} {_ci(d['interval'])}" for d in (item["pass_at_1"], item["pass_hat_k"])
            ]
            paired.add_row(item["domain"], f"{labels[item['candidate']]} - {labels[item['baseline']]}",
                           str(item["tasks"]), *cells)  # fmt: skip
        console.print(paired)
    for note in table.notes:
        console.print(f"Note: {note}")
