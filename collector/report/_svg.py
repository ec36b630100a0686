"""Small, dependency-free SVG charts for self-contained HTML pages (reports, the demo)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

LEGEND_ROW = 16  # pixels a legend entry takes above the plot


def line_chart(
    xs: Sequence[float],
    series: Sequence[tuple[str, Sequence[float], str]],
    *,
    width: int = 640,
    height: int = 320,
    x_label: str = "k",
    y_label: str = "",
    dashed_from: float | None = None,
    x_tick_labels: Sequence[str] | None = None,
    marker_at: float | None = None,
    element_id: str | None = None,
    bands: Sequence[tuple[Sequence[float], Sequence[float], str]] = (),
) -> str:
    """An SVG line chart; ``series`` is (name, ys, colour); y is a probability in [0, 1].

    Points with x > ``dashed_from`` are drawn dashed (e.g. extrapolated values). ``x_tick_labels`` names each x
    (e.g. periods) instead of numeric ticks. ``marker_at`` draws a vertical marker with a dot on each series,
    which a page script can move: the root carries the plot's geometry as ``data-*`` attributes, the marker is
    ``.marker`` and the dots are ``.marker-dot`` in series order. ``bands`` are (lows, highs, colour) shaded
    behind the lines (an interval, and beyond the trials the spread of plausible models).

    The legend (``g.legend``) sits above the plot area (``rect.plot-area``), never over the lines.
    """
    # Named ticks (e.g. periods) are wider than numbers: leave room for half a label past the last point.
    # The legend takes one row per series above the plot.
    left, right, bottom = 48, (36 if x_tick_labels is not None else 16), 40
    top = 12 + LEGEND_ROW * len(series)
    plot_w, plot_h = width - left - right, height - top - bottom
    x_min, x_max = min(xs), max(xs)
    span = (x_max - x_min) or 1.0

    def px(x: float) -> float:
        return left + (x - x_min) / span * plot_w

    def py(y: float) -> float:
        return top + (1.0 - y) * plot_h

    geometry = (
        f'data-left="{left}" data-top="{top}" data-plot-width="{plot_w}" data-plot-height="{plot_h}" '
        f'data-x-min="{x_min:g}" data-x-max="{x_max:g}"'
    )
    id_attr = f' id="{escape(element_id)}"' if element_id else ""
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg"{id_attr} viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="{escape(y_label)} against {escape(x_label)}" {geometry}>',
        f'<rect class="plot-area" x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#ccc"/>',
    ]
    legend = "".join(
        f'<rect x="{left}" y="{4 + LEGEND_ROW * index}" width="10" height="10" fill="{colour}"/>'
        f'<text x="{left + 16}" y="{13 + LEGEND_ROW * index}" font-size="12">{escape(name)}</text>'
        for index, (name, _, colour) in enumerate(series)
    )
    parts.append(f'<g class="legend">{legend}</g>')
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{py(tick):.1f}" y2="{py(tick):.1f}" stroke="#eee"/>'
            f'<text x="{left - 6}" y="{py(tick) + 4:.1f}" font-size="11" text-anchor="end">{tick:.0%}</text>'
        )
    if x_tick_labels is not None:
        labelled = list(zip(xs, x_tick_labels, strict=True))
    else:
        labelled = [(x, f"{x:g}") for x in _ticks(x_min, x_max)]
    for x, label in labelled:
        parts.append(
            f'<text x="{px(x):.1f}" y="{top + plot_h + 16}" font-size="11" text-anchor="middle">{escape(label)}</text>'
        )
    parts.append(
        f'<text x="{left + plot_w / 2}" y="{height - 6}" font-size="12" text-anchor="middle">{escape(x_label)}</text>'
    )
    for lows, highs, colour in bands:
        outline = [(x, y) for x, y in zip(xs, highs, strict=True)] + [
            (x, y) for x, y in reversed(list(zip(xs, lows, strict=True)))
        ]
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in outline)
        parts.append(f'<polygon class="band" fill="{colour}" fill-opacity="0.15" stroke="none" points="{path}"/>')
    for _, ys, colour in series:
        solid = [(x, y) for x, y in zip(xs, ys, strict=True) if dashed_from is None or x <= dashed_from]
        dashed = [(x, y) for x, y in zip(xs, ys, strict=True) if dashed_from is not None and x >= dashed_from]
        for points, dash in ((solid, ""), (dashed, ' stroke-dasharray="5 4"')):
            if len(points) > 1:
                path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in points)
                parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2"{dash} points="{path}"/>')
        if len(xs) == 1 or x_tick_labels is not None:
            parts.extend(
                f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{colour}"/>'
                for x, y in zip(xs, ys, strict=True)
            )
    if marker_at is not None:
        parts.append(
            f'<line class="marker" x1="{px(marker_at):.1f}" x2="{px(marker_at):.1f}" y1="{top}" '
            f'y2="{top + plot_h}" stroke="#555" stroke-dasharray="2 3"/>'
        )
        for _, ys, colour in series:
            y_at = _value_at(xs, ys, marker_at)
            parts.append(
                f'<circle class="marker-dot" cx="{px(marker_at):.1f}" cy="{py(y_at):.1f}" r="4.5" fill="{colour}" '
                f'stroke="#fff" stroke-width="1.5"/>'
            )
    parts.append("</svg>")
    return "".join(parts)


def _value_at(xs: Sequence[float], ys: Sequence[float], x: float) -> float:
    """The y of the point whose x is closest to ``x``."""
    index = min(range(len(xs)), key=lambda i: abs(xs[i] - x))
    return ys[index]


def _ticks(low: float, high: float) -> list[float]:
    span = high - low
    step = next((s for s in (1, 2, 5, 10, 20, 50, 100, 200, 500) if span / s <= 10), 1000)
    first = int(low // step) * step
    return [float(t) for t in range(int(first), int(high) + 1, int(step)) if t >= low]
