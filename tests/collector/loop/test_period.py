"""Reporting periods."""

from __future__ import annotations

import datetime as dt

import pytest

from passhat.collector.store._period import parse_period, week_of


def test_iso_week_runs_monday_to_monday() -> None:
    period = parse_period("2026-W48")
    assert period.start == dt.date(2026, 11, 23) and period.end == dt.date(2026, 11, 30)
    assert period.contains(dt.datetime(2026, 11, 29, 23, 59, tzinfo=dt.UTC))
    assert not period.contains(dt.date(2026, 11, 30))


def test_previous_week_crosses_years() -> None:
    assert parse_period("2026-W01").previous().name == "2025-W52"
    assert parse_period("2026-W48").previous(2).name == "2026-W46"


def test_a_day_is_a_period() -> None:
    period = parse_period("2026-11-23")
    assert period.days == 1 and period.previous().name == "2026-11-22"


def test_week_of_a_moment() -> None:
    assert week_of(dt.datetime(2026, 11, 29, 12, tzinfo=dt.UTC)).name == "2026-W48"


@pytest.mark.parametrize(
    ("text", "message"), [("2026-W60", "W52 or W53"), ("last week", "ISO week"), ("2026-02-30", "date")]
)
def test_bad_periods_are_named(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_period(text)
