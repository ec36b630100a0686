"""`passhat runs list|show|promote|compare`: the replay runs of each period, which one is official, and why."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from passhat.collector.cli._console import (
    ci_text,
    console,
    emit_json,
    error_console,
    fail,
    pct,
    print_harness_failures,
)
from passhat.collector.cli._options import ConfigPath, JsonOption, ProjectOption, StoreOption
from passhat.collector.cli._store import (
    chosen_store,
    load_loop_config,
    missing_sqlite_store,
    open_loop_store,
    unknown_project,
)
from passhat.collector.store import RunParams

runs_app = typer.Typer(
    no_args_is_help=True,
    help="Replay runs: list them, show one, promote one to its period's official run, compare two.",
)

RULE = (
    "The official run of a period is the finished run made official most recently: a run with the configured "
    "settings when it finishes, any run when promoted."
)


@runs_app.command("list")
def list_command(
    period: Annotated[str | None, typer.Option(help="Only the runs of this period (e.g. 2026-W48).")] = None,
    config_path: ConfigPath = None,
    store_url: StoreOption = None,
    project: ProjectOption = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many runs, newest first.")] = 50,
    as_json: JsonOption = False,
) -> None:
    """The replay runs, newest first, each with its role: official, exploratory, superseded, running or failed."""
    from passhat.collector.replay import list_runs

    if period is not None:
        period = _period_name(period)
    config = load_loop_config(config_path)
    name = project or config.project
    url, named_by = chosen_store(config, store_url)
    # A listing is no error: a store that is not there lists no runs and says so, and is not made.
    missing = missing_sqlite_store(url, named_by)
    rows: list[dict[str, Any]] = []
    others: list[str] = []
    if missing is None:
        store = open_loop_store(config, store_url)
        try:
            rows = [row.to_dict() for row in list_runs(store, name, period=period, limit=limit)]
            others = [] if rows else unknown_project(store, name)
        finally:
            store.close()
    note = missing or (
        f"the store has no project {name!r}, only {', '.join(repr(other) for other in others)}; check --project (or "
        "the config's project)"
        if others
        else None
    )
    if note is not None:
        error_console.print(f"passhat: no replay runs: {note}", highlight=False, soft_wrap=True)
    if as_json:
        emit_json({"project": name, "rule": RULE, "runs": rows})
        return
    if note is not None and not rows:  # said why there are none: an empty table under it says nothing more
        return
    # Light rules, one space between columns, and why a run is exploratory under the table: in 80 columns (a pipe,
    # a narrow terminal) the agent still has room to wrap by words.
    table = Table(title=f"replay runs of {name}", box=box.SIMPLE_HEAD, padding=(0, 0), show_edge=False)
    # The run id is what `runs show` and `runs promote` take: kept whole, the other columns fold around it.
    table.add_column("run", no_wrap=True, min_width=max((len(row["run_id"]) for row in rows), default=3))
    for column in ("period", "role", "k"):
        table.add_column(column, no_wrap=True)
    table.add_column("trials\nper\nticket", justify="right")
    table.add_column("tickets", justify="right", no_wrap=True)
    table.add_column("agent", overflow="fold")
    why: list[str] = []
    for row in rows:
        agent = f"{row['agent']} {row['agent_version']}".strip()
        if row["exploratory"]:
            why.append(f"{row['run_id']} is exploratory: {'; '.join(row['exploratory'])}")
        table.add_row(
            row["run_id"], row["period"] or "-", row["role"], str(row["k"]), str(row["trials_per_ticket"]),
            str(row["tickets"]), agent,
        )  # fmt: skip
    console.print(table)
    for line in why:
        console.print(f"  {line}", highlight=False, markup=False)
    console.print(RULE)


def _period_name(text: str) -> str:
    """`--period`'s value as runs name their period (`2026-W48`, a day, or `since-2026-11-20` for a run of
    `replay --since`), or a one-line error as `passhat grade` gives for a period that does not exist."""
    import datetime as dt

    from passhat.collector.store import parse_period

    value = text.strip()
    if value.startswith("since-"):
        try:
            return f"since-{dt.date.fromisoformat(value.removeprefix('since-')).isoformat()}"
        except ValueError:
            fail(f"--period {text!r} is not a calendar date after since-: write since-2026-11-20")
    try:
        return parse_period(value).name
    except ValueError as exc:
        fail(f"--period: {exc}")


def _show(run: Any, role: str) -> dict[str, Any]:
    params = dict(run.params)
    typed = RunParams.of(run)
    return {
        "run_id": run.run_id,
        "role": role,
        "status": run.status,
        "k": run.k,
        "created_at": run.created_at.isoformat(),
        "finished_at": None if run.finished_at is None else run.finished_at.isoformat(),
        "params": {key: value for key, value in params.items() if key not in ("tickets", "not_replayable")},
        "tickets": len(typed.tickets),
        "not_replayable": len(typed.not_replayable),
        "summary": run.summary,
        "error": run.error,
    }


@runs_app.command("show")
def show_command(
    run_id: Annotated[str, typer.Argument(help="The run id (from `passhat runs list`).")],
    config_path: ConfigPath = None,
    store_url: StoreOption = None,
    project: ProjectOption = None,
    as_json: JsonOption = False,
) -> None:
    """One run: its settings, its role in its period, its overall figures, and the trials the harness broke."""
    from passhat.collector.reliability import harness_failures
    from passhat.collector.replay import official_run, role_of
    from passhat.collector.store import RunParams

    config = load_loop_config(config_path)
    name = project or config.project
    store = open_loop_store(config, store_url, reads=f"no replay run {run_id!r} in project {name!r}", project=name)
    try:
        run = store.get_replay_run(name, run_id)
        if run is None:
            fail(f"no replay run {run_id!r} in project {name!r}: `passhat runs list` shows the runs")
        data = _show(run, role_of(run, official_run(store, name, str(RunParams.of(run).period))))
        trials = store.list_trials(name, run.run_id)
        data["harness_failures"] = [group.to_dict() for group in harness_failures(trials)]
        data["infra_retries"] = sum(len(trial.details.infra_retries) for trial in trials)
    finally:
        store.close()
    if as_json:
        print_harness_failures(data["harness_failures"], as_json=True)
        emit_json(data)
        return
    params = RunParams.of(run)
    suite = run.params.get("suite")
    if isinstance(suite, dict):
        console.print(f"run {run_id}: {_suite_text(suite)} ({data['status']}), never a period's figures")
    elif params.period:
        console.print(f"run {run_id}: {data['role']} run of {params.period} ({data['status']})")
    else:
        console.print(f"run {run_id}: {data['role']} run of no period ({data['status']})")
    units = "tasks" if isinstance(suite, dict) else "tickets"
    console.print(
        f"  k = {data['k']}, {params.trials} trials per {units[:-1]}, {data['tickets']} {units} "
        f"({data['not_replayable']} not replayable); agent {params.agent} {params.agent_version}"
    )
    if params.exploratory:
        console.print(f"  exploratory: {'; '.join(params.exploratory)}")
    if params.compare_to:
        console.print(f"  replayed the tickets of run {params.compare_to} (a paired comparison)")
    settled = len(trials) - sum(int(group["trials"]) for group in data["harness_failures"])
    _print_figures((data["summary"] or {}).get("figures") or {}, settled)
    if isinstance(suite, dict):
        console.print(f"  its figures per domain, with intervals: passhat suite table {run_id}")
    elif params.period and data["status"] == "finished":
        console.print(f"  its figures per task type: passhat report --period {params.period} --run {run_id}")
    if data["infra_retries"]:
        console.print(f"  {data['infra_retries']} run(s) of trials lost to the infrastructure were run again")
    print_harness_failures(data["harness_failures"], as_json=False)


def _suite_text(suite: dict[str, Any]) -> str:
    """What a suite run ran: the suite version and the selection."""
    identity = suite.get("identity") or {}
    domains = ", ".join(identity.get("domains") or []) or "every domain"
    types = ", ".join(identity.get("task_types") or []) or "every task type"
    return f"suite run of suite {identity.get('version')} ({domains}; {types})"


def _print_figures(figures: dict[str, Any], settled: int) -> None:
    """The run's overall figures (from its summary), each with its interval, and the tickets and trials behind
    them; nothing when the run has none (a suite run, a run that measured nothing)."""
    sides = [(name, figures.get(key)) for name, key in (("traffic-weighted", "overall"), ("unweighted", "unweighted"))]
    found = [(name, side) for name, side in sides if side]
    if not found:
        return
    k = figures.get("k")
    level = float(figures.get("confidence_level") or 0.95)  # the report's level: 95% unless it says otherwise
    tickets = found[0][1].get("tickets", "?")
    console.print(f"  figures over {tickets} tickets ({settled} trials), {100 * level:g}% intervals:")
    table = Table()
    table.add_column("")
    for name, _ in found:
        table.add_column(name, no_wrap=True)
    for label, key in (("pass@1", "pass_at_1"), (f"pass@{k}", "pass_at_k"), (f"pass^{k}", "pass_hat_k")):
        cells = [
            f"{pct(side.get(key))} {ci_text(side[f'{key}_ci']) if side.get(f'{key}_ci') else '(no interval)'}"
            for _, side in found
        ]
        table.add_row(label, *cells)
    console.print(table)


@runs_app.command("promote")
def promote_command(
    run_id: Annotated[str, typer.Argument(help="The finished run to make its period's official run.")],
    config_path: ConfigPath = None,
    store_url: StoreOption = None,
    project: ProjectOption = None,
    as_json: JsonOption = False,
) -> None:
    """Make a run its period's official run: its figures become the period's report, its alerts and the baseline
    of later periods. The alerts are evaluated on it at once (updating or withdrawing what was sent)."""
    from passhat.collector.loop import alert_setup, domains_of, promote
    from passhat.collector.store import RunParams, StoreError
    from passhat.sandbox import DomainError

    config = load_loop_config(config_path)
    name = project or config.project
    store = open_loop_store(config, store_url, reads=f"no replay run {run_id!r} in project {name!r}", project=name)
    try:
        try:
            run, alerts, paths = promote(
                store, name, run_id, alerts=alert_setup(config), domains=domains_of(config),
                report_dir=config.report_dir_for(name),
            )  # fmt: skip
        except (StoreError, DomainError) as exc:
            fail(str(exc))
    finally:
        store.close()
    period = RunParams.of(run).period
    sent = sorted(alerts.attempts) if alerts is not None else []
    if as_json:
        emit_json(
            {"run_id": run.run_id, "period": period, "role": "official", "alerts_sent": sent,
             "report": {kind: str(path) for kind, path in paths.items()}}
        )  # fmt: skip
        return
    console.print(f"run {run.run_id} is now the official run of {period}.")
    console.print(f"  alerts sent: {', '.join(sent) or 'none'}; report: {paths.get('html')}")


@runs_app.command("compare")
def compare_command(
    baseline: Annotated[str, typer.Argument(help="The baseline run id.")],
    candidate: Annotated[str, typer.Argument(help="The candidate run id.")],
    k: Annotated[
        int | None,
        typer.Option(
            "--k", min=1, help="pass^k's k, at most the trials per ticket of either run (default: the smaller k)."
        ),
    ] = None,
    level: Annotated[float, typer.Option(help="Level of the paired interval, between 0 and 1.")] = 0.95,
    config_path: ConfigPath = None,
    store_url: StoreOption = None,
    project: ProjectOption = None,
    as_json: JsonOption = False,
) -> None:
    """Per task type, candidate minus baseline in pass@1 and pass^k over the tickets both runs replayed."""
    from passhat.collector.cli._tables import print_comparison
    from passhat.collector.replay import compare_runs, trials_per_ticket
    from passhat.collector.store import StoreError

    if not 0.0 < level < 1.0:
        fail(f"--level must lie strictly between 0 and 1 (e.g. 0.95 for a 95% interval), got {level:g}")
    config = load_loop_config(config_path)
    name = project or config.project
    store = open_loop_store(config, store_url, reads=f"no replay run {baseline!r} in project {name!r}", project=name)
    try:
        try:
            comparison = compare_runs(store, name, baseline, candidate, k=k, level=level)
        except (StoreError, ValueError) as exc:
            fail(str(exc))
    finally:
        store.close()
    if k is not None and k > comparison.largest_k:
        # pass^k of a ticket with fewer than k trials is known only when one of them failed: the rest would be
        # left out, and what is left (the tickets a run failed) says pass^k = 0 however reliable the agent is.
        short = min((comparison.baseline, comparison.candidate), key=trials_per_ticket)
        fail(
            f"--k {k} is above the {trials_per_ticket(short)} trials per ticket of run {short.run_id}: pass^{k} "
            f"cannot be estimated without bias from fewer trials; the largest usable k is {comparison.largest_k} "
            f"(--k {comparison.largest_k}; pass^{k} needs runs with at least {k} trials per ticket)"
        )
    if as_json:
        emit_json(comparison.to_dict())
        return
    print_comparison(comparison)
    if comparison.unpaired_tickets:
        console.print(f"{comparison.unpaired_tickets} ticket(s) replayed by only one run were left out.")
