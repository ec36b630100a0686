"""The collector package's public names, and what importing it costs."""

from __future__ import annotations

import subprocess
import sys

import passhat.collector
import passhat.collector.store


def test_public_names_resolve() -> None:
    # The order of every __all__ is one rule (ruff's RUF022), checked for all packages by tests/test_public_api.py.
    for module in (passhat.collector, passhat.collector.store):
        for name in module.__all__:
            assert getattr(module, name) is not None


def test_importing_the_package_does_not_start_the_web_stack() -> None:
    code = "import sys, passhat.collector; print('fastapi' in sys.modules, 'sqlalchemy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
