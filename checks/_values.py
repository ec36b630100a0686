"""Value comparison that means what a person means by "the same value" in a backend row.

A refund amount stored as ``Decimal("45.50")`` equals an expected ``45.5`` and the string ``"45.50"``; a
timestamp read back as a ``datetime`` equals its ISO string; a JSON column equals the same document whether
it arrives as text or as a parsed object; ``NULL`` equals only ``NULL``. Strings that are not numbers, times
or JSON compare exactly: ``"Refunded"`` is not ``"refunded"`` in a status column.

Lists compare in order; ``unordered([...])`` says the order does not matter (a set of item ids stored in
whatever order the backend chose).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

_NUMERIC_TEXT = re.compile(r"\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")


@dataclass(frozen=True)
class Unordered:
    """An expected list whose order does not matter: it equals any list with the same items, each as often."""

    items: tuple[Any, ...]

    def __repr__(self) -> str:
        return f"unordered({list(self.items)!r})"


def unordered(items: Iterable[Any]) -> Unordered:
    """Expect these items in any order (a JSON list held as text matches too)."""
    if isinstance(items, str | bytes | Mapping):
        raise TypeError(f"unordered() takes a list of items, got {items!r}")
    return Unordered(tuple(items.items if isinstance(items, Unordered) else items))


def _as_decimal(value: Any) -> Decimal | None:
    """The value as a Decimal when it is a number or a plain numeric string, else None."""
    if isinstance(value, bool):
        return Decimal(int(value))
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        # str() gives the shortest repr that round-trips, so 0.1 compares equal to Decimal("0.1").
        return Decimal(str(value))
    if isinstance(value, Decimal):
        return value if value.is_finite() else None
    if isinstance(value, str) and _NUMERIC_TEXT.fullmatch(value):
        try:
            return Decimal(value.strip())
        except InvalidOperation:  # pragma: no cover - the pattern only admits valid literals
            return None
    return None


def _as_datetime(value: Any) -> _dt.datetime | None:
    if isinstance(value, _dt.datetime):
        return value
    if isinstance(value, _dt.date):
        return _dt.datetime(value.year, value.month, value.day)
    if isinstance(value, str) and (_ISO_DATETIME.match(value.strip()) or _ISO_DATE.fullmatch(value.strip())):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            return _dt.datetime.fromisoformat(text)
        except ValueError:
            return None
    return None


def _same_instant(left: _dt.datetime, right: _dt.datetime) -> bool:
    # A naive timestamp is read as UTC: backends commonly store UTC without an offset.
    if (left.tzinfo is None) != (right.tzinfo is None):
        left = left if left.tzinfo else left.replace(tzinfo=_dt.UTC)
        right = right if right.tzinfo else right.replace(tzinfo=_dt.UTC)
    return left == right


def _as_json(value: Any) -> Any:
    """A JSON document held in a string, parsed; None when the string is not an object or array."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return None


def values_equal(left: Any, right: Any) -> bool:
    """Whether two column values are the same value (numbers, money, times, JSON and NULL handled)."""
    if left is None or right is None:
        return left is None and right is None
    if type(left) is type(right) and left == right:
        return True
    if type(left) is type(right) and type(left) in (str, int, float):
        return False  # two texts, or two numbers of one type, that differ (the rules below agree; grading's hot path)
    if isinstance(left, bytes | bytearray | memoryview) and isinstance(right, bytes | bytearray | memoryview):
        return bytes(left) == bytes(right)
    if isinstance(left, Unordered) or isinstance(right, Unordered):
        return _same_items(left, right)
    if isinstance(left, Mapping) or isinstance(right, Mapping):
        return _mappings_equal(left, right)
    if _is_sequence(left) or _is_sequence(right):
        return _sequences_equal(left, right)
    left_number, right_number = _as_decimal(left), _as_decimal(right)
    if left_number is not None and right_number is not None:
        # Numbers compare by value; a numeric string only matches a number, never another string spelling.
        if isinstance(left, str) and isinstance(right, str):
            return left == right
        return left_number == right_number
    if isinstance(left, (_dt.date, _dt.datetime)) or isinstance(right, (_dt.date, _dt.datetime)):
        left_time, right_time = _as_datetime(left), _as_datetime(right)
        if left_time is None or right_time is None:
            return False
        return _same_instant(left_time, right_time)
    return bool(left == right)


def _is_sequence(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray | memoryview)


def _mappings_equal(left: Any, right: Any) -> bool:
    left = _as_json(left) if isinstance(left, str) else left
    right = _as_json(right) if isinstance(right, str) else right
    if not isinstance(left, Mapping) or not isinstance(right, Mapping):
        return False
    if set(left) != set(right):
        return False
    return all(values_equal(left[name], right[name]) for name in left)


def _sequences_equal(left: Any, right: Any) -> bool:
    left = _as_json(left) if isinstance(left, str) else left
    right = _as_json(right) if isinstance(right, str) else right
    if not _is_sequence(left) or not _is_sequence(right):
        return False
    if len(left) != len(right):
        return False
    return all(values_equal(a, b) for a, b in zip(left, right, strict=True))


def _same_items(left: Any, right: Any) -> bool:
    """Whether two lists hold the same items, each as often, in any order."""
    left = list(left.items) if isinstance(left, Unordered) else _as_json(left) if isinstance(left, str) else left
    right = list(right.items) if isinstance(right, Unordered) else _as_json(right) if isinstance(right, str) else right
    if not _is_sequence(left) or not _is_sequence(right) or len(left) != len(right):
        return False
    remaining = list(right)
    for item in left:
        index = next((i for i, other in enumerate(remaining) if values_equal(item, other)), None)
        if index is None:
            return False
        remaining.pop(index)
    return True


def display(value: Any) -> str:
    """A short, readable rendering of a column value for a diagnostic sentence."""
    if value is None:
        return "NULL"
    if isinstance(value, Unordered):
        return f"{display(list(value.items))} in any order"
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, _dt.datetime | _dt.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def to_jsonable(value: Any) -> Any:
    """A JSON-compatible form of a column value (Decimal and times as strings, bytes as hex)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, _dt.datetime | _dt.date | _dt.time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, Unordered):
        return [to_jsonable(item) for item in value.items]
    if isinstance(value, Mapping):
        return {str(name): to_jsonable(item) for name, item in value.items()}
    if isinstance(value, Sequence):
        return [to_jsonable(item) for item in value]
    return str(value)


def describe_key(key: Mapping[str, Any]) -> str:
    """A primary key as ``id=7`` or ``order_id='A', line=2``."""
    return ", ".join(f"{name}={display(value)}" for name, value in key.items())
