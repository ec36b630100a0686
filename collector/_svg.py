"""Small, dependency-free SVG charts for self-contained HTML pages (reports, the demo)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape


def line_chart(
    xs: Sequence[float],
    series: Sequence[tuple[str, Sequence[float], str]],
    *,
    width: int = 640,
    height: int = 320,
    x_label: str = "k",
    y_label: str = "",
    dashed_from: float | None = None,
) -> str:
    """An SVG line chart; ``series`` is (name, ys, colour); y is a probability in [0, 1].

    Points with x > ``dashed_from`` are drawn dashed (e.g. extrapolated values).
    """
    left, right, top, bottom = 48, 16, 16, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    x_min, x_max = min(xs), max(xs)
    span = (x_max - x_min) or 1.0

    def px(x: float) -> float:
        return left + (x - x_min) / span * plot_w

    def py(y: float) -> float:
        return top + (1.0 - y) * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="{escape(y_label)} against {escape(x_label)}">',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#ccc"/>',
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{py(tick):.1f}" y2="{py(tick):.1f}" stroke="#eee"/>'
            f'<text x="{left - 6}" y="{py(tick) + 4:.1f}" font-size="11" text-anchor="end">{tick:.0%}</text>'
        )
    for x in _ticks(x_min, x_max):
        parts.append(f'<text x="{px(x):.1f}" y="{top + plot_h + 16}" font-size="11" text-anchor="middle">{x:g}</text>')
    parts.append(
        f'<text x="{left + plot_w / 2}" y="{height - 6}" font-size="12" text-anchor="middle">{escape(x_label)}</text>'
    )
    for index, (name, ys, colour) in enumerate(series):
        solid = [(x, y) for x, y in zip(xs, ys, strict=True) if dashed_from is None or x <= dashed_from]
        dashed = [(x, y) for x, y in zip(xs, ys, strict=True) if dashed_from is not None and x >= dashed_from]
        for points, dash in ((solid, ""), (dashed, ' stroke-dasharray="5 4"')):
            if len(points) > 1:
                path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in points)
                parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2"{dash} points="{path}"/>')
        parts.append(
            f'<rect x="{left + 10}" y="{top + 8 + 16 * index}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{left + 26}" y="{top + 17 + 16 * index}" font-size="12">{escape(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _ticks(low: float, high: float) -> list[float]:
    span = high - low
    step = next((s for s in (1, 2, 5, 10, 20, 50, 100, 200, 500) if span / s <= 10), 1000)
    first = int(low // step) * step
    return [float(t) for t in range(int(first), int(high) + 1, int(step)) if t >= low]
