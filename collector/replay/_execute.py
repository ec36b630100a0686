"""Running a replay plan's trials: in worker processes on this machine (the default), on Ray, or in this process.

Whatever runs them, each trial is "run one trial of a ticket" (`Executor.run`, or `run_trial` in this process),
and the same design decides which: the fixed design sends every planned trial, the curtailed one a ticket's
attempts in order until it is settled.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol

import passhat
from passhat.collector.reliability import is_harness_failure
from passhat.collector.replay._adapters import ReplayTicket
from passhat.collector.replay._local import LocalTrials, profile_for
from passhat.collector.replay._pool import SandboxPool
from passhat.collector.replay._processes import NotSendableError, WorkerProcesses, default_workers, sendable
from passhat.collector.replay._row import RowSpec
from passhat.collector.replay._settings import ReplaySettings
from passhat.collector.store import NotReplayable, TrialRow
from passhat.sandbox import (
    AgentFactory,
    Curtailment,
    Domain,
    DomainError,
    Outcome,
    RunConfig,
    Sandbox,
    TrialResult,
    gather_trials,
    load_domain,
    run_curtailed,
)

logger = logging.getLogger("passhat.replay")

TrialRunner = Callable[[int, Sandbox, ReplayTicket], Awaitable[TrialRow]]
"""Runs one attempt of a ticket (from its sandbox) and returns its stored row."""


class Executor(Protocol):
    """Runs trials outside this process: worker processes here (`LocalTrials`) or Ray's workers (`RayTrials`)."""

    @property
    def slots(self) -> int: ...

    async def run(self, item: ReplayTicket, attempt: int) -> tuple[TrialResult, tuple[str, ...]]: ...

    def close(self) -> None: ...


def slots_per_worker(settings: ReplaySettings, workers: int) -> int:
    """Trials each of ``workers`` processes runs at once, for ``settings.parallel`` in all."""
    return max(1, -(-settings.parallel // workers))


class EarlyWorkers:
    """Local worker processes started before a replay plans, so they build their templates (about 0.6 s) while
    the driver chooses and reads the tickets; the replay then runs its trials on them and closes them. Started
    none (`start` found nothing to start): `ready` gives None and `close` does nothing."""

    def __init__(
        self, processes: WorkerProcesses | None = None, starting: asyncio.Task[WorkerProcesses] | None = None
    ) -> None:
        self.processes = processes
        self._starting = starting

    @classmethod
    async def start(
        cls,
        settings: ReplaySettings,
        domains: Mapping[str, Domain],
        agent: AgentFactory,
        runtime: passhat.Passhat | None,
    ) -> EarlyWorkers:
        """Start the workers the settings choose; none for trials on Ray, or an agent, a domain or trace settings
        that cannot be sent (the executor then says why, as before)."""
        if settings.executor != "local":
            return cls()
        workers = settings.workers or default_workers()
        try:
            sendable(profile_for(agent, RunConfig(), runtime))
            processes = WorkerProcesses(
                domains, workers=workers, concurrency=slots_per_worker(settings, workers),
                seed=settings.seed, size=settings.size,
            )  # fmt: skip
        except NotSendableError:
            return cls()
        starting = asyncio.ensure_future(processes.start())
        await asyncio.sleep(0)  # its first step forks the workers; they build their templates from here on
        return cls(processes, starting)

    async def ready(self) -> WorkerProcesses | None:
        """The workers once started, or None if none started or they could not (the executor then tries again
        and says why)."""
        if self._starting is None:
            return None
        try:
            return await self._starting
        except NotSendableError:
            return None

    def close(self) -> None:
        """Stop the workers (a replay that planned no trial, or has run them all); safe to call again."""
        if self._starting is not None and not self._starting.done():
            self._starting.cancel()
        if self.processes is not None:
            self.processes.close()


async def open_executor(
    settings: ReplaySettings,
    domains: Mapping[str, Domain],
    agent: AgentFactory,
    config: RunConfig,
    runtime: passhat.Passhat | None,
    processes: WorkerProcesses | None = None,
    rows: RowSpec | None = None,
) -> tuple[Executor | None, list[str]]:
    """The executor the settings choose, and notes on it; None runs the trials in this process (when the agent
    or a domain cannot be sent to a worker process: the note says why). ``rows``: local worker processes make
    each trial's stored row (`LocalTrials.run_row`)."""
    if settings.executor == "ray":
        from passhat.collector.replay._ray import RayTrials  # Ray is imported only when chosen

        return RayTrials(settings, domains, agent, config, runtime), []
    workers = processes.count if processes is not None else settings.workers or default_workers()
    try:
        local = await LocalTrials.open(
            domains, agent, config, runtime,
            workers=workers, concurrency=slots_per_worker(settings, workers),
            seed=settings.seed, size=settings.size, processes=processes, rows=rows,
        )  # fmt: skip
    except NotSendableError as exc:
        note = f"trials ran in this process, on one core: {exc}"
        logger.warning("passhat: %s", note)
        return None, [note]
    return local, []


async def run_trials_of(
    ready: list[ReplayTicket],
    todo: list[tuple[ReplayTicket, int]],
    stored: list[TrialRow],
    settings: ReplaySettings,
    domains: Mapping[str, Domain],
    pool: SandboxPool,
    one: TrialRunner,
    not_replayable: list[NotReplayable],
    executor: Executor | None,
) -> None:
    """Run the plan's trials under its design; ``one`` runs and stores each."""
    if settings.stop_early:
        width = settings.parallel if executor is None else executor.slots
        await _replay_curtailed(
            ready, stored, settings, domains, pool, one, not_replayable, width, remote=executor is not None
        )
    elif executor is None:
        for item in ready:
            attempts = [a for t, a in todo if t is item]
            if not attempts:
                continue
            sandbox = _sandbox_for(item, domains, pool, not_replayable)
            if sandbox is None:
                continue
            try:
                await gather_trials([one(a, sandbox, item) for a in attempts])
            finally:
                pool.release(sandbox)
    else:
        await _replay_remote(ready, todo, domains, pool, one, not_replayable)


async def _replay_curtailed(
    ready: list[ReplayTicket],
    stored: list[TrialRow],
    settings: ReplaySettings,
    domains: Mapping[str, Domain],
    pool: SandboxPool,
    one: TrialRunner,
    not_replayable: list[NotReplayable],
    width: int,
    *,
    remote: bool,
) -> None:
    """Replay tickets under the curtailed design, ``width`` tickets at a time (each one's attempts in order);
    ``remote``: the trials run elsewhere, which derives each ticket's sandbox."""
    known: dict[str, dict[int, Outcome]] = {}
    for row in stored:
        known.setdefault(row.ticket_id, {})[row.attempt] = _outcome(row)
    curtailment = Curtailment(min_trials=settings.min_trials)

    async def ticket(item: ReplayTicket) -> None:
        sandbox = _sandbox_for(item, domains, pool, not_replayable, checked_only=remote)
        if sandbox is None:
            return

        async def attempt(a: int) -> Outcome:
            return _outcome(await one(a, sandbox, item))

        try:
            await run_curtailed(attempt, settings.k, curtailment, known=known.get(item.ticket_id))
        finally:
            pool.release(sandbox)

    # Attempts after the first min_trials run one at a time, so tickets run side by side to keep the workers busy.
    for start in range(0, len(ready), width):
        await gather_trials([ticket(item) for item in ready[start : start + width]])


async def _replay_remote(
    ready: list[ReplayTicket],
    todo: list[tuple[ReplayTicket, int]],
    domains: Mapping[str, Domain],
    pool: SandboxPool,
    one: TrialRunner,
    not_replayable: list[NotReplayable],
) -> None:
    """The fixed design on workers: every ticket's trials queued at once, the workers' free slots taking them.

    Whether a ticket's rows fit its sandbox is settled here first (the workers lay the same rows over the same
    template), so an unfit ticket is noted exactly as a local replay notes it and never sent."""
    attempts: dict[str, list[int]] = {}
    for item, attempt in todo:
        attempts.setdefault(item.ticket_id, []).append(attempt)
    sent: list[Awaitable[TrialRow]] = []
    for item in ready:
        if item.ticket_id not in attempts:
            continue
        sandbox = _sandbox_for(item, domains, pool, not_replayable, checked_only=True)
        if sandbox is None:
            continue
        sent.extend(one(a, sandbox, item) for a in attempts[item.ticket_id])
    await asyncio.gather(*sent)


def _sandbox_for(
    item: ReplayTicket,
    domains: Mapping[str, Domain],
    pool: SandboxPool,
    not_replayable: list[NotReplayable],
    *,
    checked_only: bool = False,
) -> Sandbox | None:
    """The sandbox a ticket's trials start from, or None (and the ticket noted) when its rows do not fit.

    ``checked_only``: the trials run elsewhere (worker processes, Ray), which derive the ticket's sandbox
    themselves; here the rows are only checked to fit, and the domain's base sandbox is returned."""
    domain = domains.get(item.domain) or load_domain(item.domain)
    try:
        if checked_only:
            return pool.check_ticket(domain, item.images)
        return pool.for_ticket(domain, item.images)
    except DomainError as exc:  # the captured rows do not fit the sandbox's tables
        not_replayable.append(
            NotReplayable(
                item.ticket_id,
                item.task_type,
                f"its captured rows cannot be laid over the {domain.name} sandbox: {exc}",
                "make the sandbox domain's tables match the production schema the agent writes to",
            )
        )
        return None


def _outcome(row: TrialRow) -> Outcome:
    return None if is_harness_failure(row) else row.passed
