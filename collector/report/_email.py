"""The report email: a plain-text part, an HTML part for mail clients, and the self-contained report.html attached.

The HTML body is one 640-pixel table of inline styles: no script, no stylesheet, no image or font fetched from
anywhere, so it reads the same in webmail and desktop clients (bars are table cells, not pictures). Task types,
agent names and alert texts are HTML-escaped.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from email.message import EmailMessage

from passhat.collector.reliability import counted
from passhat.collector.report._digest import (
    OpenAlertLine,
    ReportDigest,
    attachment_name,
    change_lines,
    headline_figures,
    headline_lines,
    least_reliable,
    simulated_text,
)
from passhat.collector.report._format import agent_text, ci, pct, volume, volume_interval
from passhat.collector.report._html import render_html
from passhat.collector.report._model import Report
from passhat.collector.report._unreplayed import UnreplayedReport, reason_counts


def email_subject(digest: ReportDigest) -> str:
    """The subject: project, period and the headline pass^k with its interval (or that nothing was measured)."""
    report = digest.report
    project = f" {digest.project}" if digest.project else ""
    if isinstance(report, UnreplayedReport):
        return f"[passhat]{project} report {report.period}: nothing measured"
    figures, _ = headline_figures(report)
    simulated = " (simulated agent)" if report.simulated else ""
    return (
        f"[passhat]{project} report {report.period}: pass^{report.k} {pct(figures.pass_hat_k)} "
        f"{ci(figures.pass_hat_k_ci)}, {counted(report.overall.tickets_sampled, 'ticket')}{simulated}"
    )


def email_text(digest: ReportDigest) -> str:
    """The plain-text part of the email."""
    report = digest.report
    out = [email_subject(digest).removeprefix("[passhat] ").removeprefix("[passhat]"), ""]
    if isinstance(report, UnreplayedReport):
        out += [report.why, "", "Why:"]
        out += [f"- {counted(count, 'ticket')}: {reason}. Fix: {fix or '-'}" for reason, fix, count in reason_counts(
            report.not_replayable
        )]  # fmt: skip
    else:
        banner = simulated_text(report)
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
                f"pass@1 {pct(t.figures.pass_at_1)} {ci(t.figures.pass_at_1_ci)}, "
                f"{counted(t.tickets_sampled, 'ticket')}"
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
        f'<tr><td style="padding:18px 16px 4px 16px;{_FONT}"><h2 style="margin:0 0 8px 0;font-size:17px;'
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
        '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" '
        'style="border-collapse:collapse;margin-top:4px;max-width:100px">'
        f"<tr>{cells}</tr></table>"
    )


def _card(label: str, value: str, detail: str) -> str:
    """One figure; cards are inline blocks, three abreast in a 640-pixel client and stacked on a phone."""
    return (
        '<div style="display:inline-block;vertical-align:top;box-sizing:border-box;width:190px;max-width:100%;'
        f'margin:0 6px 8px 0;padding:10px 12px;background:#f4f6f8;border-radius:6px;{_FONT}">'
        f'<div style="font-size:12px;{_MUTED}">{_e(label)}</div>'
        f'<div style="font-size:24px;font-weight:bold;color:#1d2733">{_e(value)}</div>'
        f'<div style="font-size:12px;{_MUTED}">{_e(detail)}</div></div>'
    )


def _headline_html(report: Report) -> str:
    figures, how = headline_figures(report)
    k = report.k
    tickets = counted(report.overall.tickets_sampled, "ticket")
    cards = (
        _card(
            f"pass^{k} (all {k} attempts succeed)", pct(figures.pass_hat_k), f"{ci(figures.pass_hat_k_ci)} · {tickets}"
        )
        + _card("pass@1 (one attempt)", pct(figures.pass_at_1), f"{ci(figures.pass_at_1_ci)} · {tickets}")
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
        f'<div style="font-size:0">{cards}</div>'
        f'<p style="margin:8px 0 0 0;font-size:13px;{_MUTED}">{extra}{_e(tickets)} '
        f"sampled over {_e(counted(len(report.task_types), 'task type'))}, {_e(how)}; "
        f"{round(100 * report.confidence_level)}% "
        "intervals [low, high] ±half-width in points.</p>"
    )


def _least_reliable_html(report: Report) -> str:
    k = report.k
    head = "".join(
        f'<th align="left" style="{_CELL};font-size:12px;{_MUTED};font-weight:normal">{_e(c)}</th>'
        for c in ("task type", f"pass^{k}", "pass@1", "tickets")
    )
    rows = "".join(
        f'<tr><td style="{_CELL};word-break:break-all">{_e(t.name)}</td>'
        f'<td style="{_CELL}"><strong>{_e(pct(t.figures.pass_hat_k))}</strong><br>'
        f'<span style="font-size:12px;{_MUTED}">{_e(ci(t.figures.pass_hat_k_ci))}</span>'
        f"{_bar(t.figures.pass_hat_k, t.figures.pass_hat_k_ci)}</td>"
        f'<td style="{_CELL}">{_e(pct(t.figures.pass_at_1))}<br>'
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
        reasons = [f"{counted(count, 'ticket')}: {reason}. Fix: {fix or '-'}" for reason, fix, count in reason_counts(
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
    banner = simulated_text(report)
    banner_html = (
        f'<tr><td style="padding:12px 16px 0 16px;{_FONT}"><div style="background:#fff4ce;border:1px solid #e0b000;'
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
        f'<tr><td style="padding:18px 16px 24px 16px;{_FONT}">{button}<p style="margin:12px 0 0 0;font-size:13px;'
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
        f'<tr><td style="padding:20px 16px 0 16px;{_FONT}"><div style="font-size:12px;{_MUTED}">passhat</div>'
        f'<h1 style="margin:2px 0 4px 0;font-size:22px;color:#1d2733">{_e(title)}</h1>'
        f'<div style="font-size:13px;{_MUTED};{_WRAP}">{_e(subtitle)}</div></td></tr>'
        f"{banner_html}{''.join(parts)}{footer}"
        "</table></td></tr></table></body></html>\n"
    )


def report_html(report: Report | UnreplayedReport) -> str:
    """The self-contained report.html of either kind of report (what the email attaches)."""
    return report.html() if isinstance(report, UnreplayedReport) else render_html(report)


def report_email(digest: ReportDigest, sender: str, recipients: Sequence[str]) -> EmailMessage:
    """The email: plain text and HTML alternatives, and the self-contained report.html attached. The email
    channel that sends it adds its Date and Message-ID and folds its subject (`passhat.collector.alerts`)."""
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
