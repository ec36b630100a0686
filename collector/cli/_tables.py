"""The tables `passhat bench`, `passhat replay`, `passhat report` and `passhat runs` print for people."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from rich.table import Table

from passhat.collector.cli._console import ci_text, console, counts_by_line, pct, ranked_counts

if TYPE_CHECKING:
    from passhat.collector.reliability import GradedTrial
    from passhat.collector.replay import RunComparison
    from passhat.collector.report import UnreplayedReport


def trial_table_rows(
    trials: list[GradedTrial], k: int, *, min_trials: int | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any] | None]:
    """Per (domain, task type) rows, per domain figures and the overall one, by the same rule on every path.

    A trial the harness broke is in no figure (`reliability.summarize_trials`); tickets whose usable trials do
    not settle pass^k are counted as ``unsettled_tickets``; ``min_trials`` (curtailed design) takes pass@1 from
    each ticket's first attempts.
    """
    from passhat.collector.reliability import summarize_domains, summarize_trials

    found = summarize_trials(trials, k, min_trials=min_trials)
    if not found:
        return [], [], None
    domains, overall = summarize_domains(found)
    return [row.to_dict() for row in found], [d.to_dict() for d in domains], overall.to_dict()


def print_trial_table(title: str, rows: list[dict[str, Any]], k: int) -> None:
    """The per-task-type table: tickets, pass@1, pass@k, pass^k with its interval, failure signatures.

    Where the signatures have room for their longest line beside the figures, they are the table's last column;
    in a narrower terminal (80 columns, a pipe) they follow the table, a line per task type, so the names in the
    table are not folded mid-word ("cancel_pending_o" over "rder", "policy_violatio" over "n 3")."""
    several = len({row["domain"] for row in rows}) > 1
    widths = [
        widest("task type", (row["task_type"] for row in rows)),
        widest("n", (str(row["tickets"]) for row in rows)),
        len("100.0%"), widest("100.0%", [f"pass@{k}"]),
        widest(f"pass^{k}", (ci_text(row["pass_hat_k_ci"]) for row in rows)),
    ]  # fmt: skip
    if several:
        widths.append(widest("domain", (row["domain"] for row in rows)))
    beside = signatures_fit_beside(widths, [row["signatures"] for row in rows])
    # Names are folded, never cut to "tool_usage.…": each signature on a line of its own, the most frequent first,
    # and pass^k's interval below it.
    table = Table(title=title, caption=f"below each pass^{k}: its 95% interval")
    if several:
        table.add_column("domain", overflow="fold")
    table.add_column("task type", overflow="fold")
    for column in ("n", "pass@1", f"pass@{k}", f"pass^{k}"):
        table.add_column(column, justify="right")
    if beside:
        table.add_column("signatures", overflow="fold")
    for row in rows:
        cells = [
            row["task_type"], str(row["tickets"]), pct(row["pass_at_1"]), pct(row["pass_at_k"]),
            f"{pct(row['pass_hat_k'])}\n{ci_text(row['pass_hat_k_ci'])}",
        ]  # fmt: skip
        signatures = [counts_by_line(row["signatures"])] if beside else []
        table.add_row(*([row["domain"]] if several else []), *cells, *signatures)
    console.print(table)
    if not beside:
        names = [f"{row['domain']} {row['task_type']}" if several else row["task_type"] for row in rows]
        print_signatures_below(list(zip(names, [row["signatures"] for row in rows], strict=True)))


def signatures_fit_beside(widths: list[int], signatures: list[Mapping[str, int]]) -> bool:
    """Whether a table of columns ``widths`` wide (their widest cells) has room in the terminal for a last column
    of failure signatures, a line each, without folding them (a heavy box: a rule and a space either side of each
    column)."""
    lines = (f"{name} {count}" for counts in signatures for name, count in counts.items())
    columns = [*widths, widest("signatures", lines)]
    return console.width >= sum(columns) + 3 * len(columns) + 1


def widest(header: str, cells: Iterable[str]) -> int:
    """The width of a column whose header and cells are these, each on one line (none: the header's)."""
    return max([len(header), *(len(cell) for cell in cells)])


def print_signatures_below(entries: list[tuple[str, Mapping[str, int]]]) -> None:
    """Each task type's failure signatures after its table, the most frequent first, folded between them."""
    failing = [(name, counts) for name, counts in entries if counts]
    if not failing:
        return
    below = Table(title="failure signatures, most frequent first", box=None, show_header=False, padding=(0, 1))
    below.add_column("task type", overflow="fold")
    below.add_column("signatures", overflow="fold")
    # Lines are broken between signatures, never between a signature and its count ("unresolved" over "6").
    room = console.width - max(len(name) for name, _ in failing) - 4
    for name, counts in failing:
        below.add_row(name, _packed(ranked_counts(counts), room))
    console.print(below)


def _packed(items: list[str], room: int) -> str:
    """``items`` separated by commas, as many to a line as fit in ``room`` columns (one a line at least)."""
    lines: list[str] = []
    for number, item in enumerate(items):
        piece = item if number == len(items) - 1 else f"{item},"
        if lines and len(lines[-1]) + 1 + len(piece) <= room:
            lines[-1] = f"{lines[-1]} {piece}"
        else:
            lines.append(piece)
    return "\n".join(lines)


def print_domain_table(domains: list[dict[str, Any]], overall: dict[str, Any] | None, k: int) -> None:
    """Per domain and overall: pass@1, pass@k and pass^k with their 95% intervals and the counts behind them."""
    if overall is None:
        return
    table = Table(title="by domain: each task type's tickets pooled (95% intervals)")
    for column in ("domain", "task types", "tickets", "trials", "pass@1", f"pass@{k}", f"pass^{k}"):
        table.add_column(column, overflow="fold")
    for entry in [*domains, overall] if len(domains) > 1 else domains:
        figures = (
            f"{pct(entry[name])} {ci_text(entry[name + '_ci'])}" for name in ("pass_at_1", "pass_at_k", "pass_hat_k")
        )
        table.add_row(entry["domain"], str(entry["task_types"]), str(entry["tickets"]), str(entry["trials"]), *figures)
    console.print(table)


def print_comparison(comparison: RunComparison) -> None:
    """The per-task-type paired differences, candidate minus baseline."""
    k = comparison.k
    base, cand = comparison.baseline, comparison.candidate
    table = Table(
        title=f"{cand.run_id} vs {base.run_id} on the same tickets (candidate minus baseline, "
        f"{100 * comparison.level:g}% paired interval)"
    )
    for column in ("task type", "tickets", "pass@1", "change", f"pass^{k}", "change", "interval", "verdict"):
        table.add_column(column, overflow="fold")  # in 80 columns a name or a figure folds, never cut to "…"
    for row in comparison.task_types:
        at_1, hat = row.pass_at_1, row.pass_hat_k
        verdict = "worse" if hat.credibly_lower else ("better" if hat.credibly_higher else "no clear change")
        table.add_row(
            row.task_type, str(hat.tickets), f"{pct(at_1.baseline)} → {pct(at_1.candidate)}",
            signed_points(at_1.difference), f"{pct(hat.baseline)} → {pct(hat.candidate)}",
            signed_points(hat.difference), ci_points(hat.interval), verdict,
        )  # fmt: skip
    console.print(table)
    for note in comparison.notes:  # what was left out or lowered: the JSON's "notes"
        console.print(f"Note: {note}")


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
