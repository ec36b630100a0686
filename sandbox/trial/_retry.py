"""One trial with its bounded harness retries: the unit every executor runs (local, Ray, a process pool).

A trial the harness broke (signature `infra_error` or `simulator_error`: a tool server, the agent's service,
the simulated customer) says nothing about the agent, so it is run again, with the same scenario and attempt
(the same seed), at most ``RunConfig.harness_retries`` times. The result kept is the last attempt's; why each
earlier one was lost travels with it (``TrialResult.harness_retries``) into the stored row. A trial still
broken after its retries stays an `infra_error` / `simulator_error` trial, which no estimator counts.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from passhat.checks import NOT_AGENT_FAULT
from passhat.sandbox.agents import AgentFactory
from passhat.sandbox.domain import Scenario
from passhat.sandbox.trial._database import Sandbox
from passhat.sandbox.trial._runner import RunConfig, TrialResult, run_trial


def broken_by_harness(result: TrialResult) -> bool:
    """Whether the harness, not the agent, ended this trial."""
    return result.signature is not None and result.signature.label in NOT_AGENT_FAULT


async def run_trial_with_retries(
    sandbox: Sandbox, scenario: Scenario, attempt: int, agent_factory: AgentFactory, **options: Any
) -> TrialResult:
    """`run_trial` (same arguments), run again while the harness broke it, at most ``config.harness_retries`` times.

    Each lost attempt's trace is kept (its id in ``lost_trace_ids``) and its cause, ``signature: evidence``, in
    ``harness_retries``.
    """
    config: RunConfig = options.get("config") or RunConfig()
    lost: list[str] = []
    lost_traces: list[str] = []
    while True:
        result = await run_trial(sandbox, scenario, attempt, agent_factory, **options)
        if not broken_by_harness(result) or len(lost) >= config.harness_retries:
            return dataclasses.replace(result, harness_retries=tuple(lost), lost_trace_ids=tuple(lost_traces))
        assert result.signature is not None
        lost.append(f"{result.signature.label}: {result.signature.evidence}")
        lost_traces.append(result.trace_id)
