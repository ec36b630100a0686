"""The ``passhat_capture`` pytest fixture (registered through the ``pytest11`` entry point).

Where pytest is not installed the name is ``None``, so ``import passhat.testing`` works without it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from passhat.testing._memory import Capture, capture


def _passhat_capture() -> Iterator[Capture]:
    """A test's passhat spans, in memory, with deterministic ids and clock (see :func:`capture`)."""
    with capture() as captured:
        yield captured


passhat_capture: Any
try:
    import pytest
except ImportError:  # pragma: no cover - the fixture exists only where pytest does
    passhat_capture = None
else:
    passhat_capture = pytest.fixture(name="passhat_capture")(_passhat_capture)
