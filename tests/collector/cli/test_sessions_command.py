"""`passhat sandbox serve retail --sessions`: the real command, a plain HTTP client, the trial in the store."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.collector.store import open_store
from tests.collector.cli.test_sandbox_commands import free_port

PASSHAT = shutil.which("passhat", path=str(Path(sys.executable).parent)) or "passhat"


@pytest.mark.slow
def test_serve_sessions_grades_a_session_and_stores_it_in_the_store(tmp_path: Path) -> None:
    port, store_url = free_port(), f"sqlite:///{tmp_path / 'store.db'}"
    command = [
        PASSHAT, "sandbox", "serve", "retail", "--sessions", "--port", str(port), "--size", "small",
        "--store", store_url, "--project", "shop",
    ]  # fmt: skip
    env = {**os.environ, "PASSHAT_SANDBOX_TOKEN": "s3cret"}
    process = subprocess.Popen(command, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    base, auth = f"http://127.0.0.1:{port}", {"Authorization": "Bearer s3cret"}
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                refused = httpx.post(f"{base}/v1/sessions", json={"task_type": "cancel_pending_order"}, timeout=5)
                break
            except httpx.TransportError:
                assert process.poll() is None, process.stderr.read() if process.stderr else b""
                assert time.monotonic() < deadline, "the sessions server did not start"
                time.sleep(0.2)
        assert refused.status_code == 401
        with httpx.Client(base_url=base, headers=auth, timeout=60) as http:
            session = http.post("/v1/sessions", json={"task_type": "order_status_inquiry"}).json()
            assert session["customer"] and session["mcp_url"].startswith("http://127.0.0.1:")
            reply = http.post(
                f"/v1/sessions/{session['session_id']}/messages",
                json={"text": "I'm sorry, I cannot look that up.", "final": True},
            ).json()
            assert reply["ended"] is True
            verdict = http.post(f"/v1/sessions/{session['session_id']}/end").json()
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=30)
    assert verdict["passed"] is False and verdict["signature"] is not None
    assert "bearer token" not in stderr.decode()  # the token came from the environment: nothing to print
    store = open_store(store_url)
    try:
        runs = store.list_replay_runs("shop")
        assert [run.params["sessions"] for run in runs] == [True]
        assert runs[0].status == "finished"  # the server closed its run when it stopped
        trials = store.list_trials("shop", runs[0].run_id)
        assert [(t.task_type, t.passed, t.failure_label) for t in trials] == [
            ("order_status_inquiry", False, verdict["signature"])
        ]
    finally:
        store.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sessions", "--database", "x.db"], "--database does not apply to --sessions"),
        (["--sessions", "--transport", "stdio"], "--sessions serves HTTP"),
    ],
)
def test_sessions_options_that_do_not_fit_are_one_clear_error(args: list[str], message: str) -> None:
    outcome = CliRunner().invoke(app, ["sandbox", "serve", "retail", *args])
    assert outcome.exit_code == 2 and message in outcome.output
