"""Tables that read on a phone: every table scrolls inside its own box, and tables with a header stack their rows.

A mailed report is opened on a 390-pixel phone, where a nine-column table cannot fit. `responsive_tables` rewrites
the page's tables (its own markup: every value in it is escaped, so no `<table>` comes from a ticket): each one is
wrapped in a `div.table-wrap` that scrolls sideways if it must (the page itself never does), and each cell of a
table with a header gets its column's name as `data-label`, which the stylesheet shows beside the value when a
narrow screen stacks the rows (`table.stack`).
"""

from __future__ import annotations

import re
from html import escape, unescape

_TABLE = re.compile(r"<table(?P<attrs>[^>]*)>(?P<body>.*?)</table>", re.S)
_TH = re.compile(r"<th\b(?P<attrs>[^>]*)>(?P<label>.*?)</th>", re.S)
_OWN_LABEL = re.compile(r'data-label="(?P<label>[^"]*)"')
_TAG = re.compile(r"<[^>]+>")
_ROW = re.compile(r"(<tr\b[^>]*>)(.*?)(</tr>)", re.S)
_TD = re.compile(r"<td\b")


def _labels(head: str) -> list[str]:
    """The text of each header cell (tags dropped), or the label it names itself with its own `data-label`."""
    labels = []
    for m in _TH.finditer(head):
        own = _OWN_LABEL.search(m["attrs"])
        labels.append(unescape(own["label"] if own else _TAG.sub("", m["label"])).strip())
    return labels


def _label_row(row: str, labels: list[str]) -> str:
    cells = iter(labels)
    return _TD.sub(lambda _: f'<td data-label="{escape(next(cells, ""), quote=True)}"', row)


def _table(match: re.Match[str]) -> str:
    attrs, body = match["attrs"], match["body"]
    if "<thead" not in body:
        return f'<div class="table-wrap"><table{attrs}>{body}</table></div>'
    head, _, rows = body.partition("</thead>")
    labels = _labels(head)
    rows = _ROW.sub(lambda m: m[1] + _label_row(m[2], labels) + m[3], rows)
    if 'class="' in attrs:
        attrs = attrs.replace('class="', 'class="stack ', 1)
    else:
        attrs += ' class="stack"'
    return f'<div class="table-wrap"><table{attrs}>{head}</thead>{rows}</table></div>'


def responsive_tables(html: str) -> str:
    """The page's tables wrapped and labelled (see the module's docstring)."""
    return _TABLE.sub(_table, html)
