"""Tools called in process (the trusted path, `transport="direct"`) give the trials the MCP wire gives.

Every task type of every shipped domain runs the same attempts both ways, with failure modes injected, so the
errors (a broken argument the tool's argument model rejects, a refusal, an empty lookup) are compared too: each
trial's outcome, termination, failure signature and every tool call with its outcome and error, word for word.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from passhat.sandbox import FAILURE_MODES, FlawConfig, ReferenceAgent, RunConfig, Sandbox, TrialResult, run_trials
from passhat.sandbox.domain import available_domains

DOMAINS = available_domains()


@pytest.fixture(scope="module", params=DOMAINS)
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    with Sandbox(request.param) as built:
        yield built


def _trial(result: TrialResult) -> tuple[Any, ...]:
    calls = tuple(
        (call.name, tuple(sorted(call.arguments)), call.outcome, call.error_type, call.error_message, call.is_write)
        for call in result.record.tool_calls
    )
    return (
        result.ticket_id,
        result.attempt,
        result.passed,
        result.record.termination_reason,
        result.failure_label,
        result.injected,
        result.record.transcript,
        calls,
    )


def _run(sandbox: Sandbox, transport: str, flaws: FlawConfig, k: int, count: int = 1) -> list[tuple[Any, ...]]:
    scenarios = sandbox.scenarios(count=count)
    config = RunConfig(transport=transport, parallel=8)  # type: ignore[arg-type]
    results = asyncio.run(run_trials(sandbox, scenarios, k, ReferenceAgent.factory(flaws), config=config))
    return [_trial(result) for result in results]


def test_in_process_tools_give_every_task_type_the_trials_mcp_gives(sandbox: Sandbox) -> None:
    mixture = FlawConfig.from_mixture([(0.5, 0.9), (0.5, 0.3)])
    direct, wire = _run(sandbox, "direct", mixture, 3), _run(sandbox, "memory", mixture, 3)
    assert direct == wire
    assert any(trial[2] for trial in direct) and any(not trial[2] for trial in direct)


@pytest.mark.slow
@pytest.mark.parametrize("mode", FAILURE_MODES)
def test_each_injected_failure_comes_out_the_same_in_process_and_over_mcp(sandbox: Sandbox, mode: str) -> None:
    forced = FlawConfig.forced(mode)
    direct = _run(sandbox, "direct", forced, 1, count=2)
    assert direct == _run(sandbox, "memory", forced, 1, count=2)
    assert any(trial[5] == mode for trial in direct)  # the mode was injected somewhere, so its errors compared
