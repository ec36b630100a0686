"""The sandbox fidelity section of the report, as HTML and as Markdown."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from passhat.collector.report._fidelity import FIDELITY_TEST, TaskTypeFidelity
from passhat.collector.report._format import ci, pct, points
from passhat.collector.report._model import Report

_DIFFERS = "the sandbox may not reflect production for this task type"


def _standing(row: TaskTypeFidelity) -> str:
    if row.agrees is None:
        return "no production verdicts" if row.production_ci is None else "not replayed this period"
    return "agrees" if row.agrees else f"differs: {_DIFFERS}"


def _production(row: TaskTypeFidelity) -> str:
    if row.production_rate is None:
        return "–"
    return f"{pct(row.production_rate)} {ci(row.production_ci)} ({row.production_passed}/{row.production_tickets})"


def _tickets(row: TaskTypeFidelity) -> str:
    return ", ".join(
        f"{d.ticket_id} (production {d.production}, replays {d.replays_passed}/{d.replays})" for d in row.differing
    )


def _intro(report: Report) -> str:
    return (
        "Each production ticket graded on its own changes (its task type's check on what it really wrote) beside "
        "the replays' pass@1: where the two disagree, the sandbox may not reflect production. "
        + FIDELITY_TEST.format(level=100 * report.confidence_level)
    )


def fidelity_html(report: Report) -> str:
    if not report.fidelity:
        return ""
    e = escape
    rows = "".join(
        f'<tr class="{"differs" if row.agrees is False else ""}"><td>{e(row.domain)}/{e(row.task_type)}</td>'
        f'<td class="num">{e(_production(row))}</td>'
        f'<td class="num">{pct(row.replay_pass_at_1)}<span class="ci">{ci(row.replay_ci)}</span>'
        f" ({row.replay_tickets} tickets)</td>"
        f'<td class="num">{points(row.difference)}</td><td>{e(_standing(row))}'
        + (f"<br><small>tickets that differ: {e(_tickets(row))}</small>" if row.differing else "")
        + "</td></tr>"
        for row in report.fidelity
    )
    return (
        '<section id="fidelity"><h2>Sandbox fidelity</h2>'
        f'<p class="note">{e(_intro(report))}</p>'
        '<table><thead><tr><th>task type</th><th class="num">production pass rate</th>'
        '<th class="num">replays\' pass@1</th><th class="num">difference</th><th>fidelity</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></section>"
    )


def fidelity_markdown(report: Report, quote: Callable[[object], str]) -> list[str]:
    """The section's lines; ``quote`` escapes text that came from tickets (the Markdown module's own)."""
    if not report.fidelity:
        return []
    out = ["## Sandbox fidelity", "", _intro(report), ""]
    out += ["| task type | production pass rate | replays' pass@1 | difference | fidelity |", "|---|---|---|---|---|"]
    for row in report.fidelity:
        standing = _standing(row)
        if row.differing:
            standing += "; tickets that differ: " + quote(_tickets(row))
        replay = f"{pct(row.replay_pass_at_1)} {ci(row.replay_ci)} ({row.replay_tickets} tickets)"
        cells = [f"{quote(row.domain)}/{quote(row.task_type)}", _production(row), replay, points(row.difference)]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in [*cells, standing]) + " |")
    return [*out, ""]
