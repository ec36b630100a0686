"""Testing helpers: passhat's spans in memory with deterministic ids and clock, a pytest fixture, a receiver.

``with passhat.testing.capture() as spans: ...`` installs a global passhat instance that records into memory
(content capture on, redaction on) and restores the previous one afterwards. Under pytest the fixture
``passhat_capture`` does the same for one test (this package is the ``pytest11`` entry point).
The CI gate on a replay comparison of two agents needs the collector: it is
``passhat.collector.testing.assert_no_regression`` (also the pytest fixture ``assert_no_regression``).
"""

from typing import Any

from passhat.testing._fixture import passhat_capture
from passhat.testing._memory import Capture, DeterministicIds, StepClock, capture
from passhat.testing._receiver import OtlpReceiver, ReceivedRequest, ReceivedSpan, decode_request

__all__ = [
    "Capture",
    "DeterministicIds",
    "OtlpReceiver",
    "ReceivedRequest",
    "ReceivedSpan",
    "StepClock",
    "capture",
    "decode_request",
    "passhat_capture",
]


def __getattr__(name: str) -> Any:
    if name == "assert_no_regression":
        raise AttributeError(
            "passhat.testing.assert_no_regression needs the collector and lives there: "
            "from passhat.collector.testing import assert_no_regression (pip install 'passhat[collector]'), "
            "or ask pytest for the fixture assert_no_regression"
        )
    raise AttributeError(f"module 'passhat.testing' has no attribute {name!r}")
