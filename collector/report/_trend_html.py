"""The week-over-week section of report.html: each period's figures with their intervals and tickets, and each
change with the interval of a difference between two independent periods (Newcombe's square-and-add)."""

from __future__ import annotations

from html import escape

from passhat.collector.report._format import agent_text, ci, paired_interval, pct, points, volume
from passhat.collector.report._model import Report
from passhat.collector.report._svg import line_chart

AT_COLOUR, HAT_COLOUR = "#1f6fb5", "#c2352b"


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _direction(change: float | None, interval: tuple[float, float] | None) -> str:
    """Coloured down or up only when the change's interval lies on one side of zero (a change noise could make is
    not painted as one)."""
    if change is None or change == 0 or (interval is not None and interval[0] <= 0.0 <= interval[1]):
        return ""
    return "down" if change < 0 else "up"


def _trend_cell(value: float | None, interval: tuple[float, float] | None) -> str:
    extra = f'<span class="ci">{ci(interval)}</span>' if interval else ""
    return f"<td class='num'>{pct(value)}{extra}</td>"


def _change_cell(change: float | None, interval: tuple[float, float] | None, *, coloured: bool = False) -> str:
    extra = f'<span class="ci">{_e(paired_interval(list(interval)))}</span>' if interval else ""
    css = f" {_direction(change, interval)}" if coloured else ""
    return f"<td class='num{css}'>{points(change)}{extra}</td>"


def _bands(values: list[tuple[float, tuple[float, float] | None]], colour: str) -> tuple[list[float], list[float], str]:
    """A trend series' intervals as a band (a period with no recorded interval pinches it to its value)."""
    return [(iv or (v, v))[0] for v, iv in values], [(iv or (v, v))[1] for v, iv in values], colour


def trend_html(report: Report) -> str:
    rows = "".join(
        f"<tr><td class='nowrap'>{_e(p.period)}</td><td class='num'>{p.k}</td>"
        f"<td class='num'>{'–' if p.tickets is None else p.tickets}</td>{_trend_cell(p.pass_at_1, p.pass_at_1_ci)}"
        f"{_change_cell(p.pass_at_1_change, p.pass_at_1_change_ci)}{_trend_cell(p.pass_hat_k, p.pass_hat_k_ci)}"
        f"{_change_cell(p.pass_hat_k_change, p.pass_hat_k_change_ci, coloured=True)}"
        f"<td class='num'>{volume(p.expected_failed_tickets_per_day)}</td>"
        f"<td>{_e(agent_text(p.agent, p.agent_version))}</td></tr>"
        for p in report.trend
    )
    known = [p for p in report.trend if p.pass_at_1 is not None and p.pass_hat_k is not None]
    chart = ""
    if len(known) > 1:
        chart = line_chart(
            list(range(len(known))),
            [
                ("pass@1", [p.pass_at_1 or 0.0 for p in known], AT_COLOUR),
                ("pass^k", [p.pass_hat_k or 0.0 for p in known], HAT_COLOUR),
            ],
            width=460,
            height=252,
            x_label="period",
            y_label="traffic-weighted share",
            x_tick_labels=[p.period for p in known],
            bands=[
                _bands([(p.pass_at_1 or 0.0, p.pass_at_1_ci) for p in known], AT_COLOUR),
                _bands([(p.pass_hat_k or 0.0, p.pass_hat_k_ci) for p in known], HAT_COLOUR),
            ],
        )
    return f"""<section id="trend"><h2>Week over week</h2>
<table class="trend"><thead><tr><th>period</th><th class="num">k</th><th class="num">tickets</th>
<th class="num">pass@1</th><th class="num">pass@1 change</th><th class="num">pass^k</th>
<th class="num">pass^k change</th><th class="num">failed / day</th><th>agent</th></tr>
</thead><tbody>{rows}</tbody></table>
<div class="chart-row">{chart}</div><p class="note">Traffic-weighted figures of each period with their
{report.confidence_level:.0%} intervals; a change's interval combines the two periods' intervals (Newcombe's
square-and-add: the periods sampled different tickets). pass^k changes are shown only between periods with the
same k; – where an earlier report did not record a figure.</p></section>"""
