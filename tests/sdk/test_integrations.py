"""What every instrument_* shares: a missing library names the pip install to run; the handle undoes."""

from __future__ import annotations

import sys

import pytest

import passhat
from passhat.testing import Capture


@pytest.mark.parametrize(
    ("module", "call", "extra"),
    [
        ("anthropic", lambda: passhat.instrument_anthropic(), "anthropic"),
        ("mcp", lambda: passhat.instrument_mcp(), "mcp"),
        ("sqlalchemy", lambda: passhat.instrument_sqlalchemy(None), "sqlalchemy"),
    ],
)
def test_a_missing_library_names_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, module: str, call: object, extra: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # what Python does for a package that cannot be imported
    with pytest.raises(passhat.MissingExtraError, match=rf"pip install 'passhat\[{extra}\]'"):
        call()  # type: ignore[operator]


def test_instrumenting_twice_without_undoing_is_refused_for_anthropic() -> None:
    with passhat.instrument_anthropic(), pytest.raises(RuntimeError, match="already active"):
        passhat.instrument_anthropic()


def test_a_handle_reports_whether_it_is_active() -> None:
    handle = passhat.instrument_anthropic()
    assert handle.active and "active" in repr(handle)
    handle.uninstrument()
    assert not handle.active and "removed" in repr(handle)


def test_the_pytest_plugin_is_registered_through_the_entry_point(pytestconfig: pytest.Config) -> None:
    assert pytestconfig.pluginmanager.has_plugin("passhat")


def test_the_fixture_gives_deterministic_ids_and_clock(passhat_capture: Capture) -> None:
    with passhat.ticket("T-1", task_type="refund"):
        pass
    (span,) = passhat_capture.spans
    assert span.context.trace_id == 1 and span.context.span_id == 1
    assert span.start_time == 1_700_000_000_000_000_000
    assert span.end_time == span.start_time + 1_000_000
