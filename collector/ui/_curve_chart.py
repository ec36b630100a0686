"""pass@k and pass^k against k as inline SVG, each with its interval band, and a marker the k slider moves.

The marker's positions for every k ride along in a `data-` attribute (the page's script reads them; the
Content-Security-Policy allows no inline script), and the readout without script is the value at the run's k.
"""

from __future__ import annotations

import json
from html import escape

from markupsafe import Markup

from passhat.collector.reliability import HeadlineCurve

AT, HAT, GRID, INK = "#2f7d32", "#1a5fb4", "#e3e7eb", "#1f2933"
WIDTH, HEIGHT = 640, 240
LEFT, RIGHT, TOP, BOTTOM = 44, 16, 12, 30


def _x(k: int, max_k: int) -> float:
    span = WIDTH - LEFT - RIGHT
    return LEFT + (0.5 * span if max_k == 1 else (k - 1) / (max_k - 1) * span)


def _y(v: float) -> float:
    return TOP + (1.0 - v) * (HEIGHT - TOP - BOTTOM)


def _band(curve: HeadlineCurve, low: list[float], high: list[float], colour: str) -> str:
    ks = [int(k) for k in curve.k]
    upper = [f"{_x(k, curve.max_k):.1f},{_y(v):.1f}" for k, v in zip(ks, high, strict=True)]
    lower = [f"{_x(k, curve.max_k):.1f},{_y(v):.1f}" for k, v in zip(reversed(ks), reversed(low), strict=True)]
    if len(ks) == 1:  # one k: a whisker instead of an area
        x = _x(ks[0], 1)
        return f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{_y(low[0]):.1f}" y2="{_y(high[0]):.1f}" stroke="{colour}" ' \
            f'stroke-width="6" stroke-opacity="0.25"/>'  # fmt: skip
    return f'<polygon points="{" ".join(upper + lower)}" fill="{colour}" fill-opacity="0.15"/>'


def _line(curve: HeadlineCurve, values: list[float], colour: str) -> str:
    points = " ".join(f"{_x(int(k), curve.max_k):.1f},{_y(v):.1f}" for k, v in zip(curve.k, values, strict=True))
    return f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>'


def curve_data(curve: HeadlineCurve) -> str:
    """What the slider's script needs per k: the values, their intervals, and where the marker goes."""
    data = curve.to_dict()
    data["x"] = [round(_x(int(k), curve.max_k), 1) for k in curve.k]
    data["y_at"] = [round(_y(float(v)), 1) for v in curve.pass_at_k]
    data["y_hat"] = [round(_y(float(v)), 1) for v in curve.pass_hat_k]
    return json.dumps(data, separators=(",", ":"))


def curve_chart(curve: HeadlineCurve, *, label: str) -> Markup:
    """The two curves with their bands over k = 1..K, the marker at K."""
    at = [float(v) for v in curve.pass_at_k]
    hat = [float(v) for v in curve.pass_hat_k]
    parts = [
        f'<svg class="chart kcurve-svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(label)}">'
        f"<title>{escape(label)}</title>"
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = _y(tick)
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="{GRID}"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11" fill="{INK}">{tick:.0%}</text>'
        )
    step = max(1, curve.max_k // 10)
    for k in range(1, curve.max_k + 1):
        if k == 1 or k == curve.max_k or k % step == 0:
            parts.append(
                f'<text x="{_x(k, curve.max_k):.1f}" y="{HEIGHT - 10}" text-anchor="middle" font-size="11" '
                f'fill="{INK}">{k}</text>'
            )
    parts.append(_band(curve, [float(v) for v in curve.pass_at_k_low], [float(v) for v in curve.pass_at_k_high], AT))
    parts.append(_band(curve, [float(v) for v in curve.pass_hat_k_low], [float(v) for v in curve.pass_hat_k_high], HAT))
    parts.append(_line(curve, at, AT))
    parts.append(_line(curve, hat, HAT))
    x = _x(curve.max_k, curve.max_k)
    parts.append(
        f'<line data-k-marker x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" y2="{HEIGHT - BOTTOM}" stroke="{INK}" '
        f'stroke-dasharray="3 3"/>'
        f'<circle data-k-dot="at" cx="{x:.1f}" cy="{_y(at[-1]):.1f}" r="4" fill="{AT}"/>'
        f'<circle data-k-dot="hat" cx="{x:.1f}" cy="{_y(hat[-1]):.1f}" r="4" fill="{HAT}"/>'
    )
    parts.append("</svg>")
    return Markup("".join(parts))
