"""Agents as a service: passhat POSTs each turn to a URL; the agent (here JavaScript) uses the trial's MCP endpoint."""

from __future__ import annotations

import http.server
import json
import pathlib
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from typing import ClassVar

import pytest
from click.testing import Result

from passhat.sandbox import Sandbox, run_trial
from passhat.sandbox.agents import resolve_agent
from tests.service_stubs import StubServer, misbehaving_service

EXAMPLE = pathlib.Path(__file__).resolve().parents[3] / "examples" / "js_agent"


def _install() -> None:
    """The example's one dependency, from the npm registry into the example's own node_modules (as CI does)."""
    if (EXAMPLE / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        return
    npm = shutil.which("npm")
    assert npm is not None, "the JavaScript agent example needs node and npm"
    subprocess.run([npm, "install", "--no-audit", "--no-fund"], cwd=EXAMPLE, check=True, capture_output=True)


@pytest.fixture(scope="module")
def js_agent() -> Iterator[str]:
    """The example agent running under node on a free port; yields its turn URL."""
    _install()
    node = shutil.which("node")
    assert node is not None, "the JavaScript agent example needs node"
    process = subprocess.Popen(
        [node, "agent.mjs", "--port", "0"], cwd=EXAMPLE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("listening on "), line + (process.stderr.read() if process.stderr else "")
        yield line.removeprefix("listening on ").strip()
    finally:
        process.terminate()
        process.wait(timeout=10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


@pytest.mark.slow
async def test_the_javascript_agent_cancels_an_order_over_the_trials_mcp_endpoint(
    retail: Sandbox, js_agent: str
) -> None:
    scenario = retail.scenarios("cancel_pending_order", 1)[0]
    result = await run_trial(retail, scenario, 0, resolve_agent(js_agent))
    assert result.passed, (result.record.verdict, result.record.infra_error, result.record.transcript)
    # The agent's MCP calls went through the trial's Toolbox: recorded, in order, with their outcomes.
    assert [c.name for c in result.record.tool_calls] == [
        "find_customer_by_email",
        "get_order",
        "find_customer_by_email",
        "cancel_pending_order",
    ]
    assert all(c.outcome == "ok" for c in result.record.tool_calls)
    assert result.agent == js_agent
    assert result.record.termination_reason == "customer_stop"


@pytest.mark.slow
async def test_the_javascript_agent_refusing_another_task_type_is_graded_as_a_failure(
    retail: Sandbox, js_agent: str
) -> None:
    scenario = retail.scenarios("change_pending_address", 1)[0]
    result = await run_trial(retail, scenario, 0, resolve_agent(js_agent))
    assert not result.passed
    assert result.record.tool_calls == []
    assert result.signature is not None and result.signature.label == "unresolved"  # it never looked anything up


@pytest.mark.slow
def test_passhat_replay_grades_the_javascript_agent_from_the_command_line(js_agent: str) -> None:
    from typer.testing import CliRunner

    from passhat.collector.cli import app

    outcome = CliRunner().invoke(
        app,
        [
            "bench", "--domain", "retail", "--task-type", "cancel_pending_order", "--scenarios", "2", "--k", "2",
            "--agent", js_agent, "--json",
        ],
    )  # fmt: skip
    assert outcome.exit_code == 0, outcome.output
    report = json.loads(outcome.stdout)  # warnings of the trials' HTTP servers may go to stderr
    assert report["agent"] == js_agent and report["trials"] == 4
    row = report["task_types"][0]
    assert row["task_type"] == "cancel_pending_order" and row["pass_hat_k"] == 1.0
    assert row["pass_hat_k_ci"][0] < 1.0  # two tickets: the interval says how little that is


@pytest.mark.slow
@pytest.mark.parametrize(("parallel", "scenarios"), [(8, 20), (16, 40)])
def test_no_trial_of_the_javascript_agent_is_lost_however_many_run_at_once(
    js_agent: str, parallel: int, scenarios: int
) -> None:
    """Hundreds of trials, each with its own MCP endpoint, many ending while others' tool calls are in flight."""
    from typer.testing import CliRunner

    from passhat.collector.cli import app

    outcome = CliRunner().invoke(
        app,
        [
            "bench", "--domain", "retail", "--task-type", "cancel_pending_order", "--scenarios", str(scenarios),
            "--k", "4", "--parallel", str(parallel), "--agent", js_agent, "--json",
        ],
    )  # fmt: skip
    assert outcome.exit_code == 0, outcome.output
    report = json.loads(outcome.stdout)
    assert report["trials"] == 4 * scenarios
    (row,) = report["task_types"]
    # Not one tool call went unanswered: no trial broken, and none needed a harness retry (which would hide it).
    assert report["harness_failures"] == [] and report["harness_retries"] == 0, report["harness_failures"]
    assert row["signatures"] == {} and row["harness_failures"] == 0, row
    assert row["tickets"] == scenarios and row["pass_at_1"] == 1.0


async def test_an_agent_service_that_answers_an_error_is_an_infrastructure_error(retail: Sandbox) -> None:
    scenario = retail.scenarios("cancel_pending_order", 1)[0]
    # Nothing listens on port 9 of the loopback: the service cannot be reached.
    result = await run_trial(retail, scenario, 0, resolve_agent("http://127.0.0.1:9/turn"))
    assert result.record.termination_reason == "infra_error"
    assert "could not be reached" in str(result.record.infra_error)
    assert result.signature is not None and not result.signature.is_agent_failure


class BadService(http.server.BaseHTTPRequestHandler):
    """An agent service that answers each turn wrongly, as its path says: 404, a wrong JSON shape, plain text."""

    answers: ClassVar[dict[str, tuple[int, str, bytes]]] = {
        "/missing": (404, "text/html", b"<h1>Not Found</h1>"),
        "/shape": (200, "application/json", b'{"message": "hello", "done": true}'),
        "/plain": (200, "text/plain; charset=utf-8", b"Hello! How can I help you today?"),
        "/final": (200, "application/json", b'{"text": "Done.", "final": "yes"}'),
    }

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        status, kind, body = self.answers.get(self.path, (500, "text/plain", b"unexpected path"))
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture(scope="module")
def bad_service() -> Iterator[str]:
    """A real HTTP server on a free loopback port answering badly; yields its base URL."""
    server = StubServer(("127.0.0.1", 0), BadService)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/missing", ["answered 404", "text/html", "<h1>Not Found</h1>"]),
        ("/shape", ['must answer {"text": str, "final": bool}', "application/json", '"message": "hello"']),
        ("/plain", ["did not answer JSON", "text/plain; charset=utf-8", "Hello! How can I help you today?"]),
    ],
)
async def test_a_service_answering_badly_gets_its_status_content_type_and_body_in_the_trials_error(
    retail: Sandbox, bad_service: str, path: str, expected: list[str]
) -> None:
    scenario = retail.scenarios("cancel_pending_order", 1)[0]
    result = await run_trial(retail, scenario, 0, resolve_agent(bad_service + path))
    assert result.record.termination_reason == "infra_error"
    error = str(result.record.infra_error)
    assert f"the agent at {bad_service}{path}" in error
    for part in expected:
        assert part in error.replace("\\'", "'"), error


def _bench_json(url: str, trials: int) -> Result:
    """`passhat bench --json` of the service at ``url``: ``trials`` scenarios of cancel_pending_order, k = trials."""
    from typer.testing import CliRunner

    from passhat.collector.cli import app

    return CliRunner().invoke(
        app,
        [
            "bench", "--domain", "retail", "--task-type", "cancel_pending_order", "--scenarios", str(trials),
            "--k", str(trials), "--agent", url, "--json",
        ],
    )  # fmt: skip


def test_the_command_line_names_a_service_answering_404_on_stderr_and_in_json(bad_service: str) -> None:
    url = bad_service + "/missing"
    outcome = _bench_json(url, 2)
    assert outcome.exit_code == 1, outcome.output  # it measured nothing: a script or CI job must not pass on it
    assert f"the agent at {url} answered 404" in outcome.stderr
    assert "passhat: error: all 4 trials of passhat bench were lost to the harness" in outcome.stderr
    report = json.loads(outcome.stdout)
    assert report["task_types"] == []  # no trial speaks about the agent: no figure at all, never pass@1 0%
    (group,) = report["harness_failures"]
    assert group["trials"] == 4 and group["signature"] == "infra_error" and group["error_type"] == "DomainError"
    assert f"the agent at {url} answered 404: text/html" in group["message"]
    assert "answered 404" in group["fix"] and url in group["fix"]
    assert report["harness_retries"] == 4 * 2  # each trial was run again twice before it was given up


def test_an_answer_whose_final_is_not_true_or_false_gets_the_fix_for_the_answers_shape(bad_service: str) -> None:
    outcome = _bench_json(bad_service + "/final", 1)
    (group,) = json.loads(outcome.stdout)["harness_failures"]
    assert '"final" and "stop" must be true or false' in group["message"], group
    assert (
        group["fix"]
        == 'the agent service must answer each turn with JSON {"text": str, "final": bool} (docs/agents.md)'
    )


@pytest.mark.parametrize(
    ("agent", "expected"),
    [
        ("http://", "the agent service URL 'http://' names no host"),
        ("http://:8787/turn", "the agent service URL 'http://:8787/turn' names no host"),
        ("http://127.0.0.1:99999/turn", "the agent service URL 'http://127.0.0.1:99999/turn' has no valid port"),
        ("127.0.0.1:8787/turn", "an agent service's URL starts with http:// or https:// (http://127.0.0.1:8787/turn)"),
        ("localhost:8787", "an agent service's URL starts with http:// or https:// (http://localhost:8787)"),
    ],
)
def test_an_agent_url_passhat_cannot_post_to_is_refused_before_any_trial_runs(agent: str, expected: str) -> None:
    from typer.testing import CliRunner

    from passhat.collector.cli import app

    outcome = CliRunner().invoke(
        app, ["bench", "--domain", "retail", "--task-type", "cancel_pending_order", "--scenarios", "1", "--k", "1",
              "--agent", agent],
    )  # fmt: skip
    assert outcome.exit_code == 2, outcome.output
    assert outcome.stderr.startswith("passhat: error: ") and expected in outcome.stderr, outcome.stderr
    assert outcome.stdout == ""  # no trial ran, so no table


def test_an_agent_service_url_is_told_apart_from_a_factory_whatever_the_case_of_its_scheme() -> None:
    from passhat.sandbox.agents._service import is_service_url

    assert is_service_url("HTTP://127.0.0.1:8787/turn") and is_service_url("Https://agents.internal/turn")
    assert not is_service_url("mypkg.agents:make")


@pytest.mark.parametrize(
    ("kind", "timeout", "error", "fix"),
    [
        # running but slow: a timeout, not a service that is not running
        ("never", 0.5, "the agent at {url} timed out: no answer to the turn within 0.5 s",
         "something the trial waited on never answered: the agent service"),
        # it took the turn and closed the connection without an answer (it crashed): it was reported as one that
        # "could not be reached", with the fix "is the agent service running?"
        ("hangs up", 10, "the agent at {url} closed the connection before answering",
         "the agent service at {url} hung up in the middle of a turn"),
    ],
)  # fmt: skip
async def test_an_agent_service_that_is_running_but_does_not_answer_is_not_told_to_start(
    retail: Sandbox, kind: str, timeout: float, error: str, fix: str
) -> None:
    from passhat.collector.reliability import harness_failures
    from passhat.sandbox.agents._service import ServiceAgent

    scenario = retail.scenarios("cancel_pending_order", 1)[0]
    with misbehaving_service(kind) as url:
        result = await run_trial(retail, scenario, 0, ServiceAgent.factory(url, timeout=timeout))
    assert result.record.termination_reason == "infra_error"
    assert error.format(url=url) in str(result.record.infra_error)
    (group,) = harness_failures([result])
    assert group.fix.startswith(fix.format(url=url)), group.fix


def test_a_malformed_answer_says_what_shape_is_expected() -> None:
    from passhat.sandbox import DomainError
    from passhat.sandbox.agents._service import parse_reply

    with pytest.raises(DomainError, match=re.escape('must answer {"text": str, "final": bool}')):
        parse_reply(b'{"message": "hi"}', "http://agent")
    with pytest.raises(DomainError, match="did not answer JSON"):
        parse_reply(b"<html>", "http://agent")
    assert parse_reply(b'{"text": "Done.", "final": true}', "http://agent").final
