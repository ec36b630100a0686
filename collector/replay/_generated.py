"""Generated scenarios (`passhat bench`) run on Ray's workers: the same trials as in process, spread out.

A generated scenario needs no production rows: each worker builds the domains' sandboxes from the same seed and
size as the driver that drew the scenarios, so scenario N is the same customer and order on every worker. Each
trial runs exactly as `run_trials` runs it in process (the scripted customer, the harness retries), and its
result comes back with the runs of it lost to a worker that died (`infra_retries`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

import passhat
from passhat.collector.reliability import is_harness_failure
from passhat.collector.replay._adapters import ReplayTicket
from passhat.collector.replay._settings import ReplaySettings
from passhat.sandbox import AgentFactory, Curtailment, Domain, Outcome, RunConfig, Scenario, TrialResult, run_curtailed


@dataclass(frozen=True)
class GeneratedTrials:
    """The trials of a generated-scenario run, and the runs of them lost to the infrastructure and run again."""

    results: list[TrialResult]
    infra_retries: int

    def __repr__(self) -> str:
        """How many trials, not every one (`asyncio.run` formats the repr of what it returns)."""
        return f"GeneratedTrials(results=<{len(self.results)} trials>, infra_retries={self.infra_retries})"


async def run_generated_on_ray(
    domains: Mapping[str, Domain],
    scenarios: Sequence[Scenario],
    k: int,
    agent: AgentFactory,
    *,
    settings: ReplaySettings,
    config: RunConfig,
    runtime: passhat.Passhat | None = None,
    curtailment: Curtailment | None = None,
    progress: Callable[[int], None] | None = None,
) -> GeneratedTrials:
    """Run k attempts of every scenario on Ray workers (``settings``: address, workers, seed and size).

    Results come in scenario × attempt order, as `run_trials` gives them; with ``curtailment`` a scenario's
    attempts stop once its pass^k and pass@k are settled.
    """
    from passhat.collector.replay._ray import RayTrials  # Ray is imported only when chosen

    executor = RayTrials(settings, domains, agent, config, runtime)
    lost = 0
    done: dict[tuple[int, int], TrialResult] = {}
    limit = asyncio.Semaphore(executor.slots)

    async def one(index: int, attempt: int) -> TrialResult:
        nonlocal lost
        scenario = scenarios[index]
        item = ReplayTicket(scenario.scenario_id, scenario.task_type, scenario.domain, scenario, ())
        async with limit:
            result, retried = await executor.run(item, attempt)
        lost += len(retried)
        done[(index, attempt)] = result
        if progress is not None:
            progress(len(done))
        return result

    def outcome_of(index: int) -> Callable[[int], Awaitable[Outcome]]:
        async def attempt(a: int) -> Outcome:
            result = await one(index, a)
            return None if is_harness_failure(result) else result.passed

        return attempt

    try:
        if curtailment is None:
            await asyncio.gather(*(one(i, a) for i in range(len(scenarios)) for a in range(k)))
        else:
            await asyncio.gather(*(run_curtailed(outcome_of(i), k, curtailment) for i in range(len(scenarios))))
    finally:
        executor.close()
    return GeneratedTrials([done[key] for key in sorted(done)], lost)
