"""report.md shows every value from tickets, tools or configuration as text: rendered by a Markdown renderer that
passes raw HTML through (as many wikis and chat tools do), no value becomes an element, a link or emphasis."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import html.parser
from collections import Counter

import pytest
from markdown_it import MarkdownIt

from passhat.collector.report import (
    AlertFired,
    TrialResult,
    UnreplayedReport,
    build_report,
    render_markdown,
)
from passhat.collector.store import NotReplayable
from tests.collector.report.report_synthetic import synthetic_input

SCRIPT = "<script>alert(1)</script>"
IMAGE = '"><img src=x onerror=alert(1)>'
MARKUP = "_under_ *star* [link](javascript:alert(1)) ~~gone~~ `code` &amp;"
HOSTILE = [SCRIPT, IMAGE, MARKUP]


class _Elements(html.parser.HTMLParser):
    """The element names and the text of rendered HTML."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []
        self.feed(markup)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _rendered(markdown: str) -> _Elements:
    renderer = MarkdownIt("commonmark", {"html": True}).enable("table").enable("strikethrough")
    return _Elements(renderer.render(markdown))


def _assert_shown_as_text(markdown: str, plain: str, *values: str) -> None:
    """`markdown` renders to the same elements as `plain` (the same report with harmless values), and shows each
    value as it is."""
    page = _rendered(markdown)
    assert not {"script", "img", "a", "code", "del", "s"} & set(page.tags), sorted(set(page.tags))
    assert Counter(page.tags) == Counter(_rendered(plain).tags)
    text = "".join(page.text)
    for value in values:
        assert value in text, f"{value!r} is not shown as it is"


@functools.cache
def _report_md(value: str) -> str:
    base = synthetic_input(k=3, resamples=30)
    first = base.trials[0]
    assert isinstance(first, TrialResult)
    renamed = [
        dataclasses.replace(t, task_type=value, ticket_id=f"{value}#3" if t.ticket_id == first.ticket_id else
                            t.ticket_id)
        if isinstance(t, TrialResult) and t.task_type == first.task_type else t
        for t in base.trials
    ]  # fmt: skip
    report = build_report(
        dataclasses.replace(
            base,
            trials=renamed,
            traffic=[dataclasses.replace(d, task_type=value) if d.task_type == first.task_type else d
                     for d in base.traffic],
            not_replayable=[NotReplayable(value, value, value, value)],
            alerts=[AlertFired(value, value, value, dt.datetime(2026, 11, 30, 6, 0, tzinfo=dt.UTC))],
            agent=value,
        )
    )  # fmt: skip
    return render_markdown(report)


@pytest.mark.parametrize("value", HOSTILE)
def test_a_ticket_id_and_task_type_with_markup_are_text_in_report_md(value: str) -> None:
    markdown = _report_md(value)
    assert "<script" not in markdown and "<img" not in markdown
    _assert_shown_as_text(markdown, _report_md("plain"), value)


@pytest.mark.parametrize("value", HOSTILE)
def test_the_report_of_a_period_with_nothing_measured_shows_markup_as_text(value: str) -> None:
    report = UnreplayedReport(
        period="2026-W48",
        k=3,
        agent=value,
        why=f"# {value}",
        not_replayable=[NotReplayable(value, value, value, value)],
    )
    markdown = report.markdown()
    assert "<script" not in markdown and "<img" not in markdown
    plain = dataclasses.replace(report, agent="bot", why="none", not_replayable=[NotReplayable("T", "t", "r", "f")])
    # The reason starting with # is no heading of its own.
    _assert_shown_as_text(markdown, plain.markdown(), value, f"# {value}")


def test_plain_names_stay_readable_in_report_md() -> None:
    report = UnreplayedReport(
        period="2026-W48",
        k=3,
        agent="bot",
        why="none could be replayed",
        not_replayable=[NotReplayable("T-1001#2", "refund_request", "no before-image", "")],
    )
    assert "| T-1001#2 | refund_request | no before-image |" in report.markdown()
