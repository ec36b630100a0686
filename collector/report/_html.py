"""`report.html`: one self-contained page (inline CSS, SVG and script; no network) for a period's report."""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from html import escape
from importlib import resources

from passhat.collector.report._attempts_html import attempts_html
from passhat.collector.report._build import MIN_EXTRAPOLATION_TICKETS
from passhat.collector.report._fidelity_text import fidelity_html
from passhat.collector.report._format import (
    agent_text,
    ci,
    paired_interval,
    pct,
    points,
    verdict,
    volume,
    volume_interval,
    when,
)
from passhat.collector.report._model import Figures, Report
from passhat.collector.report._responsive import responsive_tables
from passhat.collector.report._svg import line_chart
from passhat.collector.report._trend_html import trend_html

AT_COLOUR, HAT_COLOUR = "#1f6fb5", "#c2352b"
SIGNATURE_COLOURS = {
    "tool_usage.precondition": "#e07b39",
    "tool_usage.empty_lookup": "#f0a75b",
    "tool_usage.error_not_retried": "#f6cd8b",
    "wrong_entity": "#b63a6f",
    "wrong_value": "#d4608f",
    "unresolved": "#6b7fb5",
    "no_write": "#58a4b0",
    "policy_violation": "#7f4fb0",
    "simulator_error": "#9aa3ad",
    "infra_error": "#c5cbd2",
}
OTHER_COLOUR = "#d9dde2"
# The page loads nothing: inline style and script only, so a stray external reference fails closed.
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


@cache
def _asset(name: str) -> str:
    return resources.files("passhat.collector.report").joinpath(name).read_text(encoding="utf-8")


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _cell(value: float | None, interval: tuple[float, float] | None = None) -> str:
    extra = f'<span class="ci">{ci(interval)}</span>' if interval else ""
    return f'<td class="num">{pct(value)}{extra}</td>'


def _band(band: list[tuple[float, float]] | None, k: int) -> str:
    """The curve's band at k, as the interval after a figure ("" when the curve has no band or stops before k)."""
    return ci(band[k - 1]) if band is not None and k <= len(band) else ""


def _volume_cell(value: float | None, interval: tuple[float, float] | None) -> str:
    extra = f'<span class="ci">{volume_interval(interval)}</span>' if interval else ""
    return f"<td class='num'>{volume(value)}{extra}</td>"


def _card(css: str, label: str, value: str, detail: str) -> str:
    return (
        f'<div class="card {css}"><div class="label">{label}</div><div class="value">{value}</div>'
        f'<div class="ci">{detail}</div></div>'
    )


def _headline(report: Report) -> str:
    o, k = report.overall, report.k
    w, u = o.weighted, o.unweighted
    level = f"{report.confidence_level:.0%} interval"
    n = f" · {o.tickets_sampled} tickets"
    cards = "".join(
        [
            _card("hat", f"pass^{k} · traffic-weighted", pct(w.pass_hat_k), f"{level} {ci(w.pass_hat_k_ci)}{n}"),
            _card("at1", "pass@1 · traffic-weighted", pct(w.pass_at_1), f"{level} {ci(w.pass_at_1_ci)}{n}"),
            _card(
                "failed",
                "expected failed tickets / day",
                volume(o.expected_failed_tickets_per_day),
                f"{level} {volume_interval(o.expected_failed_tickets_per_day_ci)} of "
                f"{volume(o.measured_daily_volume)} tickets a day in measured task types{n}",
            ),
            _card("atk", f"pass@{k} · traffic-weighted", pct(w.pass_at_k), f"{level} {ci(w.pass_at_k_ci)}{n}"),
        ]
    )
    notes = [
        f"Weighted by each task type's production tickets per day. The plain mean over the {o.tickets_sampled} "
        f"sampled tickets, as papers report it: pass@1 {pct(u.pass_at_1)} {ci(u.pass_at_1_ci)}, pass@{k} "
        f"{pct(u.pass_at_k)} {ci(u.pass_at_k_ci)}, pass^{k} {pct(u.pass_hat_k)} {ci(u.pass_hat_k_ci)}."
    ]
    if w.pass_at_1 is None:
        notes.append(
            "No production traffic was recorded for the measured task types this period: weighted figures are blank."
        )
    if o.unmeasured_task_types:
        share = 1.0 - o.measured_daily_volume / o.daily_volume if o.daily_volume else 0.0
        names = ", ".join(f"{d}/{t}" for d, t, _ in o.unmeasured_task_types)
        notes.append(
            f"{pct(share)} of traffic belongs to task types with no replayed tickets this period ({_e(names)})."
        )
    return (
        f'<section id="headline"><div class="cards">{cards}</div>'
        + "".join(f'<p class="note">{n}</p>' for n in notes)
        + "</section>"
    )


def _simulated(report: Report) -> str:
    if not report.simulated:
        return ""
    agent = f" ({_e(report.agent)})" if report.agent else ""
    trials = sum(t.trials for t in report.task_types)
    scope = (
        f"{report.simulated_trials} of the {trials} trials were run by a simulated agent{agent}"
        if report.simulated_trials and report.simulated_trials < trials
        else f"every trial was run by a simulated agent{agent}"
    )
    return (
        f'<p class="banner" id="simulated"><strong>Simulated agent.</strong> These figures come from a simulated '
        f"agent, not from your production agent: {scope}. They show how the report reads, not how your agent "
        f"performs.</p>"
    )


def _curve(report: Report) -> str:
    c, k = report.curve, report.k
    reach = next((x - 1 for x, extra in zip(c.k, c.extrapolated, strict=True) if extra), None)
    chart = line_chart(
        c.k,
        [
            ("pass@k: any of k attempts succeeds", c.pass_at_k, AT_COLOUR),
            ("pass^k: all k attempts succeed", c.pass_hat_k, HAT_COLOUR),
        ],
        width=640,
        height=352,
        y_label="share of tickets",
        dashed_from=reach,
        marker_at=k,
        element_id="curve-chart",
        bands=[
            ([b[0] for b in band], [b[1] for b in band], colour)
            for band, colour in ((c.pass_at_k_band, AT_COLOUR), (c.pass_hat_k_band, HAT_COLOUR))
            if band is not None
        ],
    )
    weighting = (
        "traffic-weighted" if report.curve_weighting == "traffic" else "over sampled tickets (no traffic recorded)"
    )
    at_headline = f", at k = {k} the headline's interval" if report.curve_weighting == "traffic" else ""
    dashed = (
        f" Dashed beyond k = {reach}: extrapolated from the fitted mixture. The shaded band is the interval where the"
        f" trials reach and, beyond them, the spread of every mixture the data do not reject (1 to 3 groups, and"
        f" tickets that passed every trial never failing): the data do not pin the curve there."
        if reach
        else " The shaded band is each value's interval."
    )
    return f"""<section id="curve"><h2>pass@k and pass^k against k</h2>
<p class="note">Both curves, {weighting}, for k = 1 to {len(c.k)}.{dashed} Drag k and watch them diverge: pass@k is
the chance one of k attempts works (what a human picking the best answer sees); pass^k is the chance all k do
(what a kind of ticket that must be handled right every time it is attempted needs).</p>
<div class="chart-row">{chart}
<div class="readout"><label for="k-range">k = <output id="k-value">{k}</output></label>
<input id="k-range" type="range" min="1" max="{len(c.k)}" step="1" value="{k}">
<p>any attempt succeeds: <output id="curve-at" class="big at">{pct(c.pass_at_k[k - 1])}</output>
<output id="curve-at-ci" class="ci">{_band(c.pass_at_k_band, k)}</output><br>
every attempt succeeds: <output id="curve-hat" class="big hat">{pct(c.pass_hat_k[k - 1])}</output>
<output id="curve-hat-ci" class="ci">{_band(c.pass_hat_k_band, k)}</output><br>
gap: <output id="curve-gap">{100 * max(0.0, c.pass_at_k[k - 1] - c.pass_hat_k[k - 1]):.1f} pts</output></p>
<p class="note"><span id="curve-note"></span> <span id="curve-count">{report.overall.tickets_sampled} tickets</span>;
the range after each figure is the shaded band at that k{at_headline}.</p></div></div></section>"""


def _domains(report: Report) -> str:
    k = report.k
    rows = "".join(
        f"<tr><td>{_e(d.domain)}</td><td class='num'>{d.task_types}</td><td class='num'>{volume(d.daily_volume)}</td>"
        f"<td class='num'>{d.tickets_sampled}</td>{_cell(d.weighted.pass_at_1, d.weighted.pass_at_1_ci)}"
        f"{_cell(d.weighted.pass_at_k, d.weighted.pass_at_k_ci)}"
        f"{_cell(d.weighted.pass_hat_k, d.weighted.pass_hat_k_ci)}"
        f"{_volume_cell(d.expected_failed_tickets_per_day, d.expected_failed_tickets_per_day_ci)}</tr>"
        for d in report.domains
    )
    return f"""<section id="domains"><h2>Domains</h2>
<table><thead><tr><th>domain</th><th class="num">task types</th><th class="num">tickets / day</th>
<th class="num">tickets sampled</th><th class="num">pass@1</th><th class="num">pass@{k}</th>
<th class="num">pass^{k}</th><th class="num">failed / day</th></tr></thead><tbody>{rows}</tbody></table>
<p class="note">Traffic-weighted within each domain; stratified intervals (task types the strata).</p></section>"""


def _task_types(report: Report) -> str:
    k = report.k
    order = sorted(range(len(report.task_types)), key=lambda i: (report.task_types[i].figures.pass_hat_k or 0.0, i))
    rows = []
    for i in order:
        t = report.task_types[i]
        f: Figures = t.figures
        rows.append(
            f"<tr><td>{_e(t.domain)}/<wbr><strong>{_e(t.task_type)}</strong></td>"
            f"<td class='num'>{volume(t.daily_volume)}</td>"
            f"<td class='num'>{t.tickets_sampled}</td><td class='num'>{t.trials_per_ticket}</td>"
            f"{_cell(f.pass_at_1, f.pass_at_1_ci)}{_cell(f.pass_at_k, f.pass_at_k_ci)}"
            f"{_cell(f.pass_hat_k, f.pass_hat_k_ci)}"
            f"<td class='num hat-at-k' data-row='{i}'>{pct(f.pass_hat_k)}"
            f"<span class='ci'>{_band(report.task_type_curves[i].pass_hat_k_band, k)}</span></td>"
            f"{_volume_cell(t.expected_failed_tickets_per_day, t.expected_failed_tickets_per_day_ci)}</tr>"
        )
    return f"""<section id="task-types"><h2>Task types</h2>
<table><thead><tr><th>task type</th><th class="num">tickets / day</th><th class="num">tickets sampled</th>
<th class="num">trials / ticket</th><th class="num">pass@1</th><th class="num">pass@{k}</th>
<th class="num">pass^{k}</th><th class="num" data-label="pass^k at the k above">pass^<span class="k-now">{k}</span></th>
<th class="num">failed / day</th></tr></thead>
<tbody>{"".join(rows)}</tbody></table>
<p class="note">Least reliable first. Intervals: {report.confidence_level:.0%} continuity-corrected Wilson over
tickets, ± its half-width in points; widest: {_e(report.sample_size)}. The pass^<span class="k-now">{k}</span> column
follows the k control above, with its band there (* = extrapolated; – = fewer than {MIN_EXTRAPOLATION_TICKETS}
tickets, not extrapolated).</p>{_design(report)}</section>"""


def _design(report: Report) -> str:
    d = report.design or {}
    if d.get("name") != "curtailed":
        return f'<p class="note" id="design">Design: {report.k} trials a ticket.</p>'
    return (
        f'<p class="note" id="design">Design: curtailed. Each ticket ran at least {d["min_trials"]} attempts and '
        f"stopped once one passed and one failed (its pass^{report.k} and pass@{report.k} were then settled, exactly "
        f"as {report.k} attempts would give them); pass@1 comes from the first {d['min_trials']} attempts. "
        f"{d['trials']} trials instead of {d['trials_fixed_design']} ({d['trials_saved']} saved).</p>"
    )


def _signature_row(name: str, signatures: dict[str, int], failed: int, trials: int) -> str:
    bar = "".join(
        f'<span title="{_e(label)}: {count} of {failed} ({count / failed:.0%})" '
        f'style="width:{100 * count / failed:.2f}%;background:{SIGNATURE_COLOURS.get(label, OTHER_COLOUR)}"></span>'
        for label, count in signatures.items()
    )
    detail = ", ".join(f"{_e(label)} {count / failed:.0%} ({count})" for label, count in signatures.items())
    share = f"{failed / trials:.0%} · " if trials else ""
    return (
        f"<tr><td>{_e(name)}</td><td class='num'>{share}{failed} of {trials}</td>"
        f"<td><div class='bar'>{bar}</div><span class='note'>{detail or 'no failed trials'}</span></td></tr>"
    )


def _signatures(report: Report) -> str:
    labels = sorted({label for t in report.task_types for label in t.signatures})
    legend = "".join(
        f'<span><i style="background:{SIGNATURE_COLOURS.get(label, OTHER_COLOUR)}"></i>{_e(label)}</span>'
        for label in labels
    )
    overall: Counter[str] = Counter()
    for t in report.task_types:
        overall.update(t.signatures)
    rows = [_signature_row(t.name, t.signatures, t.failed_trials, t.trials) for t in report.task_types]
    rows.append(
        _signature_row(
            "all task types",
            dict(sorted(overall.items(), key=lambda item: (-item[1], item[0]))),
            sum(t.failed_trials for t in report.task_types),
            sum(t.trials for t in report.task_types),
        ).replace("<tr>", '<tr class="total">', 1)
    )
    return f"""<section id="signatures"><h2>Failure signatures</h2>
<p class="note">Each failed trial's dominant failure, as a share of that task type's failed trials (the count in
brackets), so weeks with different numbers of failures compare. The share of trials that failed comes first.</p>
<p class="legend">{legend}</p>
<table><thead><tr><th>task type</th><th class="num">failed trials</th>
<th>share of failed trials by signature (count)</th></tr></thead>
<tbody>{"".join(rows)}</tbody></table></section>"""


def _calculator(report: Report) -> str:
    o, k = report.overall, report.k
    rate = o.weighted.pass_at_1 if o.weighted.pass_at_1 is not None else o.unweighted.pass_at_1
    tickets = o.measured_daily_volume or 1000.0
    fields = [
        ("calc-rate", "success rate per attempt (%)", 'min="0" max="100" step="0.1"', f"{100 * (rate or 0):.1f}"),
        ("calc-tickets", "tickets per day", 'min="0" step="1"', f"{tickets:.0f}"),
        ("calc-noticed", "share of failures noticed (%)", 'min="0" max="100" step="1"', "30"),
        ("calc-k", "attempts k", 'min="1" max="1000" step="1"', str(k)),
    ]
    inputs = "".join(
        f'<div><label for="{name}">{label}</label><input id="{name}" type="number" {limits} value="{value}"></div>'
        for name, label, limits, value in fields
    )
    at_k = f'<span class="calc-k-now">{k}</span>'
    results = [
        ("calc-failed", "failed tickets per day"),
        ("calc-noticed-out", "noticed failures per day"),
        ("calc-at", f"pass@{at_k} if every task type succeeded at that rate"),
        ("calc-hat", f"pass^{at_k} if every task type succeeded at that rate"),
        ("calc-measured", f"pass^{at_k} measured this period (real task types differ)"),
    ]
    outputs = "".join(
        f'<tr><td>{label}</td><td class="num"><output id="{name}"></output></td></tr>' for name, label in results
    )
    return f"""<section id="calculator"><h2>Your traffic</h2>
<p class="note">Set the per-attempt success rate you measure, the tickets a day your agent handles and the share of
failures a customer would notice. Defaults are this period's traffic-weighted figures.</p>
<div class="calc">{inputs}</div><p class="error" id="calc-error"></p>
<table class="calc-out" style="width:auto"><tbody>{outputs}</tbody></table></section>"""


def _comparison(report: Report) -> str:
    data = report.comparison
    if data is None:
        return ""
    rows = "".join(
        f"<tr><td>{_e(row['task_type'])}</td><td class='num'>{row['tickets']}</td>"
        f"<td class='num'>{points(row['pass_at_1']['difference'])}"
        f"<span class='ci'>{_e(paired_interval(row['pass_at_1']['interval']))}</span></td>"
        f"<td class='num'>{points(row['pass_hat_k']['difference'])}</td>"
        f"<td class='num'>{_e(paired_interval(row['pass_hat_k']['interval']))}</td>"
        f"<td>{verdict(row['pass_hat_k'])}</td></tr>"
        for row in data["task_types"]
    )
    return f"""<section id="comparison"><h2>Compared with run {_e(data["baseline"]["run_id"])} on the same tickets</h2>
<table><thead><tr><th>task type</th><th class="num">tickets</th><th class="num">pass@1 change</th>
<th class="num">pass^{data["k"]} change</th><th class="num">{100 * data["level"]:g}% paired interval</th>
<th>verdict</th></tr></thead><tbody>{rows}</tbody></table>
<p class="note">Candidate minus baseline, ticket by ticket; worse or better only when the whole interval lies on
one side of zero.</p></section>"""


def _not_replayable(report: Report) -> str:
    rows = "".join(
        f"<tr><td>{_e(r.ticket_id)}</td><td>{_e(r.task_type)}</td><td>{_e(r.reason)}"
        + (f"<br><small>fix: {_e(r.fix)}</small>" if r.fix else "")
        + "</td></tr>"
        for r in report.not_replayable
    )
    body = (
        f"<table><thead><tr><th>ticket</th><th>task type</th><th>reason</th></tr></thead><tbody>{rows}</tbody></table>"
        if rows
        else "<p>Every sampled ticket could be replayed.</p>"
    )
    return (
        f'<section id="not-replayable"><h2>Not replayable ({len(report.not_replayable)})</h2>'
        '<p class="note">Sampled tickets that could not be turned into a scenario. '
        "They are not in the figures above.</p>"
        f"{body}</section>"
    )


def _harness_failures(report: Report) -> str:
    if not report.harness_failures:
        return ""
    rows = "".join(
        f"<tr><td>{g.trials}</td><td>{_e(g.signature)}</td><td>{_e(g.error_type)}: {_e(g.message)}"
        f"<br><small>fix: {_e(g.fix)}</small></td></tr>"
        for g in report.harness_failures
    )
    total = sum(g.trials for g in report.harness_failures)
    return (
        f'<section id="harness-failures"><h2>Trials the harness broke ({total})</h2>'
        '<p class="note">They ended in an infrastructure or simulator error after their retries: never the agent\'s '
        "failures, and in none of the figures above.</p>"
        "<table><thead><tr><th>trials</th><th>signature</th><th>error</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )


def _inferred_intents(report: Report) -> str:
    if not report.inferred_intents:
        return ""
    rows = "".join(
        f"<tr><td>{_e(ticket_id)}</td><td>{_e(str(found.get('task_type', '')))}</td>"
        f"<td>{_e(str(found.get('source', '')))}</td><td><details><summary>{len(found.get('evidence') or {})} fields"
        "</summary><ul>"
        + "".join(f"<li><code>{_e(f)}</code>: {_e(str(how))}</li>" for f, how in (found.get("evidence") or {}).items())
        + "</ul></details></td></tr>"
        for ticket_id, found in report.inferred_intents.items()
    )
    return (
        f'<section id="inferred-intents"><h2>Inferred intents ({len(report.inferred_intents)})</h2>'
        '<p class="note">These tickets recorded no intent: replay inferred it from what the customer said and the '
        "rows the ticket read (never from what the agent wrote), with the evidence for each field.</p>"
        "<table><thead><tr><th>ticket</th><th>task type</th><th>source</th><th>evidence</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )


def _baseline(value: float | None, note: str) -> str:
    if value is None:
        return ""
    return f'<br><span class="note">Baseline used by the test: {pct(value)}, {_e(note)}.</span>'


def _alerts(report: Report) -> str:
    rows = "".join(
        f"<tr><td><time datetime='{_e(a.fired_at.isoformat())}'>{_e(when(a.fired_at))}</time></td>"
        f"<td>{_e(a.rule)}</td><td>{_e(a.task_type or 'overall')}</td>"
        f"<td>{_e(a.message)}{_baseline(a.baseline, a.baseline_note)}</td></tr>"
        for a in report.alerts
    )
    body = (
        "<table><thead><tr><th>fired at</th><th>rule</th><th>task type</th><th>message</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        if rows
        else "<p>No alert fired this period.</p>"
    )
    return f'<section id="alerts"><h2>Alerts ({len(report.alerts)})</h2>{body}</section>'


def render_html(report: Report) -> str:
    """The report as one HTML document that needs nothing but itself to display and interact."""
    # "<" escaped as \u003c: no text from a ticket can close the script element or open a comment inside it.
    data = json.dumps(report.to_json(), ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")
    agent = f" · agent {_e(agent_text(report.agent, report.agent_version))}" if report.agent else ""
    agent += f" · {_e(report.run_role)} run {_e(report.run_id)}" if report.run_id else ""
    days = f"{report.first_day:%d %b} – {report.last_day:%d %b %Y}"
    generated = f'<time datetime="{_e(report.generated_at.isoformat())}">{_e(when(report.generated_at))}</time>'
    sections = [
        _simulated(report),
        _headline(report),
        _curve(report),
        _domains(report),
        _task_types(report),
        _signatures(report),
        attempts_html(report),
        trend_html(report),
        _calculator(report),
        _comparison(report),
        fidelity_html(report),
        _not_replayable(report),
        _harness_failures(report),
        _inferred_intents(report),
        _alerts(report),
    ]
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<title>passhat reliability report {_e(report.period)}</title><style>{_asset("report.css")}</style></head>
<body><header><h1>Reliability report · {_e(report.period)}</h1>
<p class="sub">{days}{agent} · k = {report.k} attempts per ticket · generated {generated}</p></header>
{responsive_tables("".join(sections))}
<footer><p class="note">pass@1: the chance one attempt succeeds. pass@k: the chance at least one of k attempts does.
pass^k: the chance all k do, the share of requests the agent handles every time. Per-ticket figures are the unbiased
estimators from n trials with c successes, averaged over sampled tickets; written by passhat.</p></footer>
<script type="application/json" id="report-data">{data}</script>
<script>{_asset("report.js")}</script>
</body></html>
"""
