"""The report of a period where no sampled ticket could be measured: why, per reason, with the fix for each.

A period whose tickets were all unreplayable (or whose trials all ended in simulator or infrastructure errors)
has no figures, but its report still says what happened, so the loop is never silent about it.
"""

from __future__ import annotations

import datetime as dt
import html
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passhat.collector.report._format import markdown_cell, markdown_text
from passhat.collector.report._write import ReportWriteError
from passhat.collector.store import NotReplayable


def reason_counts(not_replayable: list[NotReplayable]) -> list[tuple[str, str, int]]:
    """(reason, fix, tickets) for each distinct reason, the most frequent first."""
    counts = Counter((item.reason, item.fix) for item in not_replayable)
    return [(reason, fix, count) for (reason, fix), count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


@dataclass(frozen=True)
class UnreplayedReport:
    """A period with no measured tickets: what was sampled, and why none of it could be replayed."""

    period: str
    k: int
    agent: str
    why: str
    not_replayable: list[NotReplayable] = field(default_factory=list)
    generated_at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC).replace(microsecond=0))

    def to_json(self) -> dict[str, Any]:
        return {
            "period": self.period,
            "k": self.k,
            "agent": self.agent,
            "generated_at": self.generated_at.isoformat(),
            "measured": False,
            "why": self.why,
            "reasons": [
                {"reason": reason, "fix": fix, "tickets": count}
                for reason, fix, count in reason_counts(self.not_replayable)
            ],
            "not_replayable": [item.to_dict() for item in self.not_replayable],
        }

    def markdown(self) -> str:
        def cell(text: object) -> str:
            return markdown_cell(markdown_text(text))

        lines = [f"# passhat report {markdown_text(self.period)}: nothing measured", ""]
        lines += [markdown_text(self.why, line_start=True), ""]
        lines += ["| tickets | reason | fix |", "|---:|---|---|"]
        lines += [
            f"| {count} | {cell(reason)} | {cell(fix) if fix else '-'} |"
            for reason, fix, count in reason_counts(self.not_replayable)
        ]
        lines += ["", f"## Not replayable ({len(self.not_replayable)})", "", "| ticket | task type | reason |"]
        lines += ["|---|---|---|"] + [
            f"| {cell(n.ticket_id)} | {cell(n.task_type)} | {cell(n.reason)} |" for n in self.not_replayable
        ]
        return "\n".join(lines) + "\n"

    def html(self) -> str:
        e = html.escape
        reasons = "".join(
            f"<tr><td>{count}</td><td>{e(reason)}</td><td>{e(fix or '-')}</td></tr>"
            for reason, fix, count in reason_counts(self.not_replayable)
        )
        tickets = "".join(
            f"<tr><td>{e(n.ticket_id)}</td><td>{e(n.task_type)}</td><td>{e(n.reason)}</td></tr>"
            for n in self.not_replayable
        )
        return (
            f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>passhat {e(self.period)}</title>'
            "<style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:70rem}td,th{padding:.2rem .6rem;"
            "text-align:left;border-bottom:1px solid #ddd}table{border-collapse:collapse}</style></head><body>"
            f"<h1>passhat report {e(self.period)}: nothing measured</h1><p>{e(self.why)}</p>"
            f"<p>Agent: {e(self.agent)}, k = {self.k}. Generated {e(self.generated_at.isoformat())}.</p>"
            '<section id="reasons"><h2>Why</h2><table><thead><tr><th>tickets</th><th>reason</th><th>fix</th></tr>'
            f"</thead><tbody>{reasons}</tbody></table></section>"
            f'<section id="not-replayable"><h2>Not replayable ({len(self.not_replayable)})</h2>'
            "<table><thead><tr><th>ticket</th><th>task type</th><th>reason</th></tr></thead>"
            f"<tbody>{tickets}</tbody></table></section></body></html>\n"
        )


def write_unreplayed_report(report: UnreplayedReport, out_dir: str | Path) -> dict[str, Path]:
    """Write ``report.html``, ``report.json`` and ``report.md`` of a period with nothing measured."""
    folder = Path(out_dir)
    contents = {
        "html": report.html(),
        "json": json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n",
        "md": report.markdown(),
    }
    paths: dict[str, Path] = {}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for kind, text in contents.items():
            partial = folder / f".report.{kind}.partial"
            partial.write_text(text, encoding="utf-8")
            partial.replace(folder / f"report.{kind}")
            paths[kind] = folder / f"report.{kind}"
    except OSError as exc:
        raise ReportWriteError(f"cannot write the report into {folder}: {exc.strerror or exc}") from None
    return paths
