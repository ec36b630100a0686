"""A period's report as a message: the email (HTML and plain text, report.html attached), the Slack summary and the
generic webhook's JSON. Pure rendering: the loop decides when to send and the alert channels carry it.

Every figure keeps its interval and sample size; every piece of user text (task types, agent names, alert
messages) is escaped for where it goes: HTML in the email, Slack's mrkdwn (``&``, ``<``, ``>``) in Slack.
The email body is one table of inline styles: no script, no stylesheet, no image fetched from anywhere, so
it reads the same in webmail and desktop clients (bars are table cells, not pictures).
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

from passhat.collector.report._format import agent_text, ci, pct, points, volume, volume_interval
from passhat.collector.report._html import render_html
from passhat.collector.report._model import Figures, Report, TaskTypeReport
from passhat.collector.report._unreplayed import UnreplayedReport, reason_counts

#: Slack limits a header block's text to 150 characters and a section's to 3000.
_SLACK_HEADER_MAX = 150
_SLACK_SECTION_MAX = 3000
#: The generic webhook sends the whole report.json up to this size, else its summary and a link.
DEFAULT_WEBHOOK_MAX_BYTES = 256 * 1024


@dataclass(frozen=True)
class OpenAlertLine:
    """An alert still open when the report is sent: its rule, scope, the period it fired in, its message."""

    rule: str
    scope: str
    since: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "scope": self.scope, "since": self.since, "message": self.message}


@dataclass(frozen=True)
class ReportDigest:
    """What a report message says beyond the report itself: the project, open alerts, a link to the web UI."""

    report: Report | UnreplayedReport
    project: str = ""
    open_alerts: Sequence[OpenAlertLine] = ()
    link: str | None = None  # the run's page in the web UI, when one is configured

    @property
    def period(self) -> str:
        return self.report.period


def attachment_name(period: str) -> str:
    """The file name of the attached report.html."""
    return f"passhat-report-{period}.html"


def least_reliable(report: Report, count: int) -> list[TaskTypeReport]:
    """The ``count`` task types with the lowest pass^k (then pass@1, then the busier one)."""
    return sorted(
        report.task_types,
        key=lambda t: (t.figures.pass_hat_k or 0.0, t.figures.pass_at_1 or 0.0, -t.daily_volume, t.name),
    )[:count]


def _headline(report: Report) -> tuple[Figures, str]:
    """The figures to lead with, and what they are: traffic-weighted when there is traffic, else per ticket."""
    if report.overall.weighted.pass_hat_k is not None:
        return report.overall.weighted, "traffic-weighted"
    return report.overall.unweighted, "mean over sampled tickets (no traffic recorded)"


def headline_lines(report: Report) -> list[str]:
    """The headline as lines of text: pass^k, pass@1, pass@k with intervals, tickets, failed tickets a day."""
    figures, how = _headline(report)
    k = report.k
    lines = [
        f"pass^{k} {pct(figures.pass_hat_k)} {ci(figures.pass_hat_k_ci)}",
        f"pass@1 {pct(figures.pass_at_1)} {ci(figures.pass_at_1_ci)}",
        f"pass@{k} {pct(figures.pass_at_k)} {ci(figures.pass_at_k_ci)}",
    ]
    sample = f"{report.overall.tickets_sampled} tickets sampled over {len(report.task_types)} task types, {how}"
    failed = report.overall.expected_failed_tickets_per_day
    if failed is not None:
        lines.append(
            f"expected failed tickets per day {volume(failed)} "
            f"{volume_interval(report.overall.expected_failed_tickets_per_day_ci)}"
        )
    return [*lines, sample]


def change_lines(report: Report) -> list[str]:
    """What changed since the period before (from the report's trend), as short lines."""
    if len(report.trend) < 2:
        return ["No earlier period to compare with."]
    before, now = report.trend[-2], report.trend[-1]
    lines = [
        f"pass@1 {pct(now.pass_at_1)}, {points(now.pass_at_1_change)} since {before.period} ({pct(before.pass_at_1)})"
    ]
    if now.pass_hat_k_change is not None:
        lines.append(
            f"pass^{now.k} {pct(now.pass_hat_k)}, {points(now.pass_hat_k_change)} since {before.period} "
            f"({pct(before.pass_hat_k)})"
        )
    else:
        lines.append(f"pass^{now.k} not compared: {before.period} measured pass^{before.k}")
    if now.expected_failed_tickets_per_day is not None and before.expected_failed_tickets_per_day is not None:
        lines.append(
            f"expected failed tickets per day {volume(now.expected_failed_tickets_per_day)} "
            f"(was {volume(before.expected_failed_tickets_per_day)})"
        )
    then, current = agent_text(before.agent, before.agent_version), agent_text(now.agent, now.agent_version)
    if before.agent and now.agent and then != current:
        lines.append(f"agent changed: {then} -> {current}")
    if report.alerts:
        lines.append(f"{len(report.alerts)} alert notice(s) in {report.period}")
    return lines


def _simulated_text(report: Report | UnreplayedReport) -> str:
    if isinstance(report, UnreplayedReport) or not report.simulated:
        return ""
    agent = f" ({report.agent})" if report.agent else ""
    return (
        f"Simulated agent: these figures come from a simulated agent{agent}, not from your production agent. "
        "They show how the report reads, not how your agent performs."
    )


def email_subject(digest: ReportDigest) -> str:
    """The subject: project, period and the headline pass^k with its interval (or that nothing was measured)."""
    report = digest.report
    project = f" {digest.project}" if digest.project else ""
    if isinstance(report, UnreplayedReport):
        return f"[passhat]{project} report {report.period}: nothing measured"
    figures, _ = _headline(report)
    simulated = " (simulated agent)" if report.simulated else ""
    return (
        f"[passhat]{project} report {report.period}: pass^{report.k} {pct(figures.pass_hat_k)} "
        f"{ci(figures.pass_hat_k_ci)}, {report.overall.tickets_sampled} tickets{simulated}"
    )


def email_text(digest: ReportDigest) -> str:
    """The plain-text part of the email."""
    report = digest.report
    out = [email_subject(digest).removeprefix("[passhat] ").removeprefix("[passhat]"), ""]
    if isinstance(report, UnreplayedReport):
        out += [report.why, "", "Why:"]
        out += [f"- {count} ticket(s): {reason}. Fix: {fix or '-'}" for reason, fix, count in reason_counts(
            report.not_replayable
        )]  # fmt: skip
    else:
        banner = _simulated_text(report)
        if banner:
            out += [f"*** {banner} ***", ""]
        out += [
            f"{report.first_day.isoformat()} to {report.last_day.isoformat()}, "
            f"agent {agent_text(report.agent, report.agent_version)}, "
            f"k = {report.k}, {round(100 * report.confidence_level)}% intervals [low, high] ±half-width in points.",
            "",
            "Headline",
            *(f"  {line}" for line in headline_lines(report)),
            "",
            "Least reliable task types",
        ]
        for t in least_reliable(report, 5):
            out.append(
                f"  {t.name}: pass^{report.k} {pct(t.figures.pass_hat_k)} {ci(t.figures.pass_hat_k_ci)}, "
                f"pass@1 {pct(t.figures.pass_at_1)} {ci(t.figures.pass_at_1_ci)}, {t.tickets_sampled} tickets"
            )
        out += ["", "What changed", *(f"  {line}" for line in change_lines(report))]
    out += ["", "Open alerts"]
    out += [f"  {a.rule} ({a.scope}, since {a.since}): {a.message}" for a in digest.open_alerts] or ["  none"]
    out.append("")
    if digest.link:
        out += [f"In the web UI: {digest.link}", ""]
    out.append(f"The full report is attached ({attachment_name(report.period)}): open it in a browser for the")
    out.append("curves, the failure signatures and the attempts side by side.")
    return "\n".join(out) + "\n"


# --- the HTML body: inline styles only ----------------------------------------------------------------------
_FONT = "font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif"
_MUTED = "color:#5f6b7a"
_CELL = "padding:6px 8px;border-bottom:1px solid #e3e7ec;font-size:14px;vertical-align:top"
_WRAP = "word-break:break-word;overflow-wrap:anywhere"  # a long name without spaces wraps, never widens the mail


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _section(title: str, body: str) -> str:
    return (
        f'<tr><td style="padding:18px 24px 4px 24px;{_FONT}"><h2 style="margin:0 0 8px 0;font-size:17px;'
        f'color:#1d2733">{_e(title)}</h2>{body}</td></tr>'
    )


def _bar(value: float | None, interval: tuple[float, float] | None) -> str:
    """A bar for a probability, its interval's upper part lighter (table cells: every mail client draws them)."""
    share = max(1, min(100, round(100 * (value or 0.0))))
    upper = share if interval is None else max(share, min(100, round(100 * interval[1])))
    colour, light = (
        ("#c0392b", "#f2b8b0")
        if (value or 0.0) < 0.5
        else (("#d68910", "#f6d7a7") if (value or 0.0) < 0.8 else ("#1e8449", "#b4e0c3"))
    )
    cell = "height:8px;font-size:0;line-height:0"
    cells = f'<td width="{share}%" style="background:{colour};{cell}">&nbsp;</td>'
    if upper > share:
        cells += f'<td width="{upper - share}%" style="background:{light};{cell}">&nbsp;</td>'
    if upper < 100:
        cells += f'<td style="background:#e9edf1;{cell}">&nbsp;</td>'
    return (
        '<table role="presentation" width="120" cellpadding="0" cellspacing="0" style="border-collapse:collapse">'
        f"<tr>{cells}</tr></table>"
    )


def _card(label: str, value: str, detail: str) -> str:
    return (
        f'<td style="padding:10px 12px;background:#f4f6f8;border-radius:6px;{_FONT};width:33%;vertical-align:top">'
        f'<div style="font-size:12px;{_MUTED}">{_e(label)}</div>'
        f'<div style="font-size:24px;font-weight:bold;color:#1d2733">{_e(value)}</div>'
        f'<div style="font-size:12px;{_MUTED}">{_e(detail)}</div></td>'
    )


def _headline_html(report: Report) -> str:
    figures, how = _headline(report)
    k = report.k
    tickets = f"{report.overall.tickets_sampled} tickets"
    cards = (
        _card(
            f"pass^{k} (all {k} attempts succeed)", pct(figures.pass_hat_k), f"{ci(figures.pass_hat_k_ci)} · {tickets}"
        )
        + '<td style="width:8px"></td>'
        + _card("pass@1 (one attempt)", pct(figures.pass_at_1), f"{ci(figures.pass_at_1_ci)} · {tickets}")
        + '<td style="width:8px"></td>'
        + _card(f"pass@{k} (any of {k})", pct(figures.pass_at_k), f"{ci(figures.pass_at_k_ci)} · {tickets}")
    )
    failed = report.overall.expected_failed_tickets_per_day
    extra = (
        f"Expected failed tickets per day: <strong>{_e(volume(failed))}</strong> "
        f"{_e(volume_interval(report.overall.expected_failed_tickets_per_day_ci))}. "
        if failed is not None
        else ""
    )
    return (
        '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="border-collapse:separate">'
        f"<tr>{cards}</tr></table>"
        f'<p style="margin:8px 0 0 0;font-size:13px;{_MUTED}">{extra}{_e(report.overall.tickets_sampled)} tickets '
        f"sampled over {len(report.task_types)} task types, {_e(how)}; {round(100 * report.confidence_level)}% "
        "intervals [low, high] ±half-width in points.</p>"
    )


def _least_reliable_html(report: Report) -> str:
    k = report.k
    head = "".join(
        f'<th align="left" style="{_CELL};font-size:12px;{_MUTED};font-weight:normal">{_e(c)}</th>'
        for c in ("task type", f"pass^{k}", "", "pass@1", "tickets")
    )
    rows = "".join(
        f'<tr><td style="{_CELL};word-break:break-all">{_e(t.name)}</td>'
        f'<td style="{_CELL};white-space:nowrap"><strong>{_e(pct(t.figures.pass_hat_k))}</strong><br>'
        f'<span style="font-size:12px;{_MUTED}">{_e(ci(t.figures.pass_hat_k_ci))}</span></td>'
        f'<td style="{_CELL};padding-top:12px">{_bar(t.figures.pass_hat_k, t.figures.pass_hat_k_ci)}</td>'
        f'<td style="{_CELL};white-space:nowrap">{_e(pct(t.figures.pass_at_1))}<br>'
        f'<span style="font-size:12px;{_MUTED}">{_e(ci(t.figures.pass_at_1_ci))}</span></td>'
        f'<td style="{_CELL}">{t.tickets_sampled}</td></tr>'
        for t in least_reliable(report, 5)
    )
    return (
        '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="border-collapse:collapse">'
        f"<tr>{head}</tr>{rows}</table>"
    )


def _list_html(lines: Sequence[str]) -> str:
    items = "".join(f'<li style="margin:2px 0">{_e(line)}</li>' for line in lines)
    return f'<ul style="margin:0;padding-left:20px;font-size:14px;color:#1d2733;{_WRAP}">{items}</ul>'


def _alerts_html(alerts: Sequence[OpenAlertLine]) -> str:
    if not alerts:
        return f'<p style="margin:0;font-size:14px;{_MUTED}">No open alerts.</p>'
    items = "".join(
        f'<li style="margin:4px 0"><strong>{_e(a.rule)}</strong> · {_e(a.scope)} · since {_e(a.since)}<br>'
        f'<span style="{_MUTED}">{_e(a.message)}</span></li>'
        for a in alerts
    )
    return f'<ul style="margin:0;padding-left:20px;font-size:14px;color:#1d2733;{_WRAP}">{items}</ul>'


def email_html(digest: ReportDigest) -> str:
    """The HTML part of the email: a 640-pixel table with inline styles, no script, no remote resource."""
    report = digest.report
    project = f"{digest.project} · " if digest.project else ""
    parts: list[str] = []
    if isinstance(report, UnreplayedReport):
        title = f"Reliability report {report.period}: nothing measured"
        subtitle = f"{project}agent {report.agent or '–'}, k = {report.k}"
        reasons = [f"{count} ticket(s): {reason}. Fix: {fix or '-'}" for reason, fix, count in reason_counts(
            report.not_replayable
        )]  # fmt: skip
        parts.append(
            _section("Why", f'<p style="margin:0 0 6px 0;font-size:14px">{_e(report.why)}</p>{_list_html(reasons)}')
        )
    else:
        title = f"Reliability report {report.period}"
        subtitle = (
            f"{project}{report.first_day.isoformat()} to {report.last_day.isoformat()} · agent "
            f"{agent_text(report.agent, report.agent_version)} · k = {report.k}"
        )
        parts.append(_section("Headline", _headline_html(report)))
        parts.append(_section("Least reliable task types", _least_reliable_html(report)))
        parts.append(_section("What changed since last period", _list_html(change_lines(report))))
    parts.append(_section("Open alerts", _alerts_html(digest.open_alerts)))
    banner = _simulated_text(report)
    banner_html = (
        f'<tr><td style="padding:12px 24px 0 24px;{_FONT}"><div style="background:#fff4ce;border:1px solid #e0b000;'
        f'border-radius:6px;padding:10px 12px;font-size:14px;color:#5c4400;{_WRAP}"><strong>Simulated agent.</strong> '
        f"{_e('These' + banner.removeprefix('Simulated agent: these'))}</div></td></tr>"
        if banner
        else ""
    )
    button = (
        f'<a href="{_e(digest.link)}" style="display:inline-block;background:#1f5fbf;color:#ffffff;'
        'text-decoration:none;padding:10px 16px;border-radius:6px;font-size:14px;font-weight:bold">'
        "Open in the passhat web UI</a>"
        if digest.link
        else ""
    )
    footer = (
        f'<tr><td style="padding:18px 24px 24px 24px;{_FONT}">{button}<p style="margin:12px 0 0 0;font-size:13px;'
        f'{_MUTED}">The full report is attached ({_e(attachment_name(report.period))}): open it in a browser for '
        "the pass@k and pass^k curves, the failure signatures and the attempts side by side.</p></td></tr>"
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{_e(title)}</title></head>"
        f'<body style="margin:0;padding:0;background:#e9edf1">'
        '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#e9edf1">'
        '<tr><td align="center" style="padding:16px 8px">'
        '<table role="presentation" width="640" cellpadding="0" cellspacing="0" '
        'style="max-width:640px;width:100%;background:#ffffff;border-radius:8px;border-collapse:separate">'
        f'<tr><td style="padding:20px 24px 0 24px;{_FONT}"><div style="font-size:12px;{_MUTED}">passhat</div>'
        f'<h1 style="margin:2px 0 4px 0;font-size:22px;color:#1d2733">{_e(title)}</h1>'
        f'<div style="font-size:13px;{_MUTED};{_WRAP}">{_e(subtitle)}</div></td></tr>'
        f"{banner_html}{''.join(parts)}{footer}"
        "</table></td></tr></table></body></html>\n"
    )


def report_html(report: Report | UnreplayedReport) -> str:
    """The self-contained report.html of either kind of report (what the email attaches)."""
    return report.html() if isinstance(report, UnreplayedReport) else render_html(report)


def report_email(digest: ReportDigest, sender: str, recipients: Sequence[str]) -> EmailMessage:
    """The email: plain text and HTML alternatives, and the self-contained report.html attached."""
    message = EmailMessage()
    message["Subject"] = email_subject(digest)
    message["From"] = sender
    message["To"] = ", ".join(recipients)
    message.set_content(email_text(digest))
    message.add_alternative(email_html(digest), subtype="html")
    message.add_attachment(
        report_html(digest.report).encode("utf-8"),
        maintype="text",
        subtype="html",
        filename=attachment_name(digest.period),
    )
    return message


# --- Slack --------------------------------------------------------------------------------------------------
def mrkdwn_escape(text: object) -> str:
    """User text made safe for Slack's mrkdwn: ``&``, ``<`` and ``>`` as entities (no mention, no link)."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _slack_link(url: str) -> str:
    safe = "".join(ch for ch in url if ch not in "<>| ")
    return f"<{safe}|Open in the passhat web UI>"


def slack_report(digest: ReportDigest) -> dict[str, Any]:
    """A compact Slack body: headline, the three least reliable task types, open alerts, link."""
    report = digest.report
    e = mrkdwn_escape
    sections: list[str] = []
    if isinstance(report, UnreplayedReport):
        header = f"passhat report {report.period}: nothing measured"
        sections.append(e(report.why))
        fallback = f"passhat report {report.period}: nothing measured"
    else:
        figures, how = _headline(report)
        k = report.k
        header = f"passhat report {report.period}: pass^{k} {pct(figures.pass_hat_k)}"
        headline = (
            f"*pass^{k}* {pct(figures.pass_hat_k)} {ci(figures.pass_hat_k_ci)} · *pass@1* {pct(figures.pass_at_1)} "
            f"{ci(figures.pass_at_1_ci)} · {report.overall.tickets_sampled} tickets ({how})"
        )
        failed = report.overall.expected_failed_tickets_per_day
        if failed is not None:
            failed_ci = volume_interval(report.overall.expected_failed_tickets_per_day_ci)
            headline += f"\nexpected failed tickets per day {volume(failed)} {failed_ci}"
        sections.append(e(headline))
        worst = [
            f"• {e(t.name)}: pass^{k} {pct(t.figures.pass_hat_k)} {ci(t.figures.pass_hat_k_ci)}, "
            f"{t.tickets_sampled} tickets"
            for t in least_reliable(report, 3)
        ]
        sections.append("*Least reliable task types*\n" + "\n".join(worst))
        fallback = e(f"passhat report {report.period}: pass^{k} {pct(figures.pass_hat_k)} {ci(figures.pass_hat_k_ci)}")
    alerts = [f"• {e(a.rule)} ({e(a.scope)}, since {e(a.since)}): {e(a.message)}" for a in digest.open_alerts]
    sections.append("*Open alerts*\n" + ("\n".join(alerts) if alerts else "none"))
    if digest.link:
        sections.append(_slack_link(digest.link))
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": header[:_SLACK_HEADER_MAX]}}
    ]
    banner = _simulated_text(report)
    if banner:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": f":warning: {e(banner)}"}]})
    blocks += [{"type": "section", "text": {"type": "mrkdwn", "text": s[:_SLACK_SECTION_MAX]}} for s in sections]
    return {"text": fallback, "blocks": blocks}


# --- the generic webhook ------------------------------------------------------------------------------------
def report_summary(digest: ReportDigest) -> dict[str, Any]:
    """The report's summary as JSON: headline with intervals and tickets, least reliable, changes, open alerts."""
    report = digest.report
    base: dict[str, Any] = {"period": report.period, "k": report.k, "agent": report.agent}
    if isinstance(report, UnreplayedReport):
        return {**base, "measured": False, "why": report.why, "open_alerts": [a.to_dict() for a in digest.open_alerts]}
    figures, how = _headline(report)
    trend = report.trend
    return {
        **base,
        "measured": True,
        "agent_version": report.agent_version,
        "run_id": report.run_id,
        "simulated": report.simulated,
        "headline": {
            "weighting": how,
            "pass_at_1": figures.pass_at_1,
            "pass_at_1_ci": None if figures.pass_at_1_ci is None else list(figures.pass_at_1_ci),
            "pass_at_k": figures.pass_at_k,
            "pass_at_k_ci": None if figures.pass_at_k_ci is None else list(figures.pass_at_k_ci),
            "pass_hat_k": figures.pass_hat_k,
            "pass_hat_k_ci": None if figures.pass_hat_k_ci is None else list(figures.pass_hat_k_ci),
            "tickets": report.overall.tickets_sampled,
            "expected_failed_tickets_per_day": report.overall.expected_failed_tickets_per_day,
        },
        "least_reliable": [
            {
                "domain": t.domain,
                "task_type": t.task_type,
                "pass_hat_k": t.figures.pass_hat_k,
                "pass_hat_k_ci": None if t.figures.pass_hat_k_ci is None else list(t.figures.pass_hat_k_ci),
                "pass_at_1": t.figures.pass_at_1,
                "pass_at_1_ci": None if t.figures.pass_at_1_ci is None else list(t.figures.pass_at_1_ci),
                "tickets": t.tickets_sampled,
            }
            for t in least_reliable(report, 3)
        ],
        "changes": {
            "previous_period": trend[-2].period if len(trend) > 1 else None,
            "pass_at_1_change": trend[-1].pass_at_1_change if trend else None,
            "pass_hat_k_change": trend[-1].pass_hat_k_change if trend else None,
        },
        "open_alerts": [a.to_dict() for a in digest.open_alerts],
    }


def webhook_report(digest: ReportDigest, *, max_bytes: int = DEFAULT_WEBHOOK_MAX_BYTES) -> dict[str, Any]:
    """The generic webhook body: event ``report.ready`` with the summary and the whole report.json, or, when
    that would exceed ``max_bytes``, the summary and the link only (``"report": null``, ``"truncated": true``)."""
    body: dict[str, Any] = {
        "source": "passhat",
        "event": "report.ready",
        "project": digest.project,
        "period": digest.period,
        "link": digest.link,
        "summary": report_summary(digest),
        "report": digest.report.to_json(),
        "truncated": False,
    }
    size = len(json.dumps(body, ensure_ascii=False).encode("utf-8"))
    if size > max_bytes:
        body.update(report=None, truncated=True, report_bytes=size)
    return body
