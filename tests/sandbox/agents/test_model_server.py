"""A model agent's server that is unusable stops the run in seconds with one line naming it; a flaky one does not.

Real `openai` and `anthropic` clients against stand-in servers on 127.0.0.1 (a closed port, a server answering
503 / 401 / 429 to every call, a server answering every other call)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import pathlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from openai import AsyncOpenAI
from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.collector.reliability import agent_trials, harness_failures
from passhat.sandbox import ModelServerError, ModelServerUnusableError, RunConfig, Sandbox, run_trial, run_trials
from passhat.sandbox.agents import ModelServerWatch, OpenAIAgent, resolve_agent
from passhat.sandbox.agents._model_server import STOP_AFTER, STOP_AFTER_ANSWERED, ModelEndpoint, public_url
from tests.sandbox.chat_completions_api import failing_chat_completions

DOCS_BENCH = ["bench", "--domain", "retail", "--agent", "openai", "--model", "qwen2.5:14b", "--k", "5"]
"""The docs' bench (docs/agents.md): every retail task type, 20 scenarios each, k = 5: 1,500 trials."""


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def _error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("passhat: error: "), stderr
    return lines[0]


def test_a_model_server_that_cannot_be_reached_stops_the_docs_bench_before_any_trial() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    started = time.monotonic()
    outcome = CliRunner().invoke(app, [*DOCS_BENCH, "--base-url", url], terminal_width=400)
    took = time.monotonic() - started
    assert outcome.exit_code == 1, outcome.output
    assert outcome.stdout == ""  # no table of trials that say nothing about the agent
    line = _error_line(outcome.stderr)
    assert f"the openai model server at {url} (model 'qwen2.5:14b') could not be reached" in line
    assert "no trial ran" in line and "is it running?" in line and "--base-url" in line
    assert took < 30, took  # seconds, where every trial's retries took 15 minutes and more


def test_a_model_server_answering_503_to_every_call_stops_the_docs_bench_after_its_first_calls() -> None:
    with failing_chat_completions(503) as api:
        started = time.monotonic()
        outcome = CliRunner().invoke(app, [*DOCS_BENCH, "--base-url", api.url], terminal_width=400)
        took = time.monotonic() - started
    assert outcome.exit_code == 1, outcome.output
    assert outcome.stdout == "" and "Traceback" not in outcome.output
    line = _error_line(outcome.stderr)
    assert f"the openai model server at {api.url} (model 'qwen2.5:14b') answered 503" in line, line
    assert f"its first {STOP_AFTER} calls all failed this way and none was answered" in line
    assert "its own log says why" in line  # what to do about a server that is up but failing
    # The first calls in flight (8 trials at once), each with the client's own 2 retries: no more.
    assert len(api.requests) <= (STOP_AFTER + 8) * 3, len(api.requests)
    assert took < 60, took


def test_a_flaky_model_server_never_stops_the_bench() -> None:
    # Every other request fails with 503; the client's own retries get an answer each time.
    with failing_chat_completions(503, answer_every=2) as api:
        outcome = CliRunner().invoke(
            app,
            [*DOCS_BENCH[:-2], "--k", "2", "--task-type", "cancel_pending_order", "--scenarios", "2",
             "--base-url", api.url, "--json"],
        )  # fmt: skip
    assert outcome.exit_code == 0, outcome.output
    report = json.loads(outcome.stdout)
    assert report["trials"] == 4 and report["harness_failures"] == []
    assert report["task_types"][0]["pass_at_1"] == 0.0  # the model's replies are graded: the agent's own failures


def test_a_flaky_model_server_whose_calls_fail_leaves_every_trial_to_the_harness_rule(retail: Sandbox) -> None:
    # No client retries and no harness retries: every other call fails for good, and the run goes on.
    scenarios = retail.scenarios("cancel_pending_order", 4)

    async def run() -> list:
        with failing_chat_completions(503, answer_every=2) as api:
            client = AsyncOpenAI(api_key="test-key", base_url=api.url, max_retries=0)
            factory = OpenAIAgent.factory(model="flaky-model", client=client)
            results = await run_trials(retail, scenarios, 2, factory, config=RunConfig(parallel=1, harness_retries=0))
            await client.close()
        return results

    results = asyncio.run(run())
    assert len(results) == 8  # never stopped
    broken = [r for r in results if r.record.infra_error]
    assert broken and len(agent_trials(results)) == len(results) - len(broken)  # in no figure
    (group,) = harness_failures(results)
    assert group.error_type == "ModelServerError" and "answered 503" in group.message
    assert "(model 'flaky-model')" in group.message and group.fix.startswith("the agent's model server at http://")


@pytest.mark.parametrize(
    ("status", "stops"),
    [(503, True), (401, True), (402, True), (404, True), (429, False), (529, False), (400, False)],
)
def test_the_watch_stops_after_the_first_calls_fail_alike_only_for_a_server_wide_failure(
    status: int, stops: bool
) -> None:
    async def calls() -> list[BaseException]:
        raised: list[BaseException] = []
        with failing_chat_completions(status) as api:
            client = AsyncOpenAI(api_key="test-key", base_url=api.url, max_retries=0)
            watch = ModelServerWatch(ModelEndpoint.of("openai", client, "m"))
            for _ in range(STOP_AFTER + 2):
                try:
                    await watch.call(lambda: client.chat.completions.create(model="m", messages=[]), client)
                except ModelServerError as exc:
                    raised.append(exc)
            await client.close()
        return raised

    raised = asyncio.run(calls())
    assert len(raised) == STOP_AFTER + 2 and all(isinstance(e, ModelServerError) for e in raised)
    unusable = [type(e) is ModelServerUnusableError for e in raised]
    assert unusable == ([False] * (STOP_AFTER - 1) + [True] * 3 if stops else [False] * (STOP_AFTER + 2))
    assert f"answered {status}" in str(raised[0]) or "refused the key" in str(raised[0])


def test_a_key_without_quota_stops_the_docs_bench_where_a_rate_limit_does_not() -> None:
    # OpenAI answers 429 both to a rate limit (it passes) and to an account whose quota is spent (no call works until
    # it is topped up); the error's code tells them apart.
    with failing_chat_completions(429, code="insufficient_quota", message="You exceeded your current quota") as api:
        outcome = CliRunner().invoke(app, [*DOCS_BENCH, "--base-url", api.url], terminal_width=400)
    assert outcome.exit_code == 1, outcome.output
    assert outcome.stdout == "" and "Traceback" not in outcome.output
    line = _error_line(outcome.stderr)
    assert "(model 'qwen2.5:14b') answered 429, no quota or credit left" in line, line
    assert f"its first {STOP_AFTER} calls all failed this way" in line and "top it up" in line
    assert "OPENAI_API_KEY" in line and len(api.requests) <= (STOP_AFTER + 8) * 3, len(api.requests)


def test_one_answered_call_keeps_the_run_going_through_the_first_calls_failing_after() -> None:
    async def calls() -> list[type]:
        seen: list[type] = []
        with failing_chat_completions(503, answer_every=1) as good, failing_chat_completions(503) as bad:
            client = AsyncOpenAI(api_key="test-key", base_url=good.url, max_retries=0)
            watch = ModelServerWatch(ModelEndpoint.of("openai", client, "m"))
            await watch.call(lambda: client.chat.completions.create(model="m", messages=[]), client)
            broken = AsyncOpenAI(api_key="test-key", base_url=bad.url, max_retries=0)  # the same server, now down
            for _ in range(STOP_AFTER * 2):
                try:
                    await watch.call(lambda: broken.chat.completions.create(model="m", messages=[]), broken)
                except ModelServerError as exc:
                    seen.append(type(exc))
            await client.close()
            await broken.close()
        return seen

    assert asyncio.run(calls()) == [ModelServerError] * (STOP_AFTER * 2)


def _watched_calls(watch: ModelServerWatch, clients: dict[str, AsyncOpenAI], script: str) -> list[str]:
    """Calls through ``watch``, one per letter of ``script`` naming the client: what each gave ("ok", "error",
    "stop")."""

    async def calls() -> list[str]:
        seen = []
        for letter in script:
            client = clients[letter]
            try:
                await watch.call(lambda c=client: c.chat.completions.create(model="m", messages=[]), client)
                seen.append("ok")
            except ModelServerUnusableError:
                seen.append("stop")
            except ModelServerError:
                seen.append("error")
        return seen

    return asyncio.run(calls())


def test_a_server_that_answered_then_fails_calls_in_a_row_alike_stops_the_run_mid_run() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    with failing_chat_completions(503, answer_every=1) as good:
        clients = {
            "a": AsyncOpenAI(api_key="test-key", base_url=good.url, max_retries=0),
            "x": AsyncOpenAI(api_key="test-key", base_url=url, max_retries=0),  # the same server, crashed
        }
        watch = ModelServerWatch(ModelEndpoint.of("openai", clients["x"], "m"))
        seen = _watched_calls(watch, clients, "aa" + "x" * (STOP_AFTER_ANSWERED + 2))
    assert seen == ["ok"] * 2 + ["error"] * (STOP_AFTER_ANSWERED - 1) + ["stop"] * 3
    assert watch.unusable is not None and watch.unusable.kind == "unreachable"
    message = str(watch.unusable)
    assert f"it had answered 2 calls, then its last {STOP_AFTER_ANSWERED} calls in a row all failed this way" in message
    assert "could not be reached" in message and "is it running?" in message


def test_an_answer_or_another_failure_starts_the_mid_run_count_again() -> None:
    run = "x" * (STOP_AFTER_ANSWERED - 1)
    with (
        failing_chat_completions(503, answer_every=1) as good,
        failing_chat_completions(503) as down,
        failing_chat_completions(429) as limited,
    ):
        clients = {
            letter: AsyncOpenAI(api_key="test-key", base_url=api.url, max_retries=0)
            for letter, api in (("a", good), ("x", down), ("r", limited))
        }
        watch = ModelServerWatch(ModelEndpoint.of("openai", clients["a"], "m"))
        # A flaky server: every other call answered, far more failures in all than the count.
        flaky = _watched_calls(watch, clients, "a" + "xa" * STOP_AFTER_ANSWERED)
        # Short runs of failures broken by an answer, by a rate limit (the server is there): never a stop.
        broken = _watched_calls(watch, clients, f"{run}a{run}r{run}")
        # The same failure STOP_AFTER_ANSWERED times in a row: a stop.
        gone = _watched_calls(watch, clients, "a" + "x" * STOP_AFTER_ANSWERED)
    assert "stop" not in flaky and flaky.count("error") == STOP_AFTER_ANSWERED
    assert "stop" not in broken
    assert gone == ["ok"] + ["error"] * (STOP_AFTER_ANSWERED - 1) + ["stop"]


def test_a_model_server_failing_mid_run_stops_the_docs_bench_in_one_line() -> None:
    # The server answers its first 30 requests (a few trials run and are graded), then 503 to every one.
    with failing_chat_completions(503, answer_first=30) as api:
        started = time.monotonic()
        outcome = CliRunner().invoke(app, [*DOCS_BENCH, "--base-url", api.url], terminal_width=400)
        took = time.monotonic() - started
    assert outcome.exit_code == 1, outcome.output
    assert outcome.stdout == "" and "Traceback" not in outcome.output
    line = _error_line(outcome.stderr)
    assert f"the openai model server at {api.url} (model 'qwen2.5:14b') answered 503" in line, line
    assert f"then its last {STOP_AFTER_ANSWERED} calls in a row all failed this way" in line
    assert "so the run stopped rather than fail every trial left" in line and "its own log says why" in line
    # The calls in flight when it stopped (8 trials at once), each with the client's own 2 retries: no more. Before,
    # every one of the 1,500 trials failed through the client's and the harness's retries.
    assert len(api.requests) <= 30 + (STOP_AFTER_ANSWERED + 8) * 3, len(api.requests)
    assert took < 90, took


def test_the_pre_flight_stops_only_for_a_server_that_cannot_be_reached() -> None:
    async def check(url: str) -> None:
        await resolve_agent("openai", model="m", base_url=url).check_model_server()  # type: ignore[attr-defined]

    with pytest.raises(ModelServerUnusableError, match="could not be reached"):
        asyncio.run(check(f"http://127.0.0.1:{_closed_port()}/v1"))
    with failing_chat_completions(503) as api:  # its model list fails: that proves nothing about chat calls
        asyncio.run(check(api.url))
    with failing_chat_completions(401) as api:  # a key that may not list models may still chat
        asyncio.run(check(api.url))


def test_a_failed_model_call_names_the_server_and_the_model_never_the_key(retail: Sandbox) -> None:
    key = "sk-test-0123456789abcdef"
    scenario = retail.scenarios("cancel_pending_order", 1)[0]
    with failing_chat_completions(401, message=f"Incorrect API key provided: {key}") as api:
        client = AsyncOpenAI(api_key=key, base_url=api.url.replace("http://", f"http://user:{key}@"), max_retries=0)
        result = asyncio.run(run_trial(retail, scenario, 0, OpenAIAgent.factory(model="gpt-test", client=client)))
    error = result.record.infra_error or ""
    assert error.startswith("agent raised ModelServerError(")
    assert f"the openai model server at {api.url} (model 'gpt-test') refused the key (status 401)" in error
    assert key not in error and "user" not in error
    (group,) = harness_failures([result])
    assert group.fix.startswith(f"the agent's model server at {api.url} refused the key")


def test_an_unreachable_model_names_its_url_in_the_trial_and_on_the_command_line(retail: Sandbox) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    scenario = retail.scenarios("cancel_pending_order", 1)[0]
    client = AsyncOpenAI(api_key="k", base_url=url, max_retries=0)
    result = asyncio.run(run_trial(retail, scenario, 0, OpenAIAgent.factory(model="local", client=client)))
    assert f"the openai model server at {url} (model 'local') could not be reached: APIConnectionError" in str(
        result.record.infra_error
    )
    (group,) = harness_failures([result])
    assert group.fix.startswith(f"the agent's model server at {url} could not be reached: is it running?")


def test_public_url_leaves_out_credentials_query_and_fragment() -> None:
    assert public_url("https://u:p@api.example.com:8443/v1/?key=secret#x") == "https://api.example.com:8443/v1"
    assert public_url("http://[::1]:11434/v1/") == "http://[::1]:11434/v1"


def test_the_anthropic_agent_takes_its_server_from_base_url() -> None:
    factory = resolve_agent("anthropic", model="claude-test", base_url="http://127.0.0.1:9/anthropic")
    assert factory.watch.endpoint == ModelEndpoint(  # type: ignore[attr-defined]
        "anthropic", "http://127.0.0.1:9/anthropic", "claude-test"
    )


def test_suite_run_with_a_model_server_answering_503_stops_and_keeps_its_run_to_resume(tmp_path: pathlib.Path) -> None:
    store = f"sqlite:///{tmp_path / 'suite.db'}"
    with failing_chat_completions(503) as api:
        args = ["suite", "run", "--agent", "openai", "--model", "m", "--base-url", api.url, "--k", "5",
                "--domains", "retail", "--store", store]  # fmt: skip
        outcome = CliRunner().invoke(app, args, terminal_width=400)
    assert outcome.exit_code == 1, outcome.output
    line = _error_line(outcome.stderr)
    assert f"the openai model server at {api.url} (model 'm') answered 503" in line
    assert line.endswith("(the trials stored are kept: the same command resumes the run)")
    listed = CliRunner().invoke(app, ["runs", "list", "--store", store, "--json"])
    assert listed.exit_code == 0, listed.output
    (run,) = json.loads(listed.stdout)["runs"]
    assert run["status"] == "running"  # not finished: resumed by the same command, never reused as measured


@contextlib.contextmanager
def _silent_server() -> Iterator[str]:
    """A server on 127.0.0.1 that takes every connection and never answers (a stuck model server): its base URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(0.05)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:  # the accept's own timeout: look at the stop flag again
                continue
            held.append(connection)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        stop.set()
        thread.join()
        for connection in held:
            connection.close()
        listener.close()


def test_a_model_server_that_never_answers_stops_the_docs_bench_after_its_first_calls_time_out() -> None:
    # The clients' own default (600 s a request, tried three times) kept such a run waiting half an hour a call.
    with _silent_server() as url:
        outcome = CliRunner().invoke(app, [*DOCS_BENCH, "--base-url", url, "--timeout", "0.2"], terminal_width=400)
    assert outcome.exit_code == 1, outcome.output
    assert outcome.stdout == "" and "Traceback" not in outcome.output
    line = _error_line(outcome.stderr)
    assert f"the openai model server at {url} (model 'qwen2.5:14b') did not answer in time" in line, line
    assert f"its first {STOP_AFTER} calls all failed this way and none was answered" in line
    assert "agent.options.timeout" in line and "--timeout" in line  # how to give a slow model longer


def test_timeouts_stop_a_run_only_while_no_call_was_answered() -> None:
    async def calls() -> list[type]:
        seen: list[type] = []
        with failing_chat_completions(503, answer_every=1) as good, _silent_server() as silent:
            client = AsyncOpenAI(api_key="test-key", base_url=good.url, max_retries=0)
            watch = ModelServerWatch(ModelEndpoint.of("openai", client, "m"))
            await watch.call(lambda: client.chat.completions.create(model="m", messages=[]), client)
            stuck = AsyncOpenAI(api_key="test-key", base_url=silent, max_retries=0, timeout=0.05)
            for _ in range(STOP_AFTER + 1):
                try:
                    await watch.call(lambda: stuck.chat.completions.create(model="m", messages=[]), stuck)
                except ModelServerError as exc:
                    seen.append(type(exc))
            await client.close()
            await stuck.close()
        return seen

    # Answered once: a slow spell afterwards is its trials' harness failures, never a stop.
    assert asyncio.run(calls()) == [ModelServerError] * (STOP_AFTER + 1)


def test_the_timeout_of_passhat_toml_reaches_the_model_agent(retail: Sandbox) -> None:
    from passhat.collector.config import PasshatConfig
    from passhat.collector.loop import agent_spec

    scenarios = retail.scenarios("cancel_pending_order", 3)
    with _silent_server() as url:
        config = PasshatConfig.model_validate(
            {"agent": {"factory": "openai", "model": "m", "base_url": url, "options": {"timeout": 0.2}}}
        )
        factory = agent_spec(config).factory
        started = time.monotonic()
        with pytest.raises(ModelServerUnusableError, match="did not answer in time"):
            asyncio.run(run_trials(retail, scenarios, 2, factory, config=RunConfig(parallel=6)))
    assert time.monotonic() - started < 60  # 0.2 s a try: the 120 s default would take minutes


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"timeout": "soon"}, "agent.options.timeout is the seconds one request to the model server may take"),
        ({"timeout": 0}, "a number above 0; got 0"),
        ({"timeout": 30, "flaws": "off"}, r"agent.options \(flaws\) do not apply to the openai agent"),
    ],
)
def test_a_model_agents_options_take_a_positive_timeout_only(options: dict[str, object], message: str) -> None:
    from passhat.collector.config import PasshatConfig
    from passhat.collector.loop import agent_spec

    config = PasshatConfig.model_validate(
        {"agent": {"factory": "openai", "base_url": "http://127.0.0.1:9/v1", "options": options}}
    )
    with pytest.raises(ValueError, match=message):
        agent_spec(config)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bench", "--domain", "retail", "--timeout", "30"], "--timeout applies to the anthropic and openai agents"),
        (["bench", "--domain", "retail", "--agent", "openai", "--timeout", "0"], "a number above 0"),
        (["replay", "--period", "2026-W40", "--timeout", "30"], "agent.options.timeout"),
    ],
)
def test_a_timeout_nothing_would_use_is_refused_in_one_line(args: list[str], message: str) -> None:
    outcome = CliRunner().invoke(app, args, terminal_width=400)
    assert outcome.exit_code != 0, outcome.output
    assert message in _error_line(outcome.stderr)
