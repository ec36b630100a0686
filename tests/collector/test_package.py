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


def test_the_collector_extra_holds_everything_the_sandbox_needs() -> None:
    """`pip install 'passhat[collector]'` is the whole command line: `passhat replay`, `grade`, `bench` and
    `sandbox serve` run the sandbox, so its extra's requirements are the collector's too."""
    import pathlib
    import tomllib

    pyproject = tomllib.loads((pathlib.Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    extras = pyproject["project"]["optional-dependencies"]
    assert set(extras["sandbox"]) <= set(extras["collector"])


def test_a_command_reaching_a_missing_package_names_it_without_a_traceback(tmp_path: object) -> None:
    code = (
        "import sys; sys.modules['mcp'] = None\n"  # as if mcp were not installed
        "from passhat.collector.cli import main\n"
        "sys.argv = ['passhat', 'bench', '--domain', 'retail']\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.startswith("passhat: error: ") and "Traceback" not in done.stderr
    assert "mcp" in done.stderr and "pip install 'passhat[collector]'" in done.stderr
