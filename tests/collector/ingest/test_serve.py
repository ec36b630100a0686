"""`passhat serve`: the command a team runs, as a real process on a free port."""

from __future__ import annotations

import concurrent.futures
import pathlib
import signal
import socket
import sqlite3
import subprocess
import sys
import time

import httpx
import pytest

from passhat.collector.ingest._keys import create_api_key
from passhat.collector.store import open_store
from tests.collector.ingest.otlp_payloads import passhat_ticket, request

PASSHAT = pathlib.Path(sys.executable).with_name("passhat")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
def test_serve_with_two_workers_ingests_and_stops_cleanly(tmp_path: pathlib.Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'passhat.db'}") as store:
        key, _ = create_api_key(store, "shop")
    port = _free_port()
    server = subprocess.Popen(
        [str(PASSHAT), "serve", "--port", str(port), "--data-dir", str(tmp_path), "--workers", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline and server.poll() is None, "passhat serve did not start"
            time.sleep(0.1)
        headers = {"content-type": "application/x-protobuf", "authorization": f"Bearer {key}"}

        def send(n: int) -> int:
            body = request(passhat_ticket(f"T-{n}")).SerializeToString()
            with httpx.Client(timeout=30) as client:
                return client.post(f"{url}/v1/traces", content=body, headers=headers).status_code

        # From 8 connections at once: both workers commit to the file concurrently, each giving out span ids.
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            assert list(pool.map(send, range(48))) == [200] * 48
    finally:
        server.send_signal(signal.SIGTERM)
        _, stderr = server.communicate(timeout=60)
    assert server.returncode == 0, stderr.decode()
    assert b"Traceback" not in stderr
    with open_store(f"sqlite:///{tmp_path / 'passhat.db'}") as store:
        assert store.count_spans("shop") == 48 * 9
        assert len(store.list_tickets("shop", limit=100)) == 48
    with sqlite3.connect(tmp_path / "passhat.db") as conn:  # every derived row points at its own span
        for table in ("tool_calls", "state_writes", "tickets"):
            mismatched = conn.execute(
                f"SELECT count(*) FROM {table} t LEFT JOIN spans s ON s.id = t.span_ref "
                "WHERE s.span_id IS NULL OR s.span_id <> t.span_id OR s.trace_id <> t.trace_id"
            ).fetchone()[0]
            assert mismatched == 0, table
        assert conn.execute("SELECT count(*) FROM tool_calls").fetchone()[0] > 0


def test_serve_with_a_bad_store_url_is_one_clear_error() -> None:
    done = subprocess.run(
        [str(PASSHAT), "serve", "--store", "nosuchdriver://x"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.startswith("passhat: error:")
    assert "Traceback" not in done.stderr


def test_tune_gc_raises_the_young_threshold_and_still_collects_cycles() -> None:
    import gc

    from passhat.collector.cli._serve import tune_gc

    before = gc.get_threshold()
    try:
        tune_gc()
        assert gc.get_threshold()[0] == 50_000
        assert gc.get_freeze_count() > 0

        class Node:
            other: object = None

        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle only the cyclic collector can free
        del a, b
        assert gc.collect() >= 2
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_the_docs_synopsis_of_serve_names_every_option() -> None:
    import re

    import typer.main

    from passhat.collector.cli import app

    docs = (pathlib.Path(__file__).resolve().parents[3] / "docs" / "collector.md").read_text(encoding="utf-8")
    synopsis = re.search(r"`passhat serve (\[[^`]*)`", docs)
    assert synopsis is not None
    serve = typer.main.get_command(app).commands["serve"]  # type: ignore[attr-defined]
    options = {opt for param in serve.params for opt in param.opts if opt.startswith("--") and opt != "--help"}
    assert options == set(re.findall(r"\[(--[\w-]+)", synopsis[1]))
