"""passhat's spans in memory, with deterministic ids and clock.

``with passhat.testing.capture() as spans: ...`` installs a global passhat instance that records into memory
(content capture on, redaction on) and restores the previous one afterwards. Under pytest the fixture
``passhat_capture`` does the same for one test (registered through the ``pytest11`` entry point).
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.util.types import Attributes

from passhat import semconv
from passhat._runtime import Passhat, configure, set_current


class DeterministicIds(IdGenerator):
    """Trace and span ids counting up from 1, so the same test makes the same ids."""

    def __init__(self) -> None:
        self._traces = itertools.count(1)
        self._spans = itertools.count(1)
        self._lock = threading.Lock()

    def generate_trace_id(self) -> int:
        with self._lock:
            return next(self._traces)

    def generate_span_id(self) -> int:
        with self._lock:
            return next(self._spans)


class StepClock:
    """A clock for passhat's spans and events that advances ``step_ns`` on every reading."""

    def __init__(self, start_ns: int = 1_700_000_000_000_000_000, step_ns: int = 1_000_000) -> None:
        self._next = start_ns
        self.step_ns = step_ns
        self._lock = threading.Lock()

    def __call__(self) -> int:
        with self._lock:
            value = self._next
            self._next += self.step_ns
            return value


class Capture:
    """The finished spans of one capture, with lookups by name, operation and event."""

    def __init__(self, passhat: Passhat, exporter: InMemorySpanExporter) -> None:
        self.passhat = passhat
        self.exporter = exporter

    @property
    def spans(self) -> list[ReadableSpan]:
        """Every finished span, in the order they ended."""
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        """The finished spans called exactly ``name``."""
        return [span for span in self.spans if span.name == name]

    def one(self, name: str) -> ReadableSpan:
        """The single finished span called ``name``; fails listing the names seen when not exactly one."""
        found = self.named(name)
        if len(found) != 1:
            raise AssertionError(f"expected one span {name!r}, found {len(found)} among {[s.name for s in self.spans]}")
        return found[0]

    def operation(self, operation: str) -> list[ReadableSpan]:
        """Spans whose ``gen_ai.operation.name`` is ``operation`` (``invoke_agent``, ``execute_tool``…)."""
        return [span for span in self.spans if (span.attributes or {}).get(semconv.OPERATION_NAME) == operation]

    def tickets(self) -> list[ReadableSpan]:
        """The ticket root spans."""
        return self.operation(semconv.OP_INVOKE_AGENT)

    def tools(self) -> list[ReadableSpan]:
        """The tool spans."""
        return self.operation(semconv.OP_EXECUTE_TOOL)

    def events(self, name: str) -> list[Attributes]:
        """The attributes of every event called ``name``, across all spans, in span order."""
        return [event.attributes for span in self.spans for event in span.events if event.name == name]

    def state_writes(self) -> list[dict[str, Any]]:
        """Every ``passhat.state_write`` event with its JSON attributes decoded."""
        return [_decode(attributes) for attributes in self.events(semconv.EVENT_STATE_WRITE)]

    def state_reads(self) -> list[dict[str, Any]]:
        """Every ``passhat.state_read`` event with its JSON attributes decoded."""
        return [_decode(attributes) for attributes in self.events(semconv.EVENT_STATE_READ)]

    def clear(self) -> None:
        """Forget the spans captured so far."""
        self.exporter.clear()


def _decode(attributes: Attributes) -> dict[str, Any]:
    decoded: dict[str, Any] = {}
    for key, value in (attributes or {}).items():
        short = key.rsplit(".", 1)[-1]
        if isinstance(value, str) and short in {"key", "before", "after", "row"}:
            decoded[short] = json.loads(value)
        elif isinstance(value, tuple):
            decoded[short] = list(value)
        else:
            decoded[short] = value
    return decoded


@contextmanager
def capture(*, capture_content: bool = True, deterministic: bool = True, **options: Any) -> Iterator[Capture]:
    """Record passhat's spans in memory while the block runs (the global instance is swapped and restored).

    ``options`` go to :func:`passhat.configure` (e.g. ``redact_patterns``, ``sample_rate``, ``source``).
    With ``deterministic`` the ids count from 1 and passhat's timestamps advance 1 ms per reading.
    """
    exporter = InMemorySpanExporter()
    previous = set_current(None)
    extra: dict[str, Any] = {"id_generator": DeterministicIds(), "clock": StepClock()} if deterministic else {}
    instance = configure(
        send=False,
        capture_content=capture_content,
        span_processors=[SimpleSpanProcessor(exporter)],
        make_global=False,
        **extra,
        **options,
    )
    set_current(instance)
    try:
        yield Capture(instance, exporter)
    finally:
        set_current(previous)
        instance.shutdown()
