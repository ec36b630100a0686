"""The attempts side by side: a strip of one card per attempt, with a stepper and keyboard access.

The strip scrolls sideways on its own (the page never does) and snaps to whole cards; `report.js` wires the
previous/next buttons, the arrow keys on the focused strip, and the position readout ("cards 1–4 of 20"). Without a
script the strip still scrolls and the readout says how many attempts there are.
"""

from __future__ import annotations

from html import escape

from passhat.collector.report._format import change_lines
from passhat.collector.report._model import Attempt, Report

RESPONSE_CHARS = 280


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _card(a: Attempt, index: int, total: int) -> str:
    verdict = "pass" if a.passed else "fail"
    changes = "".join(
        "<li>" + "<br>".join(f"<code>{_e(line)}</code>" for line in change_lines(ch)) + "</li>" for ch in a.changes
    )
    response = a.final_response if len(a.final_response) <= RESPONSE_CHARS else a.final_response[:RESPONSE_CHARS] + "…"
    return (
        f'<div class="attempt {verdict}" role="group" aria-label="attempt {a.attempt}, {index} of {total}: {verdict}">'
        f'<div><strong>attempt {a.attempt}</strong> · <span class="verdict">{verdict.upper()}</span></div>'
        f"<div>{_e(a.signature or '')}{' · ' if a.signature else ''}ended: {_e(a.termination_reason)}</div>"
        f"<div>backend changes:</div><ul>{changes or '<li>none</li>'}</ul>"
        f"<blockquote>{_e(response) or '<em>no final response</em>'}</blockquote></div>"
    )


def attempts_html(report: Report) -> str:
    """The section, or "" when the report shows no ticket attempt by attempt."""
    side = report.least_reliable
    if side is None:
        return ""
    total = len(side.attempts)
    cards = "".join(_card(a, i, total) for i, a in enumerate(side.attempts, start=1))
    passed = sum(a.passed for a in side.attempts)
    title = f"{_e(side.domain)}/{_e(side.task_type)}: {total} attempts side by side"
    return f"""<section id="attempts"><h2>{title}</h2>
<p class="note">{_e(side.why)}. Each attempt is the same ticket replayed against a fresh copy of the backend; the
verdict comes from checks on the backend's final state, not from the closing message.</p>
<div class="stepper" role="group" aria-label="step through the attempts">
<button type="button" id="attempts-prev" aria-controls="attempts-strip" hidden>&larr; previous</button>
<span id="attempts-position" aria-live="polite">{total} attempts ({passed} passed)</span>
<button type="button" id="attempts-next" aria-controls="attempts-strip" hidden>next &rarr;</button></div>
<div class="attempts" id="attempts-strip" tabindex="0" role="region"
aria-label="{total} attempts; the left and right arrow keys step through them">{cards}</div></section>"""
