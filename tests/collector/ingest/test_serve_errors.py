"""`passhat serve` and `passhat keys` refuse what they cannot use in one `passhat: error: ...` line, exit status 2,
before announcing anything: PASSHAT_* settings they cannot read, a port in use or a host that is not one."""

from __future__ import annotations

import os
import pathlib
import socket
import subprocess
import sys

import pytest

PASSHAT = pathlib.Path(sys.executable).with_name("passhat")


def passhat(
    *args: str, env: dict[str, str] | None = None, cwd: pathlib.Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PASSHAT), *args], capture_output=True, text=True, timeout=60, env={**os.environ, **(env or {})}, cwd=cwd
    )


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one line a refused command prints (status 2, no traceback, nothing announced before it)."""
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("passhat: error: "), done.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("PASSHAT_TASK_TYPES", "{bad", "PASSHAT_TASK_TYPES must be a JSON object"),
        ("PASSHAT_TASK_TYPES", "[1]", "PASSHAT_TASK_TYPES must be a JSON object"),
        ("PASSHAT_ROOT_TICKETS", "maybe", "PASSHAT_ROOT_TICKETS must be 1 or 0"),
    ],
)
def test_a_bad_environment_setting_is_one_line(tmp_path: pathlib.Path, name: str, value: str, says: str) -> None:
    for command in (["serve", "--port", "0"], ["keys", "list"]):
        line = one_error_line(passhat(*command, "--data-dir", str(tmp_path), env={name: value}))
        assert says in line


def test_a_data_dir_that_is_a_file_is_one_line(tmp_path: pathlib.Path) -> None:
    (tmp_path / "file").write_text("")
    line = one_error_line(passhat("serve", "--port", "0", env={"PASSHAT_DATA_DIR": str(tmp_path / "file")}))
    assert f"cannot create the folder {tmp_path / 'file'}" in line


def test_a_port_in_use_is_one_line_and_nothing_is_announced(tmp_path: pathlib.Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = one_error_line(passhat("serve", "--port", str(port), "--data-dir", str(tmp_path)))
    assert line == (
        f"passhat: error: port {port} on 127.0.0.1 is in use (another collector?): pick another with --port"
    )


@pytest.mark.parametrize(
    ("host", "says"),
    [("999.1.1.1", "--host '999.1.1.1' is not an address"), ("192.0.2.77", "--host 192.0.2.77 is not an address")],
)
def test_a_host_serve_cannot_listen_on_is_one_line(tmp_path: pathlib.Path, host: str, says: str) -> None:
    line = one_error_line(passhat("serve", "--host", host, "--port", "0", "--data-dir", str(tmp_path)))
    assert says in line


def test_a_sqlite_store_url_naming_a_folder_is_one_line(tmp_path: pathlib.Path) -> None:
    """`--store sqlite:///DIR` (a folder) was SQLAlchemy's 'unable to open database file' traceback."""
    line = one_error_line(passhat("runs", "list", "--store", f"sqlite:///{tmp_path}", "--project", "shop"))
    assert f"names the folder {tmp_path}, not a file" in line and f"sqlite:///{tmp_path / 'passhat.db'}" in line
