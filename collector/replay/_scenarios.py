"""Running fixed scenarios as a stored run: each (scenario, attempt) not stored yet, on the replay's executors.

What `replay_period` does after planning, for callers whose tickets are not sampled from production traffic (the
benchmark suite's frozen tasks): the trials run in worker processes (or on Ray, or in this process when the
agent cannot be sent), under the fixed or the curtailed design, each graded trial written to the store as it
finishes, so an interrupted run resumes with the trials it lacks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import passhat
from passhat.collector.replay._adapters import ReplayTicket
from passhat.collector.replay._execute import open_executor, run_trials_of
from passhat.collector.replay._plan import trials_left
from passhat.collector.replay._pool import SandboxPool
from passhat.collector.replay._run import _TrialWriter, trial_row
from passhat.collector.replay._settings import AgentSpec, ProgressCallback, ReplaySettings
from passhat.collector.store import Store, TrialRow
from passhat.sandbox import Domain, RunConfig, Sandbox, run_trial_with_retries


async def run_tickets(
    store: Store,
    project: str,
    run_id: str,
    ready: list[ReplayTicket],
    agent: AgentSpec,
    settings: ReplaySettings,
    domains: Mapping[str, Domain],
    *,
    runtime: passhat.Passhat | None = None,
    progress: ProgressCallback | None = None,
) -> tuple[int, list[str]]:
    """Run the trials of ``ready`` that run ``run_id`` has not stored; returns (trials run, notes on how)."""
    stored = store.list_trials(project, run_id)
    todo = trials_left(ready, stored, settings.trials_per_ticket)
    pool = SandboxPool(seed=settings.seed, size=settings.size)
    writer = _TrialWriter(store, project, settings.flush_every)
    config = RunConfig(parallel=settings.parallel, run_id=run_id, harness_retries=settings.harness_retries)
    executor, notes = (None, []) if not todo else await open_executor(settings, domains, agent.factory, config, runtime)
    limit = asyncio.Semaphore(settings.parallel)
    total, finished = len(stored) + len(todo), len(stored)
    if progress is not None:
        progress(finished, total)

    async def one(attempt: int, sandbox: Sandbox, ticket: ReplayTicket) -> TrialRow:
        nonlocal finished
        lost: tuple[str, ...] = ()
        if executor is None:
            async with limit:
                result = await run_trial_with_retries(
                    sandbox, ticket.scenario, attempt, agent.factory, config=config, runtime=runtime
                )
        else:
            result, lost = await executor.run(ticket, attempt)
        row = trial_row(run_id, agent, result, infra_retries=lost)
        writer.add(row)
        finished += 1
        if progress is not None:
            progress(finished, total)
        return row

    try:
        await run_trials_of(ready, todo, stored, settings, domains, pool, one, [], executor)
    finally:
        writer.flush()
        if executor is not None:
            executor.close()
        pool.close()
    return len(writer.written), notes
