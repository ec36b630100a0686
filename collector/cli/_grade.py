"""`passhat grade`: production tickets graded on their own changes, on demand (the period's run does it too)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from passhat.collector.cli._console import ci_text, console, counts_by_line, emit_json, fail, pct
from passhat.collector.cli._options import ConfigPath, JsonOption, ProjectOption, StoreOption
from passhat.collector.cli._store import load_loop_config, open_loop_store
from passhat.collector.cli._store import period_from as _period_from
from passhat.collector.cli._tables import print_signatures_below, signatures_fit_beside, widest

if TYPE_CHECKING:
    from passhat.collector.replay import GradingOutcome


def _by_task_type(outcome: GradingOutcome) -> list[dict[str, Any]]:
    from passhat.collector.reliability import wilson_interval

    groups: dict[str, list[Any]] = {}
    for verdict in outcome.verdicts:
        groups.setdefault(verdict.task_type, []).append(verdict)
    rows = []
    for task_type in sorted(groups | {u.task_type: [] for u in outcome.ungradable}):
        graded = groups.get(task_type, [])
        passed = sum(v.passed for v in graded)
        failed: dict[str, int] = {}
        for verdict in graded:
            if not verdict.passed:
                failed[verdict.label] = failed.get(verdict.label, 0) + 1
        rows.append(
            {
                "task_type": task_type,
                "graded": len(graded),
                "passed": passed,
                "pass_rate": passed / len(graded) if graded else None,
                "pass_rate_ci": list(wilson_interval(passed, len(graded))) if graded else None,
                "signatures": dict(sorted(failed.items())),
                "ungradable": sum(u.task_type == task_type for u in outcome.ungradable),
            }
        )
    return rows


def grade(
    period: Annotated[str | None, typer.Option("--period", help="The period whose tickets to grade: 2026-W48.")] = None,
    since: Annotated[str | None, typer.Option("--since", help="Grade the tickets since this day (2026-11-20).")] = None,
    ticket: Annotated[
        list[str] | None, typer.Option("--ticket", help="Grade only this production ticket (repeatable).")
    ] = None,
    config_path: ConfigPath = None,
    store_url: StoreOption = None,
    project: ProjectOption = None,
    as_json: JsonOption = False,
) -> None:
    """Grade production tickets on their own changes: each ticket's task-type check on what it really wrote.

    A ticket is graded when its intent and its state writes (with before-images) were captured; its verdict and
    failure signature show in the web UI's ticket list and page, in `GET /api/tickets`, and beside the replays'
    pass@1 in the period's report (sandbox fidelity). Grading again replaces a ticket's verdict."""
    from passhat.collector.loop import replay_targets
    from passhat.collector.replay import TicketGrader, grade_tickets, production_tickets
    from passhat.collector.store import StoreError
    from passhat.sandbox import DomainError, load_domain

    config = load_loop_config(config_path)
    if ticket and (period or since):
        fail("give --ticket, or one of --period and --since, not both")
    if not ticket and (period is None) == (since is None):
        fail("give one of --period, --since or --ticket")
    chosen = None if ticket else _period_from(period, since)
    name = project or config.project
    try:
        targets = replay_targets(config)
    except DomainError as exc:
        fail(str(exc))
    nothing = (
        f"no production tickets of {chosen.name} in project {name!r}: nothing to grade"
        if chosen is not None
        else f"no production ticket {(ticket or [''])[0]!r} in project {name!r}"
    )
    store = open_loop_store(config, store_url, reads=nothing, project=name)
    grader = TicketGrader(targets.domains or {"retail": load_domain("retail")}, adapters=targets.adapters)
    try:
        if chosen is not None:
            tickets = production_tickets(store, name, chosen)
            if not tickets:
                fail(f"no production tickets of {chosen.name} in project {name!r}: nothing to grade")
        else:
            tickets = []
            for ticket_id in ticket or []:
                detail = store.get_ticket(name, ticket_id, source="production")
                if detail is None:
                    fail(f"no production ticket {ticket_id!r} in project {name!r}")
                tickets.extend(detail.attempts)
        outcome = grade_tickets(store, name, tickets, grader)
    except StoreError as exc:
        fail(str(exc))
    finally:
        grader.close()
        store.close()
    rows = _by_task_type(outcome)
    where = chosen.name if chosen is not None else ", ".join(ticket or [])
    if as_json:
        emit_json({"period": None if chosen is None else chosen.name, **outcome.to_dict(), "task_types": rows})
        return
    table = Table(title=f"{where}: {len(outcome.verdicts)} production tickets graded on their own changes")
    # In 80 columns task types are folded, never cut to "tool_usage.…", and the failures follow the table when
    # they have no room beside it (as `passhat bench` lays them out); each pass rate has its interval below it.
    intervals = [ci_text(row["pass_rate_ci"]) if row["pass_rate_ci"] else "-" for row in rows]
    widths = [
        widest("task type", (row["task_type"] for row in rows)),
        widest("graded", (str(row["graded"]) for row in rows)),
        widest("pass rate", intervals),
        len("ungradable"),
    ]  # fmt: skip
    beside = signatures_fit_beside(widths, [row["signatures"] for row in rows])
    table.add_column("task type", overflow="fold")
    table.add_column("graded", justify="right")
    table.add_column("pass rate", justify="right")
    if beside:
        table.add_column("failures", overflow="fold")
    table.add_column("ungradable", justify="right")
    for row, interval in zip(rows, intervals, strict=True):
        rate = f"{pct(row['pass_rate'])}\n{interval}"
        failures = [counts_by_line(row["signatures"])] if beside else []
        table.add_row(row["task_type"], str(row["graded"]), rate, *failures, str(row["ungradable"]))
    table.caption = "below each pass rate: its 95% interval"
    console.print(table)
    if not beside:
        print_signatures_below([(row["task_type"], row["signatures"]) for row in rows])
    reasons: dict[str, int] = {}
    for item in outcome.ungradable:
        reasons[item.reason] = reasons.get(item.reason, 0) + 1
    for reason, count in sorted(reasons.items(), key=lambda r: -r[1]):
        console.print(f"{count} ungradable: {reason}")
