"""`passhat demo`: the whole loop, offline, with Rich progress bars and a summary at the end."""

from __future__ import annotations

import contextlib
import shlex
import shutil
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from passhat.collector.cli._console import console, fail
from passhat.collector.cli._demo_table import WeekRow, print_weeks

if TYPE_CHECKING:
    from passhat.collector.demo import DemoOutcome

OUT, TICKETS_PER_WEEK, K, TICKETS_PER_TASK_TYPE = Path("passhat-demo"), 2000, 20, 8  # the demo's defaults


def demo(
    out: Annotated[Path, typer.Option(help="Folder for the store, the weekly reports and summary.json.")] = OUT,
    tickets_per_week: Annotated[
        int, typer.Option(min=10, help="Production tickets per simulated week.")
    ] = TICKETS_PER_WEEK,
    k: Annotated[int, typer.Option("--k", min=1, help="Trials per sampled ticket.")] = K,
    tickets_per_task_type: Annotated[
        int, typer.Option(min=1, help="Tickets sampled per task type.")
    ] = TICKETS_PER_TASK_TYPE,
    keep: Annotated[
        bool,
        typer.Option(
            "--keep",
            help="Keep the collector running at the end, to browse its web UI (Ctrl-C stops). When OUT already "
            "holds a finished demo of the same size, serve it without running it again.",
        ),
    ] = False,
    fresh: Annotated[
        bool, typer.Option("--fresh", "--rerun", help="With --keep: run the demo again even when OUT holds one.")
    ] = False,
) -> None:
    """Run the whole loop offline: simulated production traffic, replay with k trials, reports, an alert."""
    from passhat.collector.demo import DemoSettings, DemoSteps, demo_size, finished_demo, run_demo_sync

    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"cannot create the output folder {out}: {exc.strerror}")
    settings = DemoSettings(tickets_per_week=tickets_per_week, k=k, tickets_per_task_type=tickets_per_task_type)
    finished = finished_demo(out) if keep and not fresh else None
    if finished is not None and finished.get("settings", demo_size(settings)) == demo_size(settings):
        _serve_finished(out, finished)
        return
    if finished is not None:
        console.print(f"{out} holds a demo of another size ({finished['settings']}): running a new one.")
    console.print(
        "[bold]passhat demo[/]: the whole loop, offline. The agent is a [bold yellow]simulation[/] "
        "(the ReferenceAgent), its per-ticket success drawn from the mixture fitted to the seed's figures "
        "(pass@1 65.4%, pass@20 91.1%, pass^20 25.3%)."
    )
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    ) as progress:

        class Steps(DemoSteps):
            def start(self, name: str, total: int) -> Callable[[int, int], None]:
                task = progress.add_task(name, total=total)

                def update(done: int, total: int) -> None:
                    progress.update(task, completed=done, total=total)

                return update

            def note(self, text: str) -> None:
                progress.console.print(text)

        kept: list[str] = []

        def browse(so_far: DemoOutcome, ui_url: str, key: str) -> None:
            progress.stop()
            _print_summary(so_far, k, out)
            console.print(f"[bold]Web UI:[/] {ui_url}  (project [bold]demo[/], key below; Ctrl-C stops the collector)")
            console.print(key, markup=False, highlight=False)
            kept.append(ui_url)
            _wait_for_a_stop_signal()
            console.print("collector stopped")

        outcome = run_demo_sync(out, settings, Steps(), keep=browse if keep else None)
    if kept:
        return
    _print_summary(outcome, k, out)
    again = " ".join(
        [f"{_command()} demo --keep"]
        + ([f"--out {shlex.quote(str(out))}"] if out != OUT else [])
        + [f"--{flag} {value}" for flag, value, default in (
            ("tickets-per-week", tickets_per_week, TICKETS_PER_WEEK), ("k", k, K),
            ("tickets-per-task-type", tickets_per_task_type, TICKETS_PER_TASK_TYPE),
        ) if value != default]
    )  # fmt: skip
    console.print(
        f"The collector has stopped; [bold]{escape(again)}[/] serves these results in its web UI "
        "(without running the demo again).",
        soft_wrap=True,
    )


def _command() -> str:
    """How this passhat was started (`.venv/bin/passhat` after `make demo`), to say what to type next."""
    path = Path(sys.argv[0])
    if path.name != "passhat" or path.parent == Path():
        return "passhat"
    on_path = shutil.which("passhat")
    if on_path is not None and Path(on_path).resolve() == path.resolve():
        return "passhat"
    with contextlib.suppress(ValueError):  # outside the current folder: the whole path
        path = path.resolve().relative_to(Path.cwd())
    return shlex.quote(str(path))


def _serve_finished(out: Path, summary: dict[str, Any]) -> None:
    """`--keep` on a finished demo: its summary, then its collector and web UI until Ctrl-C; nothing reruns."""
    from passhat.collector.demo import serve_finished_demo

    console.print(
        f"[bold]passhat demo --keep[/]: serving the finished demo in {out} (its figures come from a "
        f"[bold yellow]simulated[/] agent); [bold]--fresh[/] runs it again.",
        soft_wrap=True,
    )
    k = (summary.get("settings") or {}).get("k", "k")
    weeks = [
        WeekRow(
            str(week.get("period")),
            int(week.get("production_tickets", 0)),
            week.get("unweighted") or {},
            week.get("overall") or {},
            [str(alert) for alert in week.get("alerts", [])],
        )
        for week in summary["weeks"]
    ]
    print_weeks(weeks, k)
    console.print(f"Reports: {out / 'reports'}; summary: {out / 'summary.json'}")

    def browse(ui_url: str, key: str) -> None:
        console.print(f"[bold]Web UI:[/] {ui_url}  (project [bold]demo[/], key below; Ctrl-C stops the collector)")
        console.print(key, markup=False, highlight=False)
        _wait_for_a_stop_signal()
        console.print("collector stopped")

    try:
        serve_finished_demo(out, browse)
    except RuntimeError as exc:  # the collector did not start: its log says why
        fail(str(exc))


def _wait_for_a_stop_signal() -> None:
    """Block until Ctrl-C or SIGTERM. Both are set here: a process started in the background (a CI job, a
    service manager) can inherit SIGINT ignored, and would otherwise never stop but by SIGKILL."""

    def stop(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    previous = {number: signal.signal(number, stop) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _print_summary(outcome: DemoOutcome, k: int, out: Path) -> None:
    weeks = []
    for week in outcome.weeks:
        data = week.result.report.to_json()
        alerts = week.result.alerts.evaluation.notices if week.result.alerts else []
        weeks.append(
            WeekRow(
                week.period.name,
                week.production_tickets,
                data["unweighted"],
                data["overall"] or {},
                [f"{n.kind}: {n.title}" for n in alerts],
            )
        )
    print_weeks(weeks, k)
    for alert in outcome.alerts_received:
        console.print(f"webhook received: {alert.get('text', alert)}")
    last = outcome.weeks[-1].result.report_paths.get("html")
    console.print(f"Reports: {out / 'reports'} (latest: {last}); summary: {out / 'summary.json'}")
    console.print(f"Finished in {outcome.seconds:.0f} s.")
