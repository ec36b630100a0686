"""docs/quickstart.md "From zero" runs as written: its files saved under their names, its shell blocks run in order
in an empty folder (with `.venv` being this test's environment), from an empty collector to a replayed week.

The only change is the port: the collector listens on a free one (the page's 4318 may be taken on a shared
machine), and PASSHAT_ENDPOINT points the SDK at it."""

from __future__ import annotations

import json
import os
import pathlib
import re
import socket
import subprocess
import sys
from collections.abc import Callable

import pytest

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
BLOCK = re.compile(r"^```(\w+)(?: (\S+))?[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def from_zero() -> str:
    page = (DOCS / "quickstart.md").read_text(encoding="utf-8")
    start = page.index("## From zero")
    end = page.find("\n## ", start + 1)
    return page[start : end if end != -1 else len(page)]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_the_walk_through_names_its_files_and_commands() -> None:
    blocks = BLOCK.findall(from_zero())
    files = {name for language, name, _ in blocks if name}
    assert files == {"clinic_app.py", "send_tickets.py", "clinic_domain.py", "passhat.toml"}
    shell = "\n".join(body for language, name, body in blocks if language == "bash")
    for command in ("passhat keys create", "passhat serve", "passhat config check", "passhat replay --period"):
        assert f".venv/bin/{command}" in shell


def run_from_zero(
    tmp_path: pathlib.Path, saved: Callable[[str, str], str] = lambda name, body: body
) -> subprocess.CompletedProcess[str]:
    """The walk-through in ``tmp_path``: each file of the page saved as ``saved(name, body)`` makes it, each shell
    block run in order; the collector on a free port."""
    port = _free_port()
    (tmp_path / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    script = ["set -euo pipefail", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT"]
    for language, name, body in BLOCK.findall(from_zero()):
        if name:
            (tmp_path / name).write_text(saved(name, body), encoding="utf-8")
        elif language == "bash":
            body = body.replace("127.0.0.1:4318", f"127.0.0.1:{port}")
            script.append(body.replace("serve --data-dir passhat-data", f"serve --data-dir passhat-data --port {port}"))
    env = {**os.environ, "PASSHAT_ENDPOINT": f"http://127.0.0.1:{port}", "PYTHONPATH": str(tmp_path)}
    env.pop("PASSHAT_CONFIG", None)
    return subprocess.run(
        ["bash", "-c", "\n".join(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
    )


def assert_the_week_was_replayed(tmp_path: pathlib.Path, done: subprocess.CompletedProcess[str]) -> None:
    """The walk-through ended well: every core ran trials, the report has the 8 tickets' 32 trials, all passed,
    and no customer's email or phone is in clear in the collector's data."""
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # The configured adapter (its deps a lambda) reaches the worker processes by its name: every core ran trials.
    assert "on one core" not in done.stdout + done.stderr, done.stdout[-3000:] + done.stderr[-3000:]
    [report_json] = tmp_path.glob("reports/*/report.json")
    report = json.loads(report_json.read_text())
    assert report["not_replayable"] == []
    [row] = report["task_types"]
    assert row["task_type"] == "update_phone" and row["tickets_sampled"] == 8 and row["trials"] == 32
    assert row["pass_at_1"] == 1.0  # the desk changes the right patient's phone every time
    stored = b"".join(p.read_bytes() for p in (tmp_path / "passhat-data").iterdir() if p.is_file())
    for number in range(1, 9):  # no customer's email or phone in clear in the collector's data
        assert f"patient{number}@clinic-mail.org".encode() not in stored
        assert f"+44 7700 900{number:03d}".encode() not in stored


@pytest.mark.slow
def test_from_zero_to_a_replayed_week(tmp_path: pathlib.Path) -> None:
    assert_the_week_was_replayed(tmp_path, run_from_zero(tmp_path))
