"""Value comparison: the same value in another spelling is equal; a different value never is."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from passhat.checks import values_equal


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (Decimal("45.50"), 45.5),
        (Decimal("45.50"), "45.50"),
        (Decimal("45.50"), "45.5"),
        (45, 45.0),
        (0.1, Decimal("0.1")),
        (True, 1),
        (" 12 ", 12),
        (dt.datetime(2026, 11, 1, 10, 30), "2026-11-01T10:30:00"),
        (dt.datetime(2026, 11, 1, 10, 30), "2026-11-01 10:30:00.000000"),
        (dt.datetime(2026, 11, 1, 10, 30, tzinfo=dt.UTC), "2026-11-01T10:30:00Z"),
        (
            dt.datetime(2026, 11, 1, 10, 30),
            dt.datetime(2026, 11, 1, 11, 30, tzinfo=dt.timezone(dt.timedelta(hours=1))),
        ),
        (dt.date(2026, 11, 1), "2026-11-01"),
        ({"a": 1, "b": [1, 2]}, '{"b": [1, 2.0], "a": 1}'),
        ('[{"x": "1.50"}]', [{"x": "1.50"}]),
        ({"amount": Decimal("3.10")}, {"amount": 3.1}),
        (None, None),
        (b"\x00\x01", memoryview(b"\x00\x01")),
    ],
)
def test_same_value_in_another_spelling_is_equal(left: Any, right: Any) -> None:
    assert values_equal(left, right)
    assert values_equal(right, left)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (Decimal("45.50"), Decimal("45.51")),
        (None, 0),
        (None, ""),
        (None, "NULL"),
        ("refunded", "Refunded"),
        ("45.50", "45.5"),  # two strings are compared as text: a TEXT column keeps its spelling
        ("abc", 0),
        (dt.datetime(2026, 11, 1, 10, 30), "2026-11-01T10:31:00"),
        (dt.datetime(2026, 11, 1), "not a date"),
        ({"a": 1}, {"a": 1, "b": 2}),
        ({"a": 1}, "{not json"),
        ([1, 2], [2, 1]),
        (float("nan"), float("nan")),
        (1, "1 apple"),
    ],
)
def test_different_values_are_not_equal(left: Any, right: Any) -> None:
    assert not values_equal(left, right)
    assert not values_equal(right, left)


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.decimals(allow_nan=False, allow_infinity=False, places=2, min_value=-1000, max_value=1000),
    st.text(max_size=6),
    st.sampled_from(["45.50", "45.5", "2026-11-01", "2026-11-01T10:30:00", '{"a": 1}', "[1]"]),
    st.datetimes(min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2030, 1, 1)),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)


@given(left=_VALUES, right=_VALUES)
def test_equality_is_symmetric(left: Any, right: Any) -> None:
    assert values_equal(left, right) == values_equal(right, left)


@given(value=_VALUES)
def test_every_value_equals_itself(value: Any) -> None:
    assert values_equal(value, value)
