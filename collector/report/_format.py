"""How report figures read as text: percentages, intervals, volumes and backend changes (HTML and Markdown)."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from passhat.collector.report._input import BackendChange
from passhat.collector.report._model import Interval

_MARKDOWN = str.maketrans(
    {
        "\\": "\\\\",
        "`": "\\`",
        "*": "\\*",
        "~": "\\~",
        "[": "\\[",
        "]": "\\]",
        "<": "&lt;",
        ">": "&gt;",
        "&": "&amp;",
        "\n": " ",
        "\r": " ",
    }
)
# A quote stays: with `<` and `>` escaped no value can open a tag, so `"` has no attribute to break out of.
# `_` opens or closes emphasis only beside a non-alphanumeric character: `refund_request` stays as it is.
_EDGE_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
# What would start a heading, quote, list or rule where the text begins a line.
_BLOCK_START = re.compile(r"^(\s*)([#>+=-]|\d+[.)])")


def markdown_text(text: object, *, line_start: bool = False) -> str:
    """Text that came from tickets, tools or configuration, as literal Markdown: a value holding `<script>`,
    `"><img ...>`, `[a link](...)` or `*emphasis*` renders as none of them, as Markdown nor as HTML.

    ``line_start``: the text begins a line, where `# ...` or `- ...` would make a heading or a list."""
    escaped = _EDGE_UNDERSCORE.sub(r"\\_", str(text).translate(_MARKDOWN))
    return _BLOCK_START.sub(lambda m: f"{m[1]}\\{m[2]}", escaped) if line_start else escaped


def markdown_cell(text: str) -> str:
    """Already escaped text as one cell of a Markdown table: a pipe never ends the cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def pct(value: float | None) -> str:
    """A probability as a percentage with one decimal; tiny non-zero values keep two significant digits."""
    if value is None:
        return "–"
    if 0.0 < value < 0.001:
        return f"{100.0 * value:.2g}%"
    return f"{100.0 * value:.1f}%"


def ci(interval: Interval | None) -> str:
    """An interval as ``[low, high] ±h`` in percent (h its half-width in points), or "" when there is none."""
    if interval is None:
        return ""
    return f"[{100.0 * interval[0]:.1f}, {100.0 * interval[1]:.1f}] ±{50.0 * (interval[1] - interval[0]):.0f}"


def volume_interval(interval: tuple[float, float] | None) -> str:
    """An interval of tickets a day, or "" when there is none."""
    if interval is None:
        return ""
    return f"[{volume(interval[0])}, {volume(interval[1])}]"


def points(change: float | None) -> str:
    """A change between two probabilities in percentage points, signed."""
    if change is None:
        return "–"
    return f"{100.0 * change:+.1f} pts"


def volume(value: float | None) -> str:
    """Tickets a day: whole numbers from ten up, one decimal below."""
    if value is None:
        return "–"
    return f"{value:,.0f}" if value >= 10 else f"{value:.1f}"


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _key(key: dict[str, Any]) -> str:
    return ", ".join(f"{name}={_value(value)}" for name, value in key.items())


def change_lines(change: BackendChange) -> list[str]:
    """A backend change as short lines: the row it touched, then each changed field."""
    head = f"{change.op} {change.table} ({_key(change.key)})"
    before, after = change.before or {}, change.after or {}
    if change.op.endswith("update"):
        # Only the columns whose value changed: a row's before/after images carry every column.
        fields = sorted(f for f in set(before) | set(after) if before.get(f) != after.get(f))
        return [head, *(f"{f}: {_value(before.get(f))} → {_value(after.get(f))}" for f in fields)]
    if change.op.endswith("insert"):
        return [head, *(f"{f} = {_value(v)}" for f, v in after.items())]
    return [head]


def agent_text(agent: str, version: str) -> str:
    """An agent with its version (what changed from one period to the next), or a dash when unknown."""
    if not agent:
        return "–"
    return f"{agent} {version}" if version else agent


def paired_interval(interval: list[float] | None) -> str:
    """A paired interval of a difference, in signed percentage points."""
    if interval is None:
        return "too few tickets"
    return f"[{100.0 * interval[0]:+.1f}, {100.0 * interval[1]:+.1f}] pts"


def verdict(difference: dict[str, Any]) -> str:
    """What a paired difference says: worse, better, or no clear change."""
    if difference.get("credibly_lower"):
        return "worse"
    return "better" if difference.get("credibly_higher") else "no clear change"


def when(moment: dt.datetime) -> str:
    """A moment as a reader reads it, with its time zone: "30 Nov 2026, 06:05 UTC"."""
    zone = moment.tzname() or "(time zone not recorded)"
    return f"{moment.day} {moment:%b %Y, %H:%M} {zone}"
