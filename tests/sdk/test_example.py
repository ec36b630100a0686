"""examples/wrap_existing_agent.py: at most five added lines, and it really exports traces when run."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from passhat.testing import OtlpReceiver

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "wrap_existing_agent.py"


def test_the_example_adds_at_most_five_lines() -> None:
    marked = [line for line in EXAMPLE.read_text().splitlines() if line.rstrip().endswith("# passhat")]
    assert 1 <= len(marked) <= 5, marked


@pytest.mark.slow
def test_the_example_runs_and_its_traces_reach_the_collector(receiver: OtlpReceiver, tmp_path: pathlib.Path) -> None:
    env = dict(os.environ, PASSHAT_ENDPOINT=receiver.url, PASSHAT_EXPORT_INTERVAL="0.05")
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--db", str(tmp_path / "shop.db")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.splitlines() == [
        "Refunded 42.50 for order O-1001.",
        "I could not find order O-9999.",
        "Order O-1002 is shipped; it can be refunded once delivered.",
    ]
    spans = receiver.wait_for_spans(7)
    tickets = {s.attributes["passhat.ticket.id"]: s for s in spans if s.name == "invoke_agent"}
    assert set(tickets) == {"T-1", "T-2", "T-3"}
    tools = [s for s in spans if s.name.startswith("execute_tool")]
    outcomes = sorted((s.name, s.attributes["passhat.tool.outcome"]) for s in tools)
    assert outcomes == [
        ("execute_tool find_order", "empty"),
        ("execute_tool find_order", "ok"),
        ("execute_tool find_order", "ok"),
        ("execute_tool refund_order", "ok"),
    ]
    (refund,) = [s for s in tools if s.name == "execute_tool refund_order"]
    assert refund.trace_id == tickets["T-1"].trace_id
    events = dict(refund.events)
    assert events["passhat.state_write"]["passhat.state_write.after"] == '{"status":"refunded"}'
    reads = [
        attributes
        for s in spans
        if s.trace_id == refund.trace_id
        for name, attributes in s.events
        if name == "passhat.state_read"
    ]
    assert [(r["passhat.state_read.table"], r["passhat.state_read.key"]) for r in reads] == [
        ("orders", '{"id":"O-1001"}')
    ]
    assert all(s.resource["service.name"] == "support-agent" for s in spans)
