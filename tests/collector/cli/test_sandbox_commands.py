"""`passhat sandbox list|serve` and `passhat bench --domain`: real processes, real MCP clients over stdio and HTTP."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from typer.testing import CliRunner

from passhat.collector.cli import app

PASSHAT = shutil.which("passhat", path=str(Path(sys.executable).parent)) or "passhat"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_sandbox_list_prints_domains_and_task_types_as_json() -> None:
    result = CliRunner().invoke(app, ["sandbox", "list", "--json"])
    assert result.exit_code == 0, result.output
    domains = json.loads(result.output)["domains"]
    retail = next(d for d in domains if d["domain"] == "retail")
    assert len(retail["task_types"]) >= 12
    assert "return_delivered_items" in retail["tools"]
    shown = CliRunner().invoke(app, ["sandbox", "list"])  # as a person reads it, in 80 columns
    assert shown.exit_code == 0 and "cancelled_subscription_charg" in shown.stdout
    assert "…" not in shown.stdout  # folded, never cut to "cancelled_subscription_char…"


def test_replay_prints_the_reliability_table_as_json() -> None:
    args = ["bench", "--domain", "retail", "--task-type", "cancel_pending_order", "--scenarios", "4", "--k", "3"]
    result = CliRunner().invoke(app, [*args, "--flaws", "off", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["k"] == 3 and payload["agent"] == "reference (offline simulation)"
    (row,) = payload["task_types"]
    assert row["domain"] == "retail" and row["task_type"] == "cancel_pending_order"
    assert (row["tickets"], row["trials_per_ticket"]) == (4, 3)
    assert row["pass_at_1"] == row["pass_at_k"] == row["pass_hat_k"] == 1.0
    # Four tickets that all passed do not prove pass^3 = 1: the interval says how far below it could be.
    assert row["pass_hat_k_ci"][1] == 1.0 and row["pass_hat_k_ci"][0] < 0.6 and row["signatures"] == {}
    assert row["pass_hat_k_half_width"] > 0.2 and row["sample_size"].startswith("with 4 tickets")
    assert payload["design"] == {"name": "fixed", "k": 3}
    assert (row["input_tokens"], row["output_tokens"]) == (0, 0) and "cost_usd" not in row


def test_replay_with_stop_early_runs_a_curtailed_design_and_says_so() -> None:
    args = ["bench", "--domain", "retail", "--task-type", "cancel_pending_order", "--scenarios", "6", "--k", "6"]
    result = CliRunner().invoke(app, [*args, "--stop-early", "--min-trials", "2", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["design"] == {"name": "curtailed", "k": 6, "min_trials": 2}
    (row,) = payload["task_types"]
    assert row["tickets"] == 6 and row["trials"] == payload["trials"] <= 36
    assert row["trials_per_ticket"] >= 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bench", "--domain", "bank"], "no sandbox domain named 'bank'"),
        (["bench", "--domain", "retail", "--flaws", "some"], "--flaws must be off or default"),
        (["bench", "--domain", "retail", "--agent", "nomodule:nofunction"], "cannot import 'nomodule'"),
        (["bench", "--domain", "retail", "--transport", "pigeon"], "--transport must be one of"),
        (["sandbox", "serve", "bank"], "no sandbox domain named 'bank'"),
        (["sandbox", "serve", "retail", "--transport", "smoke"], "--transport must be stdio or http"),
        (["sandbox", "serve", "retail", "--store", "sqlite:///x.db"], "--store applies to --sessions only"),
        (["sandbox", "serve", "retail", "--transport", "http", "--size", "big"], "no seed size 'big'; choose one of"),
        (["sandbox", "serve", "retail", "--sessions", "--size", "big"], "no seed size 'big'; choose one of"),
        (["sandbox", "serve", "retail", "--project", "p", "--config", "x.toml"], "--project, --config apply to"),
    ],
)
def test_bad_input_is_one_clear_error(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())
    assert "Traceback" not in result.output
    assert "bearer token" not in result.output  # refused before anything is announced


async def test_serve_answers_a_real_mcp_client_over_stdio(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=PASSHAT,
        args=[
            "sandbox",
            "serve",
            "retail",
            "--transport",
            "stdio",
            "--size",
            "small",
            "--database",
            str(tmp_path / "r.db"),
        ],
        env={**os.environ},
    )
    async with Client(params, read_timeout_seconds=60) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert {"find_customer_by_email", "return_delivered_items", "calculate"} <= tools
        result = await client.call_tool("calculate", {"expression": "2 * (3 + 4)"})
        assert json.loads(result.content[0].text) == {"result": 14.0}  # type: ignore[union-attr]
        missing = await client.call_tool("get_order", {"order_id": "#W0"})
        assert missing.is_error


async def test_serve_without_a_database_removes_its_temporary_copy_when_the_client_leaves(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    params = StdioServerParameters(
        command=PASSHAT,
        args=["sandbox", "serve", "retail", "--transport", "stdio"],
        env={**os.environ, "TMPDIR": str(scratch)},  # where its copy goes: watched here
    )
    async with Client(params, read_timeout_seconds=60) as client:
        copies = list(scratch.glob("passhat-serve-*/retail.sqlite"))
        assert len(copies) == 1  # served from a copy of its own
        result = await client.call_tool("calculate", {"expression": "1 + 1"})
        assert json.loads(result.content[0].text) == {"result": 2.0}  # type: ignore[union-attr]
    for _ in range(100):  # the server stops once its stdin closes
        if not list(scratch.glob("passhat-serve-*")):
            break
        time.sleep(0.1)
    assert not list(scratch.glob("passhat-serve-*"))


@pytest.mark.slow
async def test_serve_answers_a_real_mcp_client_over_http(tmp_path: Path) -> None:
    port = free_port()
    database = tmp_path / "r.db"
    command = [PASSHAT, "sandbox", "serve", "retail", "--transport", "http", "--port", str(port), "--size", "small"]
    env = {**os.environ, "PASSHAT_SANDBOX_TOKEN": "s3cret-token"}
    process = subprocess.Popen([*command, "--database", str(database)], stderr=subprocess.PIPE, env=env)
    try:
        _wait_for_http(process, port)
        headers = {"Authorization": "Bearer s3cret-token"}
        async with (
            create_mcp_http_client(headers=headers) as http,
            Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client,
        ):
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert len(tools) == 15
            found = await client.call_tool("find_customer_by_email", {"email": "nobody@example.com"})
            assert found.is_error and "not_found" in found.content[0].text  # type: ignore[union-attr]
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert database.exists()


@pytest.mark.slow
def test_serve_over_http_refuses_requests_without_the_printed_token(tmp_path: Path) -> None:
    port = free_port()
    command = [PASSHAT, "sandbox", "serve", "retail", "--transport", "http", "--port", str(port), "--size", "small"]
    env = {k: v for k, v in os.environ.items() if k != "PASSHAT_SANDBOX_TOKEN"}
    process = subprocess.Popen([*command, "--database", str(tmp_path / "r.db")], stderr=subprocess.PIPE, env=env)
    try:
        _wait_for_http(process, port)
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        url = f"http://127.0.0.1:{port}/mcp"
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret"}):
            answer = httpx.post(url, json=call, headers=headers, timeout=5)
            assert answer.status_code == 401
            assert answer.headers["www-authenticate"].startswith("Bearer")
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=30)
    printed = stderr.decode()
    assert "bearer token" in printed and f"http://127.0.0.1:{port}/mcp" in printed


@pytest.mark.parametrize("sessions", [False, True])
def test_serve_on_a_port_already_taken_is_one_clear_error_before_anything_is_printed(
    tmp_path: Path, sessions: bool
) -> None:
    database = tmp_path / "sessions.db"
    with socket.socket() as taken:  # another server listening on the port
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        mode = ["--sessions", "--store", f"sqlite:///{database}", "--project", "shop"] if sessions else []
        outcome = CliRunner().invoke(
            app, ["sandbox", "serve", "retail", "--transport", "http", "--port", str(port), *mode]
        )
    assert outcome.exit_code == 2, outcome.output
    assert outcome.stderr == (
        f"passhat: error: port {port} on 127.0.0.1 is in use (another server?): pick another with --port\n"
    )  # no token, no "serving ... at" that is not served, no uvicorn log line
    assert not database.exists()  # no store opened, no run left behind


def _wait_for_http(process: subprocess.Popen[bytes], port: int) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=1)
            return
        except httpx.TransportError:
            assert process.poll() is None, process.stderr.read() if process.stderr else b""
            assert time.monotonic() < deadline, "the HTTP server did not start"
            time.sleep(0.2)


def test_replay_sends_each_trial_to_the_collector_as_a_sandbox_ticket(monkeypatch: pytest.MonkeyPatch) -> None:
    from passhat.testing import OtlpReceiver

    with OtlpReceiver() as receiver:
        monkeypatch.setenv("PASSHAT_ENDPOINT", receiver.url)
        args = ["bench", "--domain", "retail", "--task-type", "change_pending_address", "--scenarios", "2", "--k", "2"]
        result = CliRunner().invoke(app, [*args, "--flaws", "off", "--send-traces", "--json"])
        assert result.exit_code == 0, result.output
        tickets = [s for s in receiver.spans if s.attributes.get("gen_ai.operation.name") == "invoke_agent"]
    assert len(tickets) == 4
    assert {s.attributes["passhat.source"] for s in tickets} == {"sandbox"}
    assert {s.attributes["passhat.trial.attempt"] for s in tickets} == {0, 1}
    assert all(s.attributes["passhat.ticket.outcome"] == "passed" for s in tickets)
