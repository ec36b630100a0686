"""The demo's self-contained HTML page (no external assets: it works offline)."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from passhat.collector._svg import line_chart

_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 820px; margin: 2em auto; color: #222; }
table { border-collapse: collapse; margin: 1em 0; } td, th { border-bottom: 1px solid #ddd; padding: 4px 12px; }
th { text-align: left; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.note { color: #666; font-size: 0.9em; } output { font-weight: bold; }
"""


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def render_demo_page(summary: dict[str, Any]) -> str:
    """Render the demo summary as one HTML file with an inline SVG chart and a k slider."""
    curve = summary["curve"]
    chart = line_chart(
        curve["k"],
        [
            ("pass@k (any attempt)", curve["pass_at_k"], "#1f77b4"),
            ("pass^k (every attempt)", curve["pass_hat_k"], "#d62728"),
        ],
        y_label="share of task types",
    )
    rows = "".join(
        f"<tr><td class='num'>{_pct(c['weight'])}</td><td class='num'>{_pct(c['p'])}</td></tr>"
        for c in summary["mixture"]["components"]
    )
    calc_rows = ""
    for model, result in summary["calculator"].items():
        calc_rows += (
            f"<tr><td>{escape(model)}</td><td class='num'>{_pct(result['pass_at_1'])}</td>"
            f"<td class='num'>{_pct(result['pass_at_k'])}</td><td class='num'>{_pct(result['pass_hat_k'])}</td>"
            f"<td class='num'>{result['failed_tickets_per_day']:,.0f}</td>"
            f"<td class='num'>{result['noticed_failures_per_day']:,.0f}</td></tr>"
        )
    points = ", ".join(f"{k} = {_pct(v)}" for k, v in summary["points"].items())
    data = json.dumps(curve).replace("</", "<\\/")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>passhat demo</title><style>{_STYLE}</style></head>
<body>
<h1>pass@k vs pass^k on the seed's figures</h1>
<p class="note">{escape(summary["source"])}. Points: {escape(points)}.</p>
{chart}
<p><label>k = <input id="k" type="range" min="1" max="{len(curve["k"])}" value="20"></label>
<output id="kval">20</output>: any attempt succeeds <output id="at"></output>, every attempt succeeds
<output id="hat"></output>.</p>
<h2>Fitted mixture</h2>
<table><tr><th>share of task types</th><th>per-attempt success</th></tr>{rows}</table>
<p class="note">Anchors: {escape("; ".join(summary["mixture"]["anchors"]) or "none")}.</p>
<h2>Calculator: 2,000 tickets a day, 30% of failures noticed, k = 20</h2>
<table><tr><th>model</th><th>pass@1</th><th>pass@20</th><th>pass^20</th><th>failed / day</th><th>noticed / day</th></tr>
{calc_rows}</table>
<script>
const curve = {data};
const slider = document.getElementById("k");
function pct(v) {{ return (100 * v).toFixed(1) + "%"; }}
function update() {{
  const i = Number(slider.value) - 1;
  document.getElementById("kval").textContent = slider.value;
  document.getElementById("at").textContent = pct(curve.pass_at_k[i]);
  document.getElementById("hat").textContent = pct(curve.pass_hat_k[i]);
}}
slider.addEventListener("input", update); update();
</script>
</body></html>
"""
