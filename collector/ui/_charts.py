"""Inline SVG for the UI's pages: a trend sparkline, daily traffic bars, and a figure over periods with intervals.

Small and dependency-free. Not the report's `line_chart`: that draws curves against k; these draw the UI's
smaller shapes (whiskers for intervals, bars), and `report` is a sibling the UI may not import.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from markupsafe import Markup

INK, ACCENT, MUTED = "#1f2933", "#1a5fb4", "#6b7785"


def sparkline(values: Sequence[float | None], *, label: str, width: int = 120, height: int = 28) -> Markup:
    """A line of probabilities (0..1) over periods; gaps where a period has no figure."""
    points = [(i, v) for i, v in enumerate(values) if v is not None]
    title = f"<title>{escape(label)}</title>"
    if not points:
        return Markup(f'<svg class="spark" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}">'
                      f"{title}</svg>")  # fmt: skip
    step = (width - 6) / max(len(values) - 1, 1)

    def xy(i: int, v: float) -> str:
        return f"{3 + i * step:.1f},{height - 3 - v * (height - 6):.1f}"

    line = " ".join(xy(i, v) for i, v in points)
    last_i, last_v = points[-1]
    return Markup(
        f'<svg class="spark" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape(label)}">{title}'
        f'<line x1="0" x2="{width}" y1="{height - 3}" y2="{height - 3}" stroke="#d0d5db"/>'
        f'<polyline points="{line}" fill="none" stroke="{ACCENT}" stroke-width="1.6"/>'
        f'<circle cx="{xy(last_i, last_v).split(",")[0]}" cy="{xy(last_i, last_v).split(",")[1]}" r="2.4" '
        f'fill="{ACCENT}"/></svg>'
    )


def bars(values: Sequence[int], *, label: str, width: int = 120, height: int = 28) -> Markup:
    """Counts (tickets per day) as bars, the tallest at full height."""
    top = max(values, default=0) or 1
    step = width / max(len(values), 1)
    rects = "".join(
        f'<rect x="{i * step + 0.5:.1f}" y="{height - v / top * (height - 2):.1f}" width="{max(step - 1, 1):.1f}" '
        f'height="{v / top * (height - 2):.1f}" fill="{MUTED}"/>'
        for i, v in enumerate(values)
    )
    return Markup(
        f'<svg class="spark" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape(label)}"><title>{escape(label)}</title>{rects}</svg>'
    )


def interval_chart(
    points: Sequence[tuple[str, float | None, float | None, float | None]],
    *,
    label: str,
    width: int = 640,
    height: int = 220,
) -> Markup:
    """A figure per period (label, value, low, high) with its interval as a whisker; y is a probability."""
    left, right, top, bottom = 44, 16, 12, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    step = plot_w / max(len(points), 1)

    def py(y: float) -> float:
        return top + (1.0 - y) * plot_h

    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}">'
        f"<title>{escape(label)}</title>"
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = py(tick)
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e3e7eb"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11" fill="{INK}">{tick:.0%}</text>'
        )
    line: list[str] = []
    for i, (name, value, low, high) in enumerate(points):
        x = left + (i + 0.5) * step
        parts.append(
            f'<text x="{x:.1f}" y="{height - 12}" text-anchor="middle" font-size="11" fill="{INK}">'
            f"{escape(name)}</text>"
        )
        if value is None:
            continue
        if low is not None and high is not None:
            parts.append(
                f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{py(low):.1f}" y2="{py(high):.1f}" stroke="{MUTED}" '
                f'stroke-width="2"/>'
            )
        parts.append(
            f'<circle cx="{x:.1f}" cy="{py(value):.1f}" r="4" fill="{ACCENT}"><title>{escape(name)}: '
            f"{value:.1%}{'' if low is None or high is None else f' ({low:.1%}–{high:.1%})'}</title></circle>"
        )
        line.append(f"{x:.1f},{py(value):.1f}")
    if len(line) > 1:
        parts.append(f'<polyline points="{" ".join(line)}" fill="none" stroke="{ACCENT}" stroke-width="1.5"/>')
    parts.append("</svg>")
    return Markup("".join(parts))
