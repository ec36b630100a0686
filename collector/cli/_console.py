"""Shared terminal output for CLI commands: Rich tables for people, JSON for machines, one-line errors."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any, NoReturn

import typer
from rich.console import Console

console = Console()
error_console = Console(stderr=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one clear error line and exit with ``code`` (2: the user's input was wrong)."""
    from rich.markup import escape

    # The message is text, not markup: "[agent]" or "passhat[ray]" in it are printed as written.
    error_console.print(f"[bold red]passhat: error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def emit_json(payload: object) -> None:
    """Write JSON to stdout (no Rich markup, so machines can parse it)."""
    sys.stdout.write(json.dumps(payload, indent=2, sort_keys=False) + "\n")


def pct(value: float | None) -> str:
    """A probability as a percentage with one decimal."""
    if value is None:
        return "-"
    if 0.0 < value < 0.001:
        return f"{100.0 * value:.2g}%"  # keep tiny pass^k visible instead of printing 0.0%
    return f"{100.0 * value:.1f}%"


def ci_text(ci: tuple[float, float] | list[float]) -> str:
    """A confidence interval as [low, high] percentages and its half-width in points."""
    return f"[{100.0 * ci[0]:.1f}, {100.0 * ci[1]:.1f}] ±{50.0 * (ci[1] - ci[0]):.0f}"


def ranked_counts(counts: Mapping[str, int]) -> list[str]:
    """Failure signatures with their counts ("unresolved 6"), the most frequent first, then by name."""
    return [f"{name} {count}" for name, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def counts_by_line(counts: Mapping[str, int]) -> str:
    """Failure signatures and their counts for a table cell: one a line, the most frequent first ("-" for none), so
    a narrow terminal folds a long name rather than cutting it."""
    return "\n".join(ranked_counts(counts)) or "-"


def print_design_notes(rows: list[dict[str, Any]], trials: int, k: int, min_trials: int | None) -> None:
    """Under a replay table: the trial design and trials saved, and the widest pass^k interval in tickets."""
    if min_trials is not None:
        full = k * sum(int(row["tickets"]) for row in rows)
        saved = 1.0 - trials / full if full else 0.0
        console.print(
            f"curtailed design: each ticket stopped once a pass and a fail settled its pass^{k} and pass@{k} "
            f"(at least {min_trials} attempts, pass@1 from those); {trials} trials instead of {full} "
            f"({100.0 * saved:.0f}% saved)."
        )
    if rows:
        widest = max(rows, key=lambda row: float(row["pass_hat_k_half_width"]))
        console.print(f"widest interval, {widest['task_type']}: {widest['sample_size']}.")


def print_harness_failures(groups: list[dict[str, Any]], *, as_json: bool) -> None:
    """Trials the harness broke, by cause with a fix (`HarnessFailure.to_dict` rows): in no figure above.

    Each cause goes to stderr as one line (so a `--json` run names it too); without `--json` a table of them
    joins the summary on stdout.
    """
    if not groups:
        return
    from rich.markup import escape

    total = sum(int(group["trials"]) for group in groups)
    for group in groups:
        error_console.print(
            f"[bold yellow]passhat:[/] {group['trials']} trial(s) ended in {group['signature']}: "
            + escape(f"{group['error_type']}: {group['message']} (fix: {group['fix']})"),
            highlight=False, soft_wrap=True,
        )  # fmt: skip
    if as_json:
        return
    from rich.table import Table

    table = Table(title=f"{total} trial(s) the harness broke after their retries: never the agent's, in no figure")
    for column in ("trials", "signature", "error", "fix"):
        table.add_column(column, overflow="fold")
    for group in groups:
        error = escape(f"{group['error_type']}: {group['message']}")
        table.add_row(str(group["trials"]), group["signature"], error, escape(group["fix"]))
    console.print(table, highlight=False)


def harness_cause(group: dict[str, Any]) -> str:
    """A `print_harness_failures` row's cause, `ErrorType: message`."""
    return f"{group['error_type']}: {group['message']}"


def fail_if_nothing_settled(
    run: str, trials: int, settled: int, groups: list[dict[str, Any]], *, stored: bool = True
) -> None:
    """Exit with status 1 when trials ran and every one was lost to the harness (`groups`): ``run`` (e.g.
    "run RUN_ID") measured nothing, and (``stored``) is not reused by the same command."""
    if trials and not settled and groups:
        fail(
            f"all {trials} trials of {run} were lost to the harness, none measured the agent (first cause: "
            f"{harness_cause(groups[0])}); fix it and run the same command again"
            + (" (a run that measured nothing is not reused)" if stored else ""),
            code=1,
        )
