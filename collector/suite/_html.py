"""`passhat suite table --html FILE`: the seed's table as one self-contained, offline page.

Everything is in the file (the table's JSON, the script, the styles): no request leaves the page. Step through
the domains (buttons or the arrow keys) and watch the ranking; drag k and watch pass@k rise and pass^k fall,
every figure with its interval and its task count; the seed's three published points (65.4% pass@1, 91.1%
pass@20, 25.3% pass^20 for its strongest model over 507 tasks) are drawn on the curve as a reference.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from passhat.collector.suite._table import SuiteTable

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d232a;max-width:1100px}
h1{font-size:20px;margin:0 0 4px} .muted{color:#5b6570} .sim{color:#8a4b00;font-weight:600}
.controls{display:flex;gap:16px;align-items:center;margin:14px 0;flex-wrap:wrap}
button{font:inherit;padding:4px 10px;border:1px solid #aab;border-radius:4px;background:#f5f6f8;cursor:pointer}
button[aria-pressed=true]{background:#1d4ed8;color:#fff;border-color:#1d4ed8}
table{border-collapse:collapse;margin:8px 0 18px}
th,td{padding:4px 10px;border-bottom:1px solid #e2e5e9;text-align:left}
td.num{font-variant-numeric:tabular-nums;text-align:right} .ci{color:#5b6570;font-size:12px}
svg text{font-size:11px;fill:#39424b} .grid{stroke:#e8eaee} .seed{fill:#b91c1c}
"""

_SCRIPT = r"""
const data = JSON.parse(document.getElementById('suite-data').textContent);
const domains = [...data.domains, 'overall'];
const colors = ['#1d4ed8', '#c2410c', '#15803d', '#7c3aed', '#0e7490', '#be185d'];
let current = 0, k = data.k;
const label = id => data.agents.find(a => a.run_id === id).label;
function pct(v) {
  if (v === null || v === undefined) return '-';
  return (v > 0 && v < 0.001 ? (100 * v).toPrecision(2) : (100 * v).toFixed(1)) + '%';
}
const ci = c => c ? `[${(100 * c[0]).toFixed(1)}, ${(100 * c[1]).toFixed(1)}]` : '';
function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [a, v] of Object.entries(attrs || {})) e.setAttribute(a, v);
  if (text !== undefined) e.textContent = text;
  return e;
}
function buttons() {
  const box = document.getElementById('domains');
  box.textContent = '';
  domains.forEach((d, i) => {
    const b = el('button', {'data-domain': d, 'aria-pressed': String(i === current)}, d);
    b.onclick = () => { current = i; render(); };
    box.appendChild(b);
  });
}
function render() {
  const domain = domains[current];
  buttons();
  document.getElementById('domain-name').textContent = domain;
  document.getElementById('k-value').textContent = k;
  const curves = data.curves[domain];
  const order = data.agents.map(a => a.run_id).sort((a, b) => curves[b].pass_at_k[0] - curves[a].pass_at_k[0]);
  const body = document.getElementById('rows');
  body.textContent = '';
  document.getElementById('h-at-k').textContent = `pass@${k}`;
  document.getElementById('h-hat-k').textContent = `pass^${k}`;
  order.forEach((id, rank) => {
    const c = curves[id], cell = data.cells[domain][id], tr = el('tr', {'data-run': id});
    tr.appendChild(el('td', {class: 'num rank'}, String(rank + 1)));
    tr.appendChild(el('td', {class: 'agent'}, label(id)));
    tr.appendChild(el('td', {class: 'num'}, String(cell.tasks)));
    tr.appendChild(el('td', {class: 'num'}, String(cell.trials)));
    const figures = [
      [c.pass_at_k[0], c.pass_at_k_ci[0], 'at1'],
      [c.pass_at_k[k - 1], c.pass_at_k_ci[k - 1], 'atk'],
      [c.pass_hat_k[k - 1], c.pass_hat_k_ci[k - 1], 'hatk'],
    ];
    for (const [v, band, cls] of figures) {
      const td = el('td', {class: 'num ' + cls}, pct(v));
      td.appendChild(el('div', {class: 'ci'}, ci(band)));
      tr.appendChild(td);
    }
    body.appendChild(tr);
  });
  chart(domain);
  const pairs = document.getElementById('pairs');
  pairs.textContent = '';
  data.paired.filter(p => p.domain === domain).forEach(p => {
    const tr = el('tr');
    tr.appendChild(el('td', {}, `${label(p.candidate)} minus ${label(p.baseline)}`));
    tr.appendChild(el('td', {class: 'num'}, String(p.tasks)));
    for (const d of [p.pass_at_1, p.pass_hat_k]) {
      const td = el('td', {class: 'num'}, `${(100 * d.difference).toFixed(1)} pts`);
      td.appendChild(el('div', {class: 'ci'}, d.interval ? ci(d.interval) : 'too few tasks'));
      tr.appendChild(td);
    }
    pairs.appendChild(tr);
  });
}
function chart(domain) {
  const svg = document.getElementById('chart'), W = 760, H = 300, L = 44, B = 30, T = 12, R = 250;
  svg.textContent = '';
  const maxK = Math.max(data.k, 20);
  const x = j => L + (j - 1) / Math.max(1, maxK - 1) * (W - L - R), y = v => T + (1 - v) * (H - T - B);
  const add = (tag, attrs, text) => {
    const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [a, v] of Object.entries(attrs)) e.setAttribute(a, v);
    if (text !== undefined) e.textContent = text;
    svg.appendChild(e);
    return e;
  };
  for (let g = 0; g <= 4; g++) {
    add('line', {x1: L, x2: W - R, y1: y(g / 4), y2: y(g / 4), class: 'grid'});
    add('text', {x: 4, y: y(g / 4) + 4}, `${g * 25}%`);
  }
  [1, 5, 10, 15, 20].filter(j => j <= maxK).forEach(j => add('text', {x: x(j) - 4, y: H - 10}, String(j)));
  add('line', {x1: x(k), x2: x(k), y1: T, y2: H - B, stroke: '#94a3b8', 'stroke-dasharray': '3 3', id: 'k-line'});
  data.agents.forEach((a, i) => {
    const c = data.curves[domain][a.run_id], color = colors[i % colors.length];
    for (const [key, dash] of [['pass_at_k', ''], ['pass_hat_k', '5 4']]) {
      const points = c[key].map((v, j) => `${x(j + 1)},${y(v)}`).join(' ');
      const style = {fill: 'none', stroke: color, 'stroke-width': 2, 'stroke-dasharray': dash};
      add('polyline', {points, ...style, 'data-curve': key});
    }
    add('text', {x: W - R + 8, y: T + 14 + 16 * i, style: `fill:${color}`}, a.label.slice(0, 40));
  });
  const seed = data.reference;
  const points = [[1, seed.pass_at_1, 'pass@1'], [20, seed.pass_at_20, 'pass@20'], [20, seed.pass_hat_20, 'pass^20']];
  for (const [j, v, name] of points) {
    add('path', {d: `M${x(j)},${y(v) - 5} l5,5 l-5,5 l-5,-5 z`, class: 'seed', 'data-seed': name});
    const side = j === 1 ? {x: x(j) + 7} : {x: x(j) - 7, 'text-anchor': 'end'};
    add('text', {...side, y: y(v) + 4, class: 'seed'}, `seed ${name} ${pct(v)}`);
  }
}
const step = by => { current = (current + domains.length + by) % domains.length; render(); };
document.getElementById('k').addEventListener('input', e => { k = Number(e.target.value); render(); });
document.getElementById('prev').onclick = () => step(-1);
document.getElementById('next').onclick = () => step(1);
document.addEventListener('keydown', e => {
  if (e.key === 'ArrowRight') step(1);
  if (e.key === 'ArrowLeft') step(-1);
});
render();
"""


def render_html(table: SuiteTable) -> str:
    """The page (one string, nothing external)."""
    data = json.dumps(table.to_dict()).replace("</", "<\\/")
    agents = "".join(
        f"<li>{html.escape(a['label'])} <span class=muted>run {html.escape(a['run_id'])}, {a['tasks']} tasks, "
        f"{a['trials']} trials</span>{' <span class=sim>simulation</span>' if a['simulated'] else ''}</li>"
        for a in table.agents
    )
    agreement = table.agreement
    if agreement.get("value") is None:
        agree = f"Rank agreement across domains: not computed ({html.escape(str(agreement.get('why', '-')))})."
    else:
        low, high = agreement["interval"] or (float("nan"), float("nan"))
        agree = (
            f"Rank agreement across domains (Kendall's W on pass@1, 1 = same order everywhere): "
            f"<b id=kendall-w>{agreement['value']:.2f}</b> [{low:.2f}, {high:.2f}] over {agreement['tasks']} tasks, "
            f"{agreement['domains']} domains."
        )
    swings = "".join(
        f"<tr><td>{html.escape(next(a['label'] for a in table.agents if a['run_id'] == rid))}</td>"
        f"<td class=num>{100 * s['swing']:.1f} pts</td><td class=num>[{100 * s['interval'][0]:.1f}, "
        f"{100 * s['interval'][1]:.1f}]</td><td>{html.escape(s['highest'])} - {html.escape(s['lowest'])}</td></tr>"
        for rid, s in table.swing.items()
        if s["swing"] is not None
    )
    return f"""<!doctype html>
<html lang=en><head><meta charset=utf-8><title>passhat suite {html.escape(table.version)}: the table</title>
<meta http-equiv="Content-Security-Policy"
 content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">
<style>{_STYLE}</style></head><body>
<h1>passhat suite {html.escape(table.version)}: pass@1, pass@k and pass^k per domain</h1>
<p class=muted>k up to {table.k}; {int(100 * table.level)}% intervals over tasks. Runs marked simulation are the
offline ReferenceAgent with a flaw profile, not a model.</p>
<ul>{agents}</ul>
<div class=controls>
 <button id=prev aria-label="previous domain">&#9664;</button><span id=domains></span>
 <button id=next aria-label="next domain">&#9654;</button>
 <label>k = <b id=k-value>{table.k}</b> <input id=k type=range min=1 max={table.k} value={table.k}></label>
</div>
<h2 id=domain-name></h2>
<table><thead><tr><th>rank</th><th>agent</th><th>tasks</th><th>trials</th><th>pass@1</th><th id=h-at-k></th>
<th id=h-hat-k></th></tr></thead><tbody id=rows></tbody></table>
<svg id=chart width=760 height=300 role=img aria-label="pass@k (solid) and pass^k (dashed) against k"></svg>
<p class=muted>Solid: pass@k; dashed: pass^k. Red diamonds: the seed's published points (its strongest model,
507 tasks), a reference, not data of these runs.</p>
<h3>Paired differences on the same tasks (this domain)</h3>
<table><thead><tr><th>agents</th><th>tasks</th><th>pass@1</th><th>pass^{table.k}</th></tr></thead>
<tbody id=pairs></tbody></table>
<p>{agree}</p>
<table><thead><tr><th>agent</th><th>swing across domains (pass@1)</th><th>interval</th><th>best - worst</th></tr>
</thead><tbody>{swings}</tbody></table>
<script type="application/json" id=suite-data>{data}</script>
<script>{_SCRIPT}</script>
</body></html>
"""


def write_html(table: SuiteTable, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(table), encoding="utf-8")
    return path
