"""Testing helpers: passhat's spans in memory with deterministic ids and clock, a pytest fixture, a receiver.

``with passhat.testing.capture() as spans: ...`` installs a global passhat instance that records into memory
(content capture on, redaction on) and restores the previous one afterwards. Under pytest the fixture
``passhat_capture`` does the same for one test (this package is the ``pytest11`` entry point).
``assert_no_regression`` gates CI on a replay comparison of two agents (it needs the collector installed).
"""

from passhat.testing._fixture import passhat_capture
from passhat.testing._memory import Capture, DeterministicIds, StepClock, capture
from passhat.testing._receiver import OtlpReceiver, ReceivedRequest, ReceivedSpan, decode_request
from passhat.testing._regression import assert_no_regression

__all__ = [
    "Capture",
    "DeterministicIds",
    "OtlpReceiver",
    "ReceivedRequest",
    "ReceivedSpan",
    "StepClock",
    "assert_no_regression",
    "capture",
    "decode_request",
    "passhat_capture",
]
