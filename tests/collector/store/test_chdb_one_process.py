"""Only one process can open an embedded ClickHouse (`chdb://`) data directory: a second one (`passhat keys`
while `passhat serve` runs, `serve --workers 2`) is told so in one line, exit status 2, without chDB's raw
`DB::Exception` line."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest

PASSHAT = pathlib.Path(sys.executable).with_name("passhat")


@pytest.fixture
def held(tmp_path: pathlib.Path) -> Iterator[tuple[pathlib.Path, int]]:
    """A chdb data directory another process (a real one, as the collector) has open; its pid."""
    data = tmp_path / "chdb"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys
                from passhat.collector.store import open_store
                store = open_store("chdb://{data}")
                print("ready", flush=True)
                sys.stdin.read()
                store.close()
                """
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        yield data, holder.pid
    finally:
        holder.communicate(timeout=60)


def _passhat(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(PASSHAT), *args], capture_output=True, text=True, timeout=120, env=dict(os.environ))


def test_a_data_directory_another_process_has_open_is_one_line(held: tuple[pathlib.Path, int]) -> None:
    data, pid = held
    for command in (["keys", "list"], ["keys", "create", "--project", "shop"]):
        done = _passhat(*command, "--store", f"chdb://{data}")
        assert done.returncode == 2, done.stderr
        assert done.stderr == (
            f"passhat: error: the embedded ClickHouse data directory {data} is in use by another process (pid {pid}): "
            "only one process can open it at a time: stop the collector, or use the collector's HTTP API or a "
            "ClickHouse server (http://host:8123) that several processes can share\n"
        )


def test_serve_refuses_several_workers_on_an_embedded_store(tmp_path: pathlib.Path) -> None:
    done = _passhat("serve", "--workers", "2", "--port", "0", "--store", f"chdb://{tmp_path / 'chdb'}")
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"passhat: error: --workers 2 with an embedded ClickHouse store (chdb://{tmp_path / 'chdb'}): only one "
        "process can open its data directory; serve it with one worker, or use a ClickHouse server "
        "(http://host:8123) that several workers can share\n"
    )
    assert not (tmp_path / "chdb").exists()  # refused before anything was opened
