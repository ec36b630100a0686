"""`passhat sandbox serve retail --sessions` stops within 2 s of SIGTERM or SIGINT with sessions open (an agent's
MCP client still connected to one), and keeps each open session as ended by the shutdown: an infrastructure
error, never the agent's failure."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from passhat.collector.loop._sessions import SHUTDOWN_REASON
from passhat.collector.store import open_store
from tests.collector.cli.test_sandbox_commands import free_port
from tests.collector.cli.test_sessions_command import PASSHAT

pytestmark = pytest.mark.slow
STOP_BOUND_S = 2.0


def _hold_mcp_connection(session: dict[str, Any], connected: threading.Event, stop: threading.Event) -> None:
    """An agent's MCP client on the session's endpoint, connected until `stop` (or the server goes away)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def hold() -> None:
        headers = {"Authorization": f"Bearer {session['mcp_token']}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http,
            Client(streamable_http_client(session["mcp_url"], http_client=http)) as tools,
        ):
            await tools.list_tools()
            connected.set()
            while not stop.is_set():
                await asyncio.sleep(0.05)

    try:
        asyncio.run(hold())
    except BaseException:  # the server went away under the client: what a stop looks like from the agent's side
        connected.set()


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_the_sessions_server_stops_promptly_and_keeps_open_sessions_as_ended_by_shutdown(
    tmp_path: Path, stop_signal: signal.Signals
) -> None:
    port, store_url = free_port(), f"sqlite:///{tmp_path / 'store.db'}"
    command = [PASSHAT, "sandbox", "serve", "retail", "--sessions", "--port", str(port), "--store", store_url,
               "--project", "shop"]  # fmt: skip
    env = {**os.environ, "PASSHAT_SANDBOX_TOKEN": "s3cret"}
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    stop = threading.Event()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": "Bearer s3cret"}) as http:
            deadline = time.monotonic() + 60
            while True:
                try:
                    first = http.post("/v1/sessions", json={"task_type": "cancel_pending_order"}, timeout=60).json()
                    break
                except httpx.TransportError:
                    assert process.poll() is None, process.stderr.read() if process.stderr else ""
                    assert time.monotonic() < deadline, "the sessions server did not start"
                    time.sleep(0.2)
            second = http.post("/v1/sessions", json={"task_type": "cancel_pending_order", "scenario": 1}).json()
            # The first ends normally while the second is open; a third opens after it: their tool servers
            # start and stop out of order.
            ended = http.post(f"/v1/sessions/{first['session_id']}/end", timeout=60).json()
            third = http.post("/v1/sessions", json={"task_type": "order_status_inquiry"}, timeout=60).json()
        connected = threading.Event()
        agent = threading.Thread(target=_hold_mcp_connection, args=(second, connected, stop), daemon=True)
        agent.start()
        assert connected.wait(30), "the agent's MCP client did not connect"
        sent = time.monotonic()
        process.send_signal(stop_signal)
        try:
            _, stderr = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            _, stderr = process.communicate()
            pytest.fail(f"still running 30 s after {stop_signal.name}:\n{stderr}")
        stopped_in = time.monotonic() - sent
    finally:
        stop.set()
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, stderr
    assert stopped_in < STOP_BOUND_S, f"stopped {stopped_in:.2f} s after {stop_signal.name}"
    assert f"trials stored in {store_url}, project shop" in stderr
    assert "2 open session(s) ended by the shutdown" in stderr
    assert "Traceback" not in stderr
    store = open_store(store_url)
    try:
        (run,) = store.list_replay_runs("shop")
        assert run.status == "finished"
        trials = {t.ticket_id: t for t in store.list_trials("shop", run.run_id)}
    finally:
        store.close()
    assert trials.keys() == {first["scenario_id"], second["scenario_id"], third["scenario_id"]}
    assert trials[first["scenario_id"]].infra_error is None and ended["termination_reason"] == "agent_stop"
    for session in (second, third):
        kept = trials[session["scenario_id"]]
        assert (kept.termination_reason, kept.infra_error, kept.passed) == ("infra_error", SHUTDOWN_REASON, False)
