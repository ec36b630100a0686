"""Running a run's trials and keeping each: the shared execution of a replay run (`replay_period`) and of fixed
tickets such as the benchmark suite's frozen tasks (`run_tickets`).

Each (ticket, attempt) the run has not stored yet runs in worker processes (or on Ray, or in this process when the
agent cannot be sent), under the fixed or the curtailed design; each graded trial is written to the store as it
finishes (in batches), so an interrupted run resumes with the trials it lacks.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Iterator, Mapping, Sequence

import passhat
from passhat.collector.replay._adapters import ReplayTicket
from passhat.collector.replay._execute import open_executor, run_trials_of
from passhat.collector.replay._local import LocalTrials
from passhat.collector.replay._plan import trials_left
from passhat.collector.replay._pool import SandboxPool
from passhat.collector.replay._processes import WorkerProcesses
from passhat.collector.replay._row import RowSpec, row_of
from passhat.collector.replay._settings import AgentSpec, ProgressCallback, ReplaySettings
from passhat.collector.store import NotReplayable, Store, TrialRow
from passhat.sandbox import Domain, RunConfig, Sandbox, TrialResult, check_model_servers, run_trial_with_retries


def trial_row(run_id: str, agent: AgentSpec, result: TrialResult, *, infra_retries: Sequence[str] = ()) -> TrialRow:
    """The stored form of a graded trial: its row, the check verdict, and its details as the replayed agent.

    ``infra_retries`` say why earlier attempts of this trial were lost to the infrastructure (a worker died); the
    row records them after the harness retries the result carries (`run_trial_with_retries`)."""
    return row_of(spec_of(run_id, agent), result, infra_retries=infra_retries)


def spec_of(run_id: str, agent: AgentSpec) -> RowSpec:
    """What a trial's row records of its run and agent."""
    return RowSpec(run_id, agent.label, agent.version, agent.simulated)


_frozen = 0  # replays of this process inside `heap_frozen`


@contextlib.contextmanager
def heap_frozen() -> Iterator[None]:
    """While trials run, the collector leaves the heap built before them alone (`gc.freeze`).

    The driver only receives and writes rows then, yet each full collection walked everything the process held
    (modules, domains, templates, the plan): about a third of a second, once or more per replay, a good share of
    the driver's CPU. Objects made before the trials that become garbage meanwhile wait for the end of the last
    replay running in this process, which hands them back to the collector (`gc.unfreeze`)."""
    global _frozen
    if _frozen == 0:
        gc.freeze()
    _frozen += 1
    try:
        yield
    finally:
        _frozen -= 1
        if _frozen == 0:
            gc.unfreeze()


def freeze_kept() -> None:
    """Inside `heap_frozen`: what the process holds now (the rows a replay keeps to return, stored already) joins
    the frozen heap, so the collections while the rest of the trials run do not walk it again and again (a
    sixth of the driver's CPU at 3,750 trials: four full collections, 49 of the middle generation)."""
    if _frozen:
        gc.freeze()


class _TrialWriter:
    """Buffers finished trials and writes them in batches, so a crash loses at most one batch in flight."""

    def __init__(self, store: Store, project: str, flush_every: int) -> None:
        self.store, self.project, self.flush_every = store, project, flush_every
        self.pending: list[TrialRow] = []
        self.written: list[TrialRow] = []
        self._last = time.monotonic()

    def add(self, row: TrialRow) -> None:
        self.pending.append(row)
        if len(self.pending) >= self.flush_every or time.monotonic() - self._last > 2.0:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            self.store.add_trials(self.project, self.pending)
            self.written.extend(self.pending)
            self.pending = []
            freeze_kept()
        self._last = time.monotonic()


async def run_stored_trials(
    store: Store,
    project: str,
    run_id: str,
    ready: list[ReplayTicket],
    agent: AgentSpec,
    settings: ReplaySettings,
    domains: Mapping[str, Domain],
    pool: SandboxPool,
    *,
    runtime: passhat.Passhat | None = None,
    progress: ProgressCallback | None = None,
    not_replayable: list[NotReplayable] | None = None,
    processes: WorkerProcesses | None = None,
) -> tuple[list[TrialRow], list[TrialRow], list[str]]:
    """Run the trials of ``ready`` that run ``run_id`` has not stored; returns (the trials found stored, the
    trials written here, notes on how they ran). Tickets whose sandbox cannot be built join ``not_replayable``."""
    stored = store.list_trials(project, run_id)
    todo = trials_left(ready, stored, settings.trials_per_ticket)
    writer = _TrialWriter(store, project, settings.flush_every)
    config = RunConfig(parallel=settings.parallel, run_id=run_id, harness_retries=settings.harness_retries)
    spec = spec_of(run_id, agent)
    if todo:  # a model agent's server that cannot be reached stops the run before any trial
        await check_model_servers(agent.factory)
    executor, notes = (None, []) if not todo else await open_executor(
        settings, domains, agent.factory, config, runtime, processes, rows=spec
    )  # fmt: skip
    limit = asyncio.Semaphore(settings.parallel)
    # Under the curtailed design the total is an upper bound: tickets settle early, and the bar jumps.
    total, finished = len(stored) + len(todo), len(stored)
    if progress is not None:
        progress(finished, total)

    async def one(attempt: int, sandbox: Sandbox, ticket: ReplayTicket) -> TrialRow:
        nonlocal finished
        if executor is None:
            async with limit:
                result = await run_trial_with_retries(
                    sandbox, ticket.scenario, attempt, agent.factory, config=config, runtime=runtime
                )
            row = row_of(spec, result)
        elif isinstance(executor, LocalTrials):  # a worker runs it on its own copy of the template, makes its row
            row = await executor.run_row(ticket, attempt)
        else:  # on Ray
            result, lost = await executor.run(ticket, attempt)
            row = row_of(spec, result, infra_retries=lost)
        writer.add(row)
        finished += 1
        if progress is not None:
            progress(finished, total)
        return row

    skipped = not_replayable if not_replayable is not None else []
    try:
        with heap_frozen():
            await run_trials_of(ready, todo, stored, settings, domains, pool, one, skipped, executor)
    finally:
        writer.flush()
        if executor is not None:
            executor.close()
    return stored, writer.written, notes


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
    """Run the trials of fixed tickets (not sampled from production traffic) that run ``run_id`` has not stored;
    returns (trials run, notes on how)."""
    pool = SandboxPool(seed=settings.seed, size=settings.size)
    try:
        _, written, notes = await run_stored_trials(
            store, project, run_id, ready, agent, settings, domains, pool, runtime=runtime, progress=progress
        )
    finally:
        pool.close()
    return len(written), notes
