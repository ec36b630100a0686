"""`passhat report`: a period's reliability report (HTML, JSON, Markdown) from its official replay run."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Annotated

import typer

from passhat.collector.cli._console import console, fail, pct
from passhat.collector.cli._options import ConfigPath, JsonOption, ProjectOption, StoreOption
from passhat.collector.cli._send import send_period_report, send_targets
from passhat.collector.cli._store import load_loop_config, open_loop_store
from passhat.collector.cli._tables import print_reasons, reason_counts_of
from passhat.collector.store import parse_period


def report(
    period: Annotated[str, typer.Option(help="The period: an ISO week like 2026-W48, or a day.")],
    out: Annotated[Path | None, typer.Option(help="Folder for report.html/.json/.md (default: the config's).")] = None,
    config_path: ConfigPath = None,
    store_url: StoreOption = None,
    project: ProjectOption = None,
    run_id: Annotated[
        str | None, typer.Option("--run", help="Report this run of the period (default: its official run).")
    ] = None,
    as_json: JsonOption = False,
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
    store = open_loop_store(
        config, store_url, reads=f"no replay run for {chosen.name} in project {name!r}", project=name
    )
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
            today = dt.datetime.now(dt.UTC).date()
            if chosen.start > today:
                starts = f"{chosen.name} has not started yet (it starts on {chosen.start})"
                fail(f"{starts}: a period is replayed and reported once it is over")
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
        folder = out or report_folder(config.report_dir_for(name), chosen, shown, official=role == "official")
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
