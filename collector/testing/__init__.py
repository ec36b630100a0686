"""Testing helpers that need the collector: a CI gate on a replay comparison of two agents.

``assert_no_regression(store, project, baseline_run, candidate_run)`` fails a test when the candidate's pass^k
is credibly below the baseline's on the same tickets. This package is also a pytest plugin (the ``pytest11``
entry point ``passhat-collector``): a test may ask for the fixture ``assert_no_regression`` instead of importing
it. Loading the plugin imports nothing heavy; the store and the comparison are imported when the gate runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from passhat.collector.testing._regression import assert_no_regression

__all__ = ["assert_no_regression"]


def _gate() -> Callable[..., Any]:
    """The regression gate, as a fixture: ``def test_gate(assert_no_regression): assert_no_regression(...)``."""
    return assert_no_regression


regression_gate: Any
try:
    import pytest
except ImportError:  # pragma: no cover - the fixture exists only where pytest does
    regression_gate = None
else:
    regression_gate = pytest.fixture(name="assert_no_regression")(_gate)
