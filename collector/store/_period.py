"""Reporting periods: ISO weeks (``2026-W48``) and single days (``2026-11-23``), as half-open UTC ranges."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

_WEEK = re.compile(r"^(?P<year>\d{4})-W(?P<week>\d{1,2})$")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class Period:
    """A named span of days: ``start`` inclusive, ``end`` exclusive, both UTC dates."""

    name: str
    start: dt.date
    end: dt.date

    @property
    def days(self) -> int:
        return (self.end - self.start).days

    def contains(self, moment: dt.datetime | dt.date) -> bool:
        day = moment.astimezone(dt.UTC).date() if isinstance(moment, dt.datetime) else moment
        return self.start <= day < self.end

    def start_datetime(self) -> dt.datetime:
        return dt.datetime.combine(self.start, dt.time(), tzinfo=dt.UTC)

    def end_datetime(self) -> dt.datetime:
        return dt.datetime.combine(self.end, dt.time(), tzinfo=dt.UTC)

    def previous(self, count: int = 1) -> Period:
        """The period of the same kind ``count`` steps earlier."""
        if self.days == 7:
            start = self.start - dt.timedelta(days=7 * count)
            year, week, _ = start.isocalendar()
            return Period(f"{year}-W{week:02d}", start, start + dt.timedelta(days=7))
        start = self.start - dt.timedelta(days=self.days * count)
        return Period(start.isoformat(), start, start + dt.timedelta(days=self.days))


def parse_period(text: str) -> Period:
    """Parse ``2026-W48`` (an ISO week, Monday to Sunday) or ``2026-11-23`` (one day)."""
    value = text.strip()
    week = _WEEK.match(value)
    if week:
        year, number = int(week["year"]), int(week["week"])
        try:
            start = dt.date.fromisocalendar(year, number, 1)
        except ValueError:
            raise ValueError(f"{text!r} is not a week of {year}: ISO weeks run from W01 to W52 or W53") from None
        return Period(f"{year}-W{number:02d}", start, start + dt.timedelta(days=7))
    if _DAY.match(value):
        try:
            day = dt.date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{text!r} is not a calendar date") from None
        return Period(day.isoformat(), day, day + dt.timedelta(days=1))
    raise ValueError(f"cannot read the period {text!r}: write an ISO week like 2026-W48 or a day like 2026-11-23")


def week_of(moment: dt.datetime | dt.date) -> Period:
    """The ISO week containing a moment (UTC)."""
    day = moment.astimezone(dt.UTC).date() if isinstance(moment, dt.datetime) else moment
    year, week, _ = day.isocalendar()
    return parse_period(f"{year}-W{week:02d}")
