"""The report for webhooks: a compact Slack summary (mrkdwn-escaped) and the generic webhook's JSON body."""

from __future__ import annotations

import json
from typing import Any

from passhat.collector.reliability import counted
from passhat.collector.report._digest import (
    DEFAULT_WEBHOOK_MAX_BYTES,
    ReportDigest,
    headline_figures,
    least_reliable,
    simulated_text,
)
from passhat.collector.report._format import ci, pct, volume, volume_interval
from passhat.collector.report._unreplayed import UnreplayedReport

#: Slack limits a header block's text to 150 characters and a section's to 3000.
_SLACK_HEADER_MAX = 150
_SLACK_SECTION_MAX = 3000


# --- Slack --------------------------------------------------------------------------------------------------
def mrkdwn_escape(text: object) -> str:
    """User text made safe for Slack's mrkdwn: ``&``, ``<`` and ``>`` as entities (no mention, no link)."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _slack_link(url: str) -> str:
    safe = "".join(ch for ch in url if ch not in "<>| ")
    return f"<{safe}|Open in the passhat web UI>"


def slack_report(digest: ReportDigest) -> dict[str, Any]:
    """A compact Slack body naming the project: headline, the three least reliable task types, open alerts, link."""
    report = digest.report
    e = mrkdwn_escape
    project = f" {digest.project}" if digest.project else ""  # one collector may serve several projects
    sections: list[str] = []
    if isinstance(report, UnreplayedReport):
        header = f"passhat{project} report {report.period}: nothing measured"
        sections.append(e(report.why))
        fallback = e(header)
    else:
        figures, how = headline_figures(report)
        k = report.k
        header = f"passhat{project} report {report.period}: pass^{k} {pct(figures.pass_hat_k)}"
        headline = (
            f"*pass^{k}* {pct(figures.pass_hat_k)} {ci(figures.pass_hat_k_ci)} · *pass@1* {pct(figures.pass_at_1)} "
            f"{ci(figures.pass_at_1_ci)} · {counted(report.overall.tickets_sampled, 'ticket')} ({how})"
        )
        failed = report.overall.expected_failed_tickets_per_day
        if failed is not None:
            failed_ci = volume_interval(report.overall.expected_failed_tickets_per_day_ci)
            headline += f"\nexpected failed tickets per day {volume(failed)} {failed_ci}"
        sections.append(e(headline))
        worst = [
            f"• {e(t.name)}: pass^{k} {pct(t.figures.pass_hat_k)} {ci(t.figures.pass_hat_k_ci)}, "
            f"{counted(t.tickets_sampled, 'ticket')}"
            for t in least_reliable(report, 3)
        ]
        sections.append("*Least reliable task types*\n" + "\n".join(worst))
        fallback = e(f"{header} {ci(figures.pass_hat_k_ci)}")
    alerts = [f"• {e(a.rule)} ({e(a.scope)}, since {e(a.since)}): {e(a.message)}" for a in digest.open_alerts]
    sections.append("*Open alerts*\n" + ("\n".join(alerts) if alerts else "none"))
    if digest.link:
        sections.append(_slack_link(digest.link))
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": header[:_SLACK_HEADER_MAX]}}
    ]
    banner = simulated_text(report)
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
    figures, how = headline_figures(report)
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
