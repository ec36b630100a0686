"""`passhat alerts test` (a test alert to every configured channel) and `passhat alerts history` (every notice and
report delivery recorded, with how each delivery went)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from passhat.collector.alerts import (
    NOTICE_KINDS,
    REPORT_KIND,
    AlertLog,
    AlertNotice,
    Channel,
    DeliveryAttempt,
    channels_from_config,
    deliver,
    retry_from_config,
    retry_line,
)
from passhat.collector.cli._console import console, emit_json, error_console, fail
from passhat.collector.cli._options import JsonOption, ProjectOption, StoreOption
from passhat.collector.store import Store, StoreError, open_store

alerts_app = typer.Typer(no_args_is_help=True, help="Alert channels: send test alerts.")


def test_notice(project: str, now: dt.datetime, ui_url: str | None = None) -> AlertNotice:
    """The notice `passhat alerts test` sends (linking to the alerts page of the web UI at ``ui_url``, if set)."""
    stamp = now.strftime("%Y%m%dT%H%M%S.%fZ")
    notice = AlertNotice(
        alert_id=f"test:{stamp}",
        kind="test",
        rule="alerts-test",
        task_type=None,
        period=now.date().isoformat(),
        severity="info",
        title="passhat test alert",
        text=f"This is a test alert from passhat (project {project}): this channel receives alerts. No action needed.",
        details={"sent_at": now.isoformat()},
    )
    return notice.addressed(project, ui_url)


def _open_log(url: str, project: str, ui_url: str | None) -> tuple[Store, AlertLog] | None:
    try:
        store = open_store(url)
        store.ensure_project(project)
    except (StoreError, OSError, ValueError) as exc:
        message = escape(f"not recording the test in the store: {exc}")
        error_console.print(f"[yellow]passhat: warning:[/] {message}", highlight=False)
        return None
    return store, AlertLog(store, project, ui_url=ui_url)


@alerts_app.command("test")
def test(
    config: Annotated[
        str | None, typer.Option(help="The config file (default: $PASSHAT_CONFIG or ./passhat.toml).")
    ] = None,
    channel: Annotated[list[str] | None, typer.Option(help="Only this channel (repeatable).")] = None,
    record: Annotated[bool, typer.Option(help="Record the test alert and its attempts in the store.")] = True,
    as_json: JsonOption = False,
) -> None:
    """Send a test alert to each configured channel (retried like real alerts) and print each outcome."""
    from passhat.collector.cli._config import default_config_path, load_or_exit

    settings = load_or_exit(config or default_config_path())
    channels: list[Channel] = channels_from_config(settings.alerts, base_dir=settings.base_dir)
    if not channels:
        fail("no alert channels are configured: add an [alerts.channels.<name>] table to the config")
    if channel:
        unknown = sorted(set(channel) - {c.name for c in channels})
        if unknown:
            fail(f"unknown channel(s) {', '.join(unknown)}; configured: {', '.join(c.name for c in channels)}")
        channels = [c for c in channels if c.name in channel]
    policy = retry_from_config(settings.alerts)
    notice = test_notice(settings.project, dt.datetime.now(dt.UTC), settings.report.ui_url)

    def show(attempt: DeliveryAttempt) -> None:
        line = retry_line(attempt, policy)  # a channel's last failure is in the table, said once
        if not as_json and line is not None:
            console.print(escape(f"  {line}"), highlight=False, soft_wrap=True)

    opened = _open_log(settings.store_url(), settings.project, settings.report.ui_url) if record else None
    try:
        if opened is not None:
            attempts = opened[1].send(notice, channels, policy, on_attempt=show)
        else:
            attempts = deliver(notice, channels, policy, on_attempt=show)
    finally:
        if opened is not None:
            opened[0].close()

    final = {c.name: [a for a in attempts if a.channel == c.name] for c in channels}
    failed = [name for name, tries in final.items() if not tries or not tries[-1].ok]
    if as_json:
        emit_json(
            {"alert_id": notice.alert_id, "recorded": opened is not None, "attempts": [a.to_dict() for a in attempts]}
        )
    else:
        table = Table(title=f"test alert {notice.alert_id}")
        for column in ("channel", "type", "outcome", "attempts", "last error"):
            table.add_column(column)
        for c in channels:
            tries = final[c.name]
            ok = bool(tries) and tries[-1].ok
            error = "" if ok or not tries else (tries[-1].error or "")
            outcome = "[green]delivered[/]" if ok else "[red]failed[/]"
            table.add_row(c.name, c.type, outcome, str(len(tries)), escape(error))
        console.print(table)
    if failed:
        raise typer.Exit(1)


@alerts_app.command("history")
def history(
    config: Annotated[
        str | None, typer.Option(help="The config file (default: $PASSHAT_CONFIG or ./passhat.toml).")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, help="How many notices to show, newest first.")] = 20,
    kind: Annotated[
        list[str] | None,
        typer.Option(help="Only this kind: fired, resolved, test or report (repeatable; default: all)."),
    ] = None,
    store_url: StoreOption = None,
    project: ProjectOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show the alerts recorded in the store (fired, resolved, test), the reports sent (report), and how each
    delivery went."""
    from pathlib import Path

    from passhat.collector.cli._store import chosen_store, load_loop_config, missing_sqlite_store

    # Reading the history needs no channels: without a config file (none named, no ./passhat.toml), --store and
    # --project say where, as for `passhat runs list` (it required passhat.toml even with both given).
    settings = load_loop_config(Path(config) if config else None)
    name = project or settings.project
    known = (*NOTICE_KINDS, REPORT_KIND)
    unknown = sorted(set(kind or ()) - set(known))
    if unknown:
        fail(f"unknown kind(s) {', '.join(unknown)}; choose from {', '.join(known)}")
    url, named_by = chosen_store(settings, store_url)
    missing = missing_sqlite_store(url, named_by)
    if missing is not None:  # a listing only reads: a store that is not there is said, never made
        error_console.print(f"passhat: no alerts: {escape(missing)}", highlight=False, soft_wrap=True)
        events = []
    else:
        try:
            store = open_store(url)
        except (StoreError, OSError, ValueError) as exc:
            fail(f"cannot open the store {url}: {exc}")
        try:
            events = AlertLog(store, name).notices(kinds=tuple(kind or known), limit=limit)
        finally:
            store.close()
    if as_json:
        emit_json(
            [
                {
                    "alert_id": e.alert_id,
                    "kind": e.payload.get("kind"),
                    "rule": e.rule,
                    "task_type": e.task_type,
                    "period": e.payload.get("period"),
                    "severity": e.severity,
                    "recorded_at": e.fired_at.isoformat(),
                    "message": e.message,
                    "deliveries": e.deliveries,
                    **(
                        {key: e.payload.get(key) for key in ("run_id", "trigger", "resend", "skipped")}
                        if e.payload.get("kind") == REPORT_KIND
                        else {}
                    ),
                }
                for e in events
            ]
        )
        return
    if not events:
        console.print(f"No alerts recorded for project {escape(name)}.", highlight=False)
        return
    table = Table(title=f"alerts of project {escape(name)}, newest first")
    # In 80 columns rules, task types and channels are folded, never cut to "pass_hat_k_…"; a channel a line.
    table.add_column("recorded (UTC)")
    table.add_column("kind")
    for column in ("rule", "scope"):
        table.add_column(column, overflow="fold")
    table.add_column("period", no_wrap=True)
    table.add_column("deliveries", overflow="fold")
    for e in events:
        deliveries = "\n".join(f"{channel}: {outcome}" for channel, outcome in sorted(e.deliveries.items()))
        table.add_row(
            e.fired_at.strftime("%Y-%m-%d %H:%M"),
            str(e.payload.get("kind", "")),
            e.rule,
            "report" if e.payload.get("kind") == REPORT_KIND else (e.task_type or "overall"),
            str(e.payload.get("period", "")),
            escape(deliveries or "no channel"),
        )
    console.print(table)
