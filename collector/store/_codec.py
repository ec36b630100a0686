"""What both backends encode the same way: JSON text, administrative times, UTC days, and column lists.

Each backend keeps a `_rows` module with the same helper names, one per kind of row:
- `<ROW>_COLUMNS`: the table's columns, derived from the row dataclass with `columns(...)`;
- `<row>_values(project, row)`: the values of one row to insert, in `<ROW>_COLUMNS` order;
- `<row>_from_row(row)`: a stored row back as the dataclass.

JSON is read back differently on purpose: the SQL store uses orjson (fast; an integer past 64 bits comes back as
a float), the ClickHouse store the standard library (exact integers of any size).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
from collections.abc import Mapping
from typing import Any

import orjson

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()
_NS_PER_DAY = 86_400 * 10**9
_orjson_dumps = orjson.dumps


def dumps(value: Any) -> str:
    """Compact JSON text: orjson (the ingest path serialises several values per span), or the standard library
    for what orjson refuses (integers past 64 bits, non-string keys; anything else unknown becomes its text)."""
    try:
        return _orjson_dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def dumps_opt(value: Any) -> str | None:
    """`dumps`, keeping None as None (SQL NULL)."""
    return None if value is None else dumps(value)


def to_us(moment: dt.datetime) -> int:
    """Microseconds since the epoch, exactly (a naive datetime is taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_us(micros: int) -> dt.datetime:
    """Microseconds since the epoch as an aware UTC datetime (exact, whatever the server's zone)."""
    return _EPOCH + dt.timedelta(microseconds=int(micros))


def from_us_opt(micros: int | None) -> dt.datetime | None:
    return None if micros is None else from_us(micros)


def utc_day(time_ns: int) -> dt.date:
    """The UTC calendar day of a nanosecond timestamp (integer arithmetic: exact at midnight)."""
    return _day(time_ns // _NS_PER_DAY)


@functools.lru_cache(maxsize=1024)
def _day(days_since_epoch: int) -> dt.date:
    # Cached: ingest asks once per ticket and span, and a batch's spans fall on a handful of days.
    return dt.date.fromordinal(_EPOCH_ORDINAL + days_since_epoch)


def fields_of(row_type: type[Any], *, without: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The field names of a row dataclass, in declaration order, leaving out `without`."""
    return tuple(f.name for f in dataclasses.fields(row_type) if f.name not in without)


def columns(row_type: type[Any], renamed: Mapping[str, str], *, without: tuple[str, ...] = ()) -> tuple[str, ...]:
    """A table's columns for a row dataclass: its fields in order, `renamed` where the column is spelled
    differently."""
    return tuple(renamed.get(name, name) for name in fields_of(row_type, without=without))
