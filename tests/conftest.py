"""Suite-wide settings."""

from __future__ import annotations

import os
import pathlib

import pytest
from hypothesis import settings

# The machines running the suite are shared and noisy: property tests check behaviour, not speed.
settings.register_profile("passhat", deadline=None, derandomize=False)
settings.load_profile("passhat")

# Pseudonyms need a key; without one the SDK would create a key file in the home folder of whoever runs the
# suite. One fixed test key (inherited by the subprocesses tests start) keeps the suite off the home folder.
os.environ.setdefault("PASSHAT_PSEUDONYM_KEY", "passhat-test-suite-pseudonym-key")


@pytest.fixture(scope="session")
def chdb_dir(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """The one embedded-ClickHouse data path of this test process (chdb hosts one path per process).

    Every test that opens a `chdb://` store uses this path, each with a DATABASE of its own.
    """
    return tmp_path_factory.mktemp("chdb")


@pytest.fixture(autouse=True)
def _restore_opentelemetry_global_provider() -> object:
    """Undo a test's `configure(set_global=True)` (a docs snippet runs in this process, say).

    OpenTelemetry lets the global provider be set once per process; without this, every later test in the same
    process (whichever order the tests run in, and on whichever pytest-xdist worker) would see library spans
    (MCP's own, a framework's) routed into a provider an earlier test left behind.
    """
    from opentelemetry import trace

    provider, once = trace._TRACER_PROVIDER, trace._TRACER_PROVIDER_SET_ONCE._done  # type: ignore[attr-defined]
    yield
    trace._TRACER_PROVIDER = provider  # type: ignore[attr-defined]
    trace._TRACER_PROVIDER_SET_ONCE._done = once  # type: ignore[attr-defined]
